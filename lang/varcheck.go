package lang

import (
	"fmt"
	"slices"
	"sort"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// varNames are the names a playbook gives vars: var blocks declare run
// vars, gates' set assigns them, and an agent action's vars adds names its
// prompt sees.
type varNames struct {
	declared []string
	set      []string
	agent    []string
	// open and agentOpen are set when some set or agent vars is not an
	// object with constant keys, so that any name may exist.
	open, agentOpen bool
}

// collectVarNames reads every gate's set and every agent action's vars.
func (l *loader) collectVarNames() *varNames {
	v := &varNames{}
	add := func(e hcl.Expression, dst *[]string, open *bool) {
		if e == nil {
			return
		}
		pairs, d := hcl.ExprMap(e)
		if d.HasErrors() {
			*open = true
			return
		}
		for _, p := range pairs {
			k, d := p.Key.Value(nil)
			if d.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
				*open = true
				continue
			}
			*dst = append(*dst, k.AsString())
		}
	}
	var outcome func(o *Outcome)
	outcome = func(o *Outcome) {
		if o != nil {
			add(o.Set, &v.set, &v.open)
			add(o.Append, &v.set, &v.open)
			outcome(o.Exhausted)
		}
	}
	for _, dv := range l.pb.Vars {
		v.declared = append(v.declared, dv.Name)
	}
	for _, s := range l.pb.AllSteps() {
		if g := s.Gate; g != nil {
			for _, r := range g.Rules {
				outcome(r.Outcome)
			}
			if g.Otherwise != nil {
				outcome(g.Otherwise.Outcome)
			}
		}
		if a, ok := s.Action.(*AgentCall); ok {
			add(a.Vars, &v.agent, &v.agentOpen)
		}
	}
	sort.Strings(v.set)
	sort.Strings(v.agent)
	v.set, v.agent = slices.Compact(v.set), slices.Compact(v.agent)
	return v
}

// unset says why vars.NAME is never set, or "" when something may set it.
// A prompt also sees the names of agent actions' vars.
func (v *varNames) unset(name string, prompt bool) string {
	if v.open || prompt && v.agentOpen || slices.Contains(v.declared, name) {
		return ""
	}
	names := append(slices.Clone(v.declared), v.set...)
	where := fmt.Sprintf("no var block declares %q and no gate's set assigns it", name)
	if prompt {
		names = append(names, v.agent...)
		where += " and no agent action's vars gives it"
	}
	if slices.Contains(names, name) {
		return ""
	}
	return fmt.Sprintf("Nothing sets vars.%s: %s, so reading it fails (a condition reads it as nil).%s", name, where, didYouMean(name, names))
}

// checkVarTraversals reports vars.NAME in an HCL expression that nothing
// sets.
func (l *loader) checkVarTraversals(e hcl.Expression, scope refScope, v *varNames) hcl.Diagnostics {
	prompt := scope.vars && scope.what != "agent vars"
	var diags hcl.Diagnostics
	for _, tr := range l.traversals(e) {
		if tr.RootName() != RootVars {
			continue
		}
		attrs := attrNames(tr[1:])
		if len(attrs) == 0 {
			continue
		}
		if msg := v.unset(attrs[0], prompt); msg != "" {
			diags = append(diags, errDiag("Var never set", msg, tr.SourceRange()))
		}
	}
	return diags
}
