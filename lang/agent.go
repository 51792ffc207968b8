package lang

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
)

var agentSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "driver"},
		{Name: "model"},
		{Name: "budget"},
		{Name: "system"},
		{Name: "description"},
	},
}

// Agent is an agent profile: who a step's agent action talks to.
type Agent struct {
	Name   string
	Type   string // e.g. "gsd-planner"; APL_AGENT
	Driver string // a driver block name, or "" for the run's default
	// DriverDef is the driver block Driver names, in the agent's own
	// playbook; nil for a built-in driver type named directly.
	DriverDef   *Driver
	Model       string
	Budget      string
	System      string
	Description string
	DeclRange   hcl.Range
}

// decodeAgentBlock reads an agent profile.
func (l *loader) decodeAgentBlock(b *hcl.Block) hcl.Diagnostics {
	diags := validName("agent", b)
	name := b.Labels[0]
	if prev := l.pb.Agents[name]; prev != nil {
		return append(diags, duplicate("agent", name, prev.DeclRange, b))
	}
	ag := &Agent{Name: name, Type: name, DeclRange: b.DefRange}
	l.pb.Agents[name] = ag
	content, d := b.Body.Content(agentSchema)
	diags = append(diags, d...)
	for _, f := range []struct {
		name string
		dst  *string
	}{{"type", &ag.Type}, {"model", &ag.Model}, {"system", &ag.System}, {"description", &ag.Description}} {
		if a := content.Attributes[f.name]; a != nil {
			v, d := constString(a)
			diags = append(diags, d...)
			*f.dst = v
		}
	}
	if a := content.Attributes["driver"]; a != nil {
		v, rng, d := refName(a, "driver")
		diags = append(diags, d...)
		ag.Driver, ag.DriverDef = v, l.pb.Drivers[v]
		if v != "" && l.pb.Drivers[v] == nil && l.drivers != nil && !slices.Contains(l.drivers.Types(), v) {
			types := l.drivers.Types()
			names := append(slices.Sorted(maps.Keys(l.pb.Drivers)), types...)
			diags = append(diags, errDiag("Unknown driver",
				fmt.Sprintf("Agent %q uses driver %q, which is neither a driver block nor a built-in driver (%v).%s", name, v, types, didYouMean(v, names)), rng))
		}
		l.used["driver."+v] = true
	}
	if a := content.Attributes["budget"]; a != nil {
		v, rng, d := refName(a, "budget")
		diags = append(diags, d...)
		if v != "" && l.pb.Budgets[v] == nil {
			diags = append(diags, errDiag("Reference to undeclared budget",
				fmt.Sprintf("There is no budget named %q.%s", v, didYouMean(v, slices.Sorted(maps.Keys(l.pb.Budgets)))), rng))
		}
		ag.Budget = v
		l.used["budget."+v] = true
	}
	return diags
}
