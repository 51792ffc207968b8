package interp

import (
	"fmt"
	"sync"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// DefaultDrivers is the DriverFactory a run uses when Options.Drivers is
// nil: each agent is served from its driver block or preset, or, when
// agentCmd is set, by that command. Drivers are made on first use and
// shared by the agents that name the same driver. Callers wrap it to
// decorate the drivers (apl run --record wraps them in cassettes).
func DefaultDrivers(pb *lang.Playbook, agentCmd []string) DriverFactory {
	return defaultDrivers(pb, agentCmd)
}

// defaultDrivers serves each agent from its driver block or preset; with
// an agent command set, every agent goes to that command instead.
func defaultDrivers(pb *lang.Playbook, agentCmd []string) DriverFactory {
	var mu sync.Mutex
	cache := map[string]agent.Driver{}
	return func(a *lang.Agent) (agent.Driver, error) {
		mu.Lock()
		defer mu.Unlock()
		key := a.Driver
		if len(agentCmd) > 0 {
			key = "\x00agent-cmd"
		}
		if d, ok := cache[key]; ok {
			return d, nil
		}
		cfg, err := driverConfig(pb, a, agentCmd)
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

func driverConfig(pb *lang.Playbook, a *lang.Agent, agentCmd []string) (agent.Config, error) {
	if len(agentCmd) > 0 {
		return agent.Config{Type: agent.TypeCommand, Command: agentCmd}, nil
	}
	if a.Driver == "" {
		return agent.Config{}, fmt.Errorf("no driver: set driver in the agent block, or run with --agent-cmd")
	}
	dr := pb.Drivers[a.Driver]
	if dr == nil {
		// A preset named directly: driver = "claude-code".
		return agent.Config{Type: a.Driver}, nil
	}
	return DriverConfig(dr)
}

// DriverConfig converts a driver block's settings to the agent package's
// Config.
func DriverConfig(dr *lang.Driver) (agent.Config, error) {
	cfg := agent.Config{Type: dr.Type}
	for name, v := range dr.Config {
		var err error
		switch name {
		case "command":
			cfg.Command, err = stringList(v)
		case "input":
			cfg.Input, err = toString(v)
		case "output":
			cfg.Output, err = toString(v)
		case "fields":
			cfg.Fields, err = stringMap(v)
		case "env":
			cfg.Env, err = stringMap(v)
		case "model":
			cfg.Model, err = toString(v)
		case "base_url":
			cfg.BaseURL, err = toString(v)
		case "api_key_env":
			cfg.APIKeyEnv, err = toString(v)
		case "max_tokens":
			cfg.MaxTokens, err = toInt(v)
		case "timeout":
			var d string
			if d, err = toString(v); err == nil {
				cfg.Timeout, err = time.ParseDuration(d)
			}
		case "retries":
			cfg.Retry.Max, err = toInt(v)
		case "prices":
			cfg.Prices, err = prices(v)
		case "options":
			o, ok := goValue(v).(map[string]any)
			if !ok {
				err = fmt.Errorf("want an object")
			}
			cfg.Options = o
		default:
			err = fmt.Errorf("unknown setting")
		}
		if err != nil {
			return cfg, fmt.Errorf("driver %q: %s: %w", dr.Name, name, err)
		}
	}
	return cfg, nil
}

// prices reads { "model" = { input = 3, output = 15 } } in USD per
// million tokens.
func prices(v cty.Value) (map[string]agent.Price, error) {
	m, ok := goValue(v).(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want an object of models")
	}
	out := map[string]agent.Price{}
	for model, pv := range m {
		pm, ok := pv.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want { input = N, output = N }", model)
		}
		var p agent.Price
		for k, x := range pm {
			f, ok := x.(float64)
			if !ok {
				return nil, fmt.Errorf("%s.%s: want a number", model, k)
			}
			switch k {
			case "input":
				p.InputPerMTok = f
			case "output":
				p.OutputPerMTok = f
			case "cache_read":
				p.CacheReadPerMTok = f
			case "cache_write":
				p.CacheWritePerMTok = f
			default:
				return nil, fmt.Errorf("%s: unknown price %q (input, output, cache_read, cache_write)", model, k)
			}
		}
		out[model] = p
	}
	return out, nil
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

func toInt(v cty.Value) (int, error) {
	if v.IsNull() || v.Type() != cty.Number || !v.AsBigFloat().IsInt() {
		return 0, fmt.Errorf("want a whole number")
	}
	i, _ := v.AsBigFloat().Int64()
	return int(i), nil
}
