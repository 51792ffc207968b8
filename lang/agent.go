package lang

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// DriverTypes are the kinds of driver a driver block may declare; an agent
// may also name one of them directly as its driver.
var DriverTypes = []string{"command", "claude-code", "codex", "gemini", "openai", "anthropic"}

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
		ag.Driver = v
		if v != "" && l.pb.Drivers[v] == nil && !slices.Contains(DriverTypes, v) {
			names := append(slices.Sorted(maps.Keys(l.pb.Drivers)), DriverTypes...)
			diags = append(diags, errDiag("Unknown driver",
				fmt.Sprintf("Agent %q uses driver %q, which is neither a driver block nor a built-in driver (%v).%s", name, v, DriverTypes, didYouMean(v, names)), rng))
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

// DriverSettings are the attributes a driver block may set besides type;
// spec/language.md, "driver", says what each means.
var DriverSettings = []string{"command", "input", "output", "fields", "env", "model", "base_url",
	"api_key_env", "max_tokens", "options", "timeout", "prices", "retries"}

// decodeDriverBlock reads a driver: its type and constant settings, which
// the interpreter hands to the agent package.
func (l *loader) decodeDriverBlock(b *hcl.Block) hcl.Diagnostics {
	diags := validName("driver", b)
	name := b.Labels[0]
	if prev := l.pb.Drivers[name]; prev != nil {
		return append(diags, duplicate("driver", name, prev.DeclRange, b))
	}
	dr := &Driver{Name: name, Config: map[string]cty.Value{}, DeclRange: b.DefRange}
	l.pb.Drivers[name] = dr
	attrs, d := b.Body.JustAttributes()
	diags = append(diags, d...)
	for an, a := range attrs {
		v, d := constValue(a)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		if an != "type" && !slices.Contains(DriverSettings, an) {
			diags = append(diags, errDiag("Unsupported argument",
				fmt.Sprintf("A driver block has no setting %q.%s", an, didYouMean(an, DriverSettings)), a.NameRange))
			continue
		}
		if an == "type" {
			if v.Type() != cty.String || v.IsNull() {
				diags = append(diags, errDiag("Invalid driver type", "type must be a string.", a.Expr.Range()))
				continue
			}
			dr.Type = v.AsString()
			if !slices.Contains(DriverTypes, dr.Type) {
				diags = append(diags, errDiag("Unknown driver type",
					fmt.Sprintf("Driver type %q is not one of %v.%s", dr.Type, DriverTypes, didYouMean(dr.Type, DriverTypes)), a.Expr.Range()))
			}
			continue
		}
		dr.Config[an] = v
	}
	if dr.Type == "" && attrs["type"] == nil {
		diags = append(diags, errDiag("Missing driver type",
			fmt.Sprintf("Driver %q needs a type, one of %v.", name, DriverTypes), b.DefRange))
	}
	return diags
}
