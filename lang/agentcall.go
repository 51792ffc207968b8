package lang

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

var agentActionSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "prompt", Required: true},
		{Name: "vars"},
		{Name: "budget"},
		{Name: "model"},
		{Name: "session"},
		{Name: "optional"},
		{Name: "fallback"},
		{Name: "fallback_on"},
	},
}

// DefaultFallbackOn are the error kinds that send a call to the next
// fallback agent when the action does not list them: the agent could not
// be reached, or would not take more calls now.
var DefaultFallbackOn = []string{"unavailable", "rate_limited"}

// AgentCall asks an agent: the prompt (a prompt block or an inline
// template) is rendered with Vars and sent through the agent's driver.
type AgentCall struct {
	Agent *Agent
	// Prompt is the prompt block used, or nil for an inline template.
	Prompt   *Prompt
	Template hcl.Expression // the template to render
	Vars     hcl.Expression // object; may be nil
	Budget   *Budget        // the step's budget, else the agent's; may be nil
	// Model is the model the call asks for when it is known at load: the
	// action's constant model, else the agent's; "" for the driver's own.
	Model string
	// ModelExpr, when set, computes the model at each call (e.g. from item
	// or vars); Model is then "". It gives a string, checked against the
	// driver's model setting by checkAgentModels.
	ModelExpr hcl.Expression
	// Session, when set, names the agent session the call continues
	// (steps.X.session_id); evaluated at call time, a string. Nil: each
	// attempt starts a new session.
	Session hcl.Expression
	// Optional names the values the prompt may render empty: the prompt
	// block's optional and the action's own.
	Optional []hcl.Traversal
	// Fallback are the agents asked in turn, with the same prompt and
	// returns, when the call fails with an error kind in FallbackOn. Each
	// uses its own model and driver, and starts its own session.
	Fallback   []*Agent
	FallbackOn []string
	DeclRange  hcl.Range
}

// Agents are the agents the call may ask: its own, then its fallbacks.
func (a *AgentCall) Agents() []*Agent {
	return append([]*Agent{a.Agent}, a.Fallback...)
}

// WithAgent is the call made with another agent, as a fallback: the
// agent's own model and budget (unless the step named one), and no
// session of the first agent's.
func (a *AgentCall) WithAgent(ag *Agent) *AgentCall {
	c := *a
	c.Agent, c.Model, c.ModelExpr, c.Session, c.Fallback = ag, ag.Model, nil, nil, nil
	return &c
}

func (*AgentCall) action()            {}
func (a *AgentCall) Range() hcl.Range { return a.DeclRange }

func (a *AgentCall) String() string {
	s := "agent " + a.Agent.Name
	if a.Prompt != nil {
		s += " prompt=" + a.Prompt.Name
	}
	if a.Budget != nil {
		s += " budget=" + a.Budget.Name
	}
	for i, fb := range a.Fallback {
		if i == 0 {
			s += " fallback="
		} else {
			s += ","
		}
		s += fb.Name
	}
	return s
}

func (l *loader) decodeAgentActionBlock(s *Step, b *hcl.Block) (Action, hcl.Diagnostics) {
	name := b.Labels[0]
	content, diags := b.Body.Content(agentActionSchema)
	ag := l.pb.Agents[name]
	if ag == nil {
		diags = append(diags, errDiag("Reference to undeclared agent",
			fmt.Sprintf("Step %q uses agent %q, but no agent block has that name.%s", s.Name, name, didYouMean(name, slices.Sorted(maps.Keys(l.pb.Agents)))), b.LabelRanges[0]))
		ag = &Agent{Name: name, Type: name}
	}
	l.used["agent."+name] = true
	call := &AgentCall{Agent: ag, Model: ag.Model, DeclRange: b.DefRange}
	if ag.Budget != "" {
		call.Budget = l.pb.Budgets[ag.Budget]
	}
	if a := content.Attributes["prompt"]; a != nil {
		if tr, d := hcl.AbsTraversalForExpr(a.Expr); !d.HasErrors() && tr.RootName() == "prompt" {
			names := attrNames(tr[1:])
			if len(names) != 1 || len(tr) != 2 {
				diags = append(diags, errDiag("Invalid prompt reference", "Refer to a prompt block as prompt.NAME.", a.Expr.Range()))
			} else if p := l.pb.Prompts[names[0]]; p == nil {
				diags = append(diags, errDiag("Reference to undeclared prompt",
					fmt.Sprintf("There is no prompt named %q.%s", names[0], didYouMean(names[0], slices.Sorted(maps.Keys(l.pb.Prompts)))), a.Expr.Range()))
			} else {
				call.Prompt, call.Template = p, p.Template
				call.Optional = append(call.Optional, p.Optional...)
				l.used["prompt."+p.Name] = true
			}
		} else {
			tmpl, d := l.templateExpr(a.Expr)
			diags = append(diags, d...)
			call.Template = tmpl
			l.deferRefs(tmpl, refScope{vars: true, body: s.Parent, step: s, action: true, what: "a prompt"})
		}
	}
	if a := content.Attributes["optional"]; a != nil && call.Template != nil {
		opt, d := l.decodeOptional(a, call.Template, refScope{vars: true, body: s.Parent, step: s, action: true, what: "a prompt's optional"})
		diags = append(diags, d...)
		call.Optional = append(call.Optional, opt...)
	}
	if a := content.Attributes["vars"]; a != nil {
		call.Vars = a.Expr
		l.deferRefs(a.Expr, refScope{vars: true, body: s.Parent, step: s, action: true, what: "agent vars"})
	}
	if a := content.Attributes["budget"]; a != nil {
		v, rng, d := refName(a, "budget")
		diags = append(diags, d...)
		if bg := l.pb.Budgets[v]; bg != nil {
			call.Budget = bg
			l.used["budget."+v] = true
		} else if v != "" {
			diags = append(diags, errDiag("Reference to undeclared budget",
				fmt.Sprintf("There is no budget named %q.%s", v, didYouMean(v, slices.Sorted(maps.Keys(l.pb.Budgets)))), rng))
		}
	}
	if a := content.Attributes["model"]; a != nil {
		if len(a.Expr.Variables()) > 0 {
			call.Model, call.ModelExpr = "", a.Expr
			l.deferRefs(a.Expr, refScope{body: s.Parent, step: s, action: true, what: "an agent's model"})
		} else {
			v, d := constString(a)
			diags = append(diags, d...)
			call.Model = v
		}
	}
	if a := content.Attributes["session"]; a != nil {
		call.Session = a.Expr
		l.deferRefs(a.Expr, refScope{body: s.Parent, step: s, action: true, what: "an agent's session"})
	}
	diags = append(diags, l.decodeFallback(s, call, content)...)
	return call, diags
}

// decodeFallback reads an agent action's fallback agents and the error
// kinds that send a call to them.
func (l *loader) decodeFallback(s *Step, call *AgentCall, content *hcl.BodyContent) hcl.Diagnostics {
	var diags hcl.Diagnostics
	a := content.Attributes["fallback"]
	on := content.Attributes["fallback_on"]
	if a == nil {
		if on != nil {
			diags = append(diags, errDiag("fallback_on without fallback",
				"fallback_on lists the error kinds that send the call to a fallback agent; name the agents with fallback = [\"other_agent\"].", on.NameRange))
		}
		return diags
	}
	names, d := constStrings(a)
	diags = append(diags, d...)
	seen := map[string]bool{call.Agent.Name: true}
	for _, name := range names {
		ag := l.pb.Agents[name]
		switch {
		case ag == nil:
			diags = append(diags, errDiag("Reference to undeclared agent",
				fmt.Sprintf("Step %q falls back to agent %q, but no agent block has that name.%s", s.Name, name, didYouMean(name, slices.Sorted(maps.Keys(l.pb.Agents)))), a.Expr.Range()))
		case seen[name]:
			diags = append(diags, errDiag("Repeated fallback agent",
				fmt.Sprintf("Step %q already asks agent %q; a fallback is another agent.", s.Name, name), a.Expr.Range()))
		default:
			l.used["agent."+name] = true
			call.Fallback = append(call.Fallback, ag)
		}
		seen[name] = true
	}
	call.FallbackOn = DefaultFallbackOn
	if on != nil {
		kinds, d := decodeErrorKinds(on)
		diags = append(diags, d...)
		if slices.Contains(kinds, "interrupted") {
			diags = append(diags, errDiag("Invalid fallback_on",
				"An interrupted run stops; it does not fall back to another agent.", on.Expr.Range()))
		}
		call.FallbackOn = kinds
	}
	return diags
}

// checkAgentModels checks that every computed model gives what the
// agent's driver takes as its model setting (a string), as far as the
// expression's type is known before the run; ctx gives each step's
// typed unknowns.
func (l *loader) checkAgentModels(ctx func(s *Step) *hcl.EvalContext, bad map[hcl.Expression]bool) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, s := range l.pb.AllSteps() {
		a, ok := s.Action.(*AgentCall)
		if !ok || a.ModelExpr == nil || bad[a.ModelExpr] {
			continue
		}
		v, d := a.ModelExpr.Value(ctx(s))
		if d.HasErrors() {
			continue // typeCheckExpr reported it
		}
		want := cty.String
		dtype := l.driverType(a.Agent)
		if l.drivers != nil && dtype != "" {
			if t, ok := l.drivers.Settings(dtype)["model"]; ok {
				want = t
			}
		}
		if v.Type() == cty.DynamicPseudoType {
			continue
		}
		cv, err := convert.Convert(v, want)
		if err == nil && !cv.IsNull() && cv.IsWhollyKnown() && l.drivers != nil && dtype != "" {
			err = l.drivers.Check(dtype, "model", cv)
		}
		if err != nil || v.IsKnown() && v.IsNull() {
			why := "it gives " + typeString(v.Type())
			if err != nil && v.Type() == want {
				why = err.Error()
			} else if err == nil {
				why = "it gives null"
			}
			diags = append(diags, errDiag("Invalid model",
				fmt.Sprintf("The model of agent %q in step %q must give a %s, the model's name; %s.", a.Agent.Name, s.Name, typeString(want), why), a.ModelExpr.Range()))
		}
	}
	return diags
}

// driverType is the driver type an agent's calls go through: its driver
// block's type, or the built-in type it names; "" when it names none.
func (l *loader) driverType(ag *Agent) string {
	if dr := l.pb.Drivers[ag.Driver]; dr != nil {
		return dr.Type
	}
	return ag.Driver
}

// checkSessions checks that every agent action's session gives a string,
// as far as its type is known before the run: steps.X.session_id, a
// string input or output field, a template.
func (l *loader) checkSessions() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, s := range l.pb.AllSteps() {
		a, ok := s.Action.(*AgentCall)
		if !ok || a.Session == nil {
			continue
		}
		t, what := l.sessionType(a.Session, Scope{Body: s.Parent, Step: s})
		if t == cty.NilType || t == cty.String || t == cty.DynamicPseudoType {
			continue
		}
		example := "steps.NAME.session_id"
		if parts := strings.Split(what, "."); len(parts) > 1 && parts[0] == RootSteps {
			example = "steps." + parts[1] + ".session_id"
		}
		diags = append(diags, errDiag("Invalid session",
			fmt.Sprintf("session must give a string, the id of the session to continue, such as %s; %s is %s.",
				example, what, typeString(t)), a.Session.Range()))
	}
	return diags
}

// sessionType is the type a session expression gives, and what to call it
// in a message; cty.NilType when that is not known before the run.
func (l *loader) sessionType(expr hcl.Expression, sc Scope) (cty.Type, string) {
	switch e := expr.(type) {
	case *hclsyntax.TemplateExpr:
		return cty.String, "a template"
	case *hclsyntax.LiteralValueExpr:
		if e.Val.IsNull() {
			return cty.NilType, ""
		}
		return e.Val.Type(), "the value"
	case *hclsyntax.ObjectConsExpr:
		return cty.DynamicPseudoType, ""
	}
	tr, d := hcl.AbsTraversalForExpr(expr)
	if d.HasErrors() {
		return cty.NilType, ""
	}
	attrs := attrNames(tr[1:])
	if len(attrs) != len(tr)-1 {
		return cty.NilType, "" // an index: not known here
	}
	what := tr.RootName()
	for _, a := range attrs {
		what += "." + a
	}
	if t := l.pathType(sc, append([]string{tr.RootName()}, attrs...)); t != cty.NilType {
		return t, what
	}
	return cty.NilType, ""
}
