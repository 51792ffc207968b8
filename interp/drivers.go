package interp

import (
	"fmt"
	"sync"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
)

// DefaultDrivers is the DriverFactory a run uses when Options.Drivers is
// nil: each agent is served from its driver block or preset, or, when
// agentCmd is set, by that command. Drivers are made on first use and
// shared by the agents that name the same driver block or preset. A
// sub-playbook's agents are served from their own playbook's driver
// blocks. Callers wrap it to decorate the drivers (apl run --record wraps
// them in cassettes).
func DefaultDrivers(agentCmd []string) DriverFactory {
	return defaultDrivers(agentCmd)
}

// defaultDrivers serves each agent from its driver block or preset; with
// an agent command set, every agent goes to that command instead.
func defaultDrivers(agentCmd []string) DriverFactory {
	var mu sync.Mutex
	cache := map[any]agent.Driver{}
	return func(a *lang.Agent) (agent.Driver, error) {
		mu.Lock()
		defer mu.Unlock()
		// Driver blocks by identity (two playbooks may each have a block
		// of the same name), presets by name.
		var key any = a.Driver
		switch {
		case len(agentCmd) > 0:
			key = "\x00agent-cmd"
		case a.DriverDef != nil:
			key = a.DriverDef
		}
		if d, ok := cache[key]; ok {
			return d, nil
		}
		cfg, err := driverConfig(a, agentCmd)
		if err != nil {
			return nil, err
		}
		d, err := agent.New(cfg)
		if err != nil {
			return nil, err
		}
		cache[key] = d
		return d, nil
	}
}

func driverConfig(a *lang.Agent, agentCmd []string) (agent.Config, error) {
	if len(agentCmd) > 0 {
		return agent.Config{Type: agent.TypeCommand, Command: agentCmd}, nil
	}
	if a.Driver == "" {
		return agent.Config{}, fmt.Errorf("no driver: set driver in the agent block, or run with --agent-cmd")
	}
	dr := a.DriverDef
	if dr == nil {
		// A preset named directly: driver = "claude-code".
		return agent.Config{Type: a.Driver}, nil
	}
	return DriverConfig(dr)
}

// DriverConfig converts a driver block's settings to the agent package's
// Config, as the agent package reads them (agent.ConfigFrom).
func DriverConfig(dr *lang.Driver) (agent.Config, error) {
	cfg, err := agent.ConfigFrom(dr.Type, dr.Config)
	if err != nil {
		return cfg, fmt.Errorf("driver %q: %w", dr.Name, err)
	}
	return cfg, nil
}

// keyVars are the environment variables a playbook's drivers read their
// API keys from (api_key_env): their values are secrets whatever their
// names.
func keyVars(pb *lang.Playbook) []string {
	var names []string
	for _, dr := range pb.Drivers {
		if v, ok := dr.Config["api_key_env"]; ok {
			if s, err := toString(v); err == nil {
				names = append(names, s)
			}
		}
	}
	return names
}

// AgentConfig is the driver configuration an agent profile's calls go
// to, as DefaultDrivers makes it: agentCmd when set, else the agent's
// driver block or preset. An engine's workers make the driver from it.
func AgentConfig(a *lang.Agent, agentCmd []string) (agent.Config, error) {
	return driverConfig(a, agentCmd)
}
