package lang

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
)

var agentActionSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "prompt", Required: true},
		{Name: "vars"},
		{Name: "budget"},
		{Name: "model"},
	},
}

// AgentCall asks an agent: the prompt (a prompt block or an inline
// template) is rendered with Vars and sent through the agent's driver.
type AgentCall struct {
	Agent *Agent
	// Prompt is the prompt block used, or nil for an inline template.
	Prompt    *Prompt
	Template  hcl.Expression // the template to render
	Vars      hcl.Expression // object; may be nil
	Budget    *Budget        // the step's budget, else the agent's; may be nil
	Model     string
	DeclRange hcl.Range
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
				l.used["prompt."+p.Name] = true
			}
		} else {
			tmpl, d := l.templateExpr(a.Expr)
			diags = append(diags, d...)
			call.Template = tmpl
			l.deferRefs(tmpl, refScope{vars: true, body: s.Parent, what: "a prompt"})
		}
	}
	if a := content.Attributes["vars"]; a != nil {
		call.Vars = a.Expr
		l.deferRefs(a.Expr, refScope{vars: true, body: s.Parent, what: "agent vars"})
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
		v, d := constString(a)
		diags = append(diags, d...)
		call.Model = v
	}
	return call, diags
}
