package lang

import (
	"fmt"
	"slices"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var expectSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "status", Required: true},
		{Name: "recommendation"},
		{Name: "path"},
		{Name: "visits"},
		{Name: "items"},
		{Name: "agents"},
		{Name: "output"},
	},
}

// Expect is what a test's run must end with. Fields left zero are not
// checked; Path is checked when it is non-nil, even empty.
type Expect struct {
	Status         string
	Recommendation string
	// Path is the exact ordered list of steps started.
	Path []string
	// Visits counts how many times each listed step started.
	Visits map[string]int
	// Items is, for each listed for_each item key, the exact ordered list
	// of nested steps started for it: an item's own path, which does not
	// depend on how items running at once interleave.
	Items map[string][]string
	// Agents is, for each listed agent step, the agent its last call
	// asked (steps.STEP.agent): its own, or the fallback it fell back to.
	Agents map[string]string
	// Output holds fields of the run's output object that must equal these.
	Output    map[string]cty.Value
	DeclRange hcl.Range
}

func (d *testDecoder) decodeExpect(b *hcl.Block) (*Expect, hcl.Diagnostics) {
	e := &Expect{DeclRange: b.DefRange}
	content, diags := b.Body.Content(expectSchema)
	if a := content.Attributes["status"]; a != nil {
		v, sd := constString(a)
		diags = append(diags, sd...)
		if !sd.HasErrors() && v == "" {
			diags = append(diags, errDiag("Empty status",
				`The expected status is the run's final status, e.g. "completed" or "failed".`, a.Expr.Range()))
		}
		e.Status = v
	}
	if a := content.Attributes["recommendation"]; a != nil {
		v, rd := constString(a)
		diags = append(diags, rd...)
		e.Recommendation = v
	}
	if a := content.Attributes["path"]; a != nil {
		items, ld := hcl.ExprList(a.Expr)
		if ld.HasErrors() {
			diags = append(diags, errDiag("Invalid expected path",
				`path is the list of steps the run starts, in order, e.g. path = ["plan", "check", "execute"].`, a.Expr.Range()))
		} else {
			e.Path = []string{}
			for _, it := range items {
				name, nd := d.stepName(it, "path", false)
				diags = append(diags, nd...)
				if !nd.HasErrors() {
					e.Path = append(e.Path, name)
				}
			}
		}
	}
	if a := content.Attributes["visits"]; a != nil {
		items, md := hcl.ExprMap(a.Expr)
		if md.HasErrors() {
			diags = append(diags, errDiag("Invalid expected visits",
				`visits maps steps to how many times they start, e.g. visits = { debug = 2 }.`, a.Expr.Range()))
		} else {
			e.Visits = map[string]int{}
			for _, it := range items {
				name, nd := d.stepName(it.Key, "visits", true)
				diags = append(diags, nd...)
				n, vd := constExpr(it.Value, "an expected visit count")
				diags = append(diags, vd...)
				if nd.HasErrors() || vd.HasErrors() {
					continue
				}
				if n.Type() != cty.Number || n.IsNull() || !n.AsBigFloat().IsInt() || n.AsBigFloat().Sign() < 0 {
					diags = append(diags, errDiag("Invalid expected visits",
						fmt.Sprintf("The visit count of %q must be a whole number, 0 or more.", name), it.Value.Range()))
					continue
				}
				c, _ := n.AsBigFloat().Int64()
				e.Visits[name] = int(c)
			}
		}
	}
	if a := content.Attributes["items"]; a != nil {
		diags = append(diags, d.decodeExpectItems(e, a)...)
	}
	if a := content.Attributes["agents"]; a != nil {
		diags = append(diags, d.decodeExpectAgents(e, a)...)
	}
	if a := content.Attributes["output"]; a != nil {
		diags = append(diags, d.decodeExpectOutput(e, a)...)
	}
	return e, diags
}

func (d *testDecoder) decodeExpectItems(e *Expect, a *hcl.Attribute) hcl.Diagnostics {
	bad := errDiag("Invalid expected items",
		`items maps for_each item keys to the steps each item starts, in order, e.g. items = { T1 = ["implement", "review"] }.`, a.Expr.Range())
	pairs, diags := hcl.ExprMap(a.Expr)
	if diags.HasErrors() {
		return hcl.Diagnostics{bad}
	}
	e.Items = map[string][]string{}
	for _, p := range pairs {
		key, ok := itemKey(p.Key, true)
		list, ld := hcl.ExprList(p.Value)
		if !ok || ld.HasErrors() {
			bad.Subject = p.Key.Range().Ptr()
			return append(diags, bad)
		}
		e.Items[key] = []string{}
		for _, it := range list {
			name, nd := d.stepName(it, "items."+key, false)
			diags = append(diags, nd...)
			if !nd.HasErrors() {
				if s := d.pb.Step(name); s.Parent == nil {
					diags = append(diags, errDiag("Not a step of an item",
						fmt.Sprintf("Step %q is not in a for_each body: items lists the nested steps an item starts; main steps go in path or visits.", name), it.Range()))
					continue
				}
				e.Items[key] = append(e.Items[key], name)
			}
		}
	}
	return diags
}

func (d *testDecoder) decodeExpectAgents(e *Expect, a *hcl.Attribute) hcl.Diagnostics {
	pairs, diags := hcl.ExprMap(a.Expr)
	if diags.HasErrors() {
		return hcl.Diagnostics{errDiag("Invalid expected agents",
			`agents maps agent steps to the agent their last call asked, e.g. agents = { debug = "gsd_debugger" }.`, a.Expr.Range())}
	}
	e.Agents = map[string]string{}
	for _, p := range pairs {
		name, nd := d.stepName(p.Key, "agents", true)
		diags = append(diags, nd...)
		v, vd := constExpr(p.Value, "an expected agent")
		diags = append(diags, vd...)
		if nd.HasErrors() || vd.HasErrors() {
			continue
		}
		call, ok := d.pb.Step(name).Action.(*AgentCall)
		if !ok {
			diags = append(diags, errDiag("Not an agent step",
				fmt.Sprintf("Step %q asks no agent, so agents cannot say which one it asked.", name), p.Key.Range()))
			continue
		}
		var names []string
		for _, ag := range call.Agents() {
			names = append(names, ag.Name)
		}
		if v.IsNull() || v.Type() != cty.String || !slices.Contains(names, v.AsString()) {
			diags = append(diags, errDiag("Not an agent of the step",
				fmt.Sprintf("Step %q asks %s; the expected agent is one of them.%s", name, quoteJoin(names), didYouMean(stringOr(v), names)), p.Value.Range()))
			continue
		}
		e.Agents[name] = v.AsString()
	}
	return diags
}

// stringOr is v's string, or "" when v is not a known string.
func stringOr(v cty.Value) string {
	if v.IsNull() || !v.IsKnown() || v.Type() != cty.String {
		return ""
	}
	return v.AsString()
}

func (d *testDecoder) decodeExpectOutput(e *Expect, a *hcl.Attribute) hcl.Diagnostics {
	if d.pb.Output == nil {
		return hcl.Diagnostics{errDiag("Playbook has no output",
			"The playbook declares no output block, so there is no output to expect.", a.NameRange)}
	}
	items, md := hcl.ExprMap(a.Expr)
	if md.HasErrors() {
		return hcl.Diagnostics{errDiag("Invalid expected output",
			`output holds fields of the run's output that must match, e.g. output = { alignment_score = 9.2 }.`, a.Expr.Range())}
	}
	var fields []string
	for _, o := range d.pb.Output.Attrs {
		fields = append(fields, o.Name)
	}
	sort.Strings(fields)
	var diags hcl.Diagnostics
	e.Output = map[string]cty.Value{}
	for _, it := range items {
		key, ok := itemKey(it.Key, true)
		if !ok {
			diags = append(diags, errDiag("Invalid expected output", "Each key must be a field of the output block.", it.Key.Range()))
			continue
		}
		if i := sort.SearchStrings(fields, key); i == len(fields) || fields[i] != key {
			diags = append(diags, errDiag("Unknown output field",
				fmt.Sprintf("The output block has no field %q.%s", key, didYouMean(key, fields)), it.Key.Range()))
			continue
		}
		v, vd := constExpr(it.Value, "an expected output")
		diags = append(diags, vd...)
		if !vd.HasErrors() {
			e.Output[key] = v
		}
	}
	return diags
}
