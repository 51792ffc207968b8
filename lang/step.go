package lang

import (
	"fmt"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

var stepHeaderSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "returns"}},
}

var onFailureSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{{Type: "step", LabelNames: []string{"name"}}},
}

// declareStep registers a step's name and returns type; its body is
// decoded once every step is known (decodeStepBody).
func (l *loader) declareStep(b *hcl.Block, onFailure bool) hcl.Diagnostics {
	diags := validName("step", b)
	name := b.Labels[0]
	if prev := l.pb.steps[name]; prev != nil {
		return append(diags, duplicate("step", name, prev.DeclRange, b))
	}
	s := &Step{Name: name, Returns: cty.NilType, OnFailure: onFailure, DeclRange: b.DefRange}
	content, _, d := b.Body.PartialContent(stepHeaderSchema)
	diags = append(diags, d...)
	if a := content.Attributes["returns"]; a != nil {
		t, d := decodeType(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			s.Returns = t
		}
	}
	if onFailure {
		s.Index = len(l.pb.OnFailure)
		l.pb.OnFailure = append(l.pb.OnFailure, s)
	} else {
		s.Index = len(l.pb.Steps)
		l.pb.Steps = append(l.pb.Steps, s)
	}
	l.pb.steps[name] = s
	l.stepBlocks[s] = b
	return diags
}

func (l *loader) declareOnFailure(b *hcl.Block) hcl.Diagnostics {
	content, diags := b.Body.Content(onFailureSchema)
	for _, sb := range content.Blocks {
		diags = append(diags, l.declareStep(sb, true)...)
	}
	return diags
}

// decodeStepBody decodes a declared step's attributes, its action and its
// gate.
func (l *loader) decodeStepBody(s *Step, b *hcl.Block, env *condEnv) hcl.Diagnostics {
	content, diags := b.Body.Content(stepSchema)
	if a := content.Attributes["description"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		s.Description = v
	}
	if a := content.Attributes["progress"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		s.Progress = v
	}
	if a := content.Attributes["when"]; a != nil {
		c, d := l.decodeCondition(a, env)
		diags = append(diags, d...)
		s.When = c
		l.noteConditionRefs(c)
	}
	if a := content.Attributes["skip_reason"]; a != nil {
		s.SkipReason = a.Expr
		l.deferRefs(a.Expr, refScope{what: "a skip reason"})
	}
	if a := content.Attributes["timeout"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			dur, err := time.ParseDuration(v)
			if err != nil || dur <= 0 {
				diags = append(diags, errDiag("Invalid timeout",
					fmt.Sprintf("timeout must be a positive duration such as \"90s\" or \"10m\", not %q.", v), a.Expr.Range()))
			}
			s.Timeout = dur
		}
	}
	if a := content.Attributes["continue_on_error"]; a != nil {
		v, d := constBool(a)
		diags = append(diags, d...)
		s.ContinueOnError = v
	}
	if a := content.Attributes["next"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			t, d := l.target(s, v, a.Expr.Range())
			diags = append(diags, d...)
			s.Next = t
			l.explicitNext[s] = a.Expr.Range()
		}
	}

	var action *hcl.Block
	for _, ab := range content.Blocks {
		switch ab.Type {
		case "gate":
			if s.Gate != nil {
				diags = append(diags, errDiag("Duplicate gate", fmt.Sprintf("Step %q already has a gate; a step has at most one.", s.Name), ab.DefRange))
				continue
			}
			g, d := l.decodeGateBlock(s, ab, env)
			diags = append(diags, d...)
			s.Gate = g
		default:
			if action != nil {
				diags = append(diags, errDiag("More than one action",
					fmt.Sprintf("Step %q already has a %s action at %s; a step has at most one action. Split it into two steps.", s.Name, action.Type, action.DefRange), ab.DefRange))
				continue
			}
			action = ab
			a, d := l.decodeAction(s, ab)
			diags = append(diags, d...)
			s.Action = a
		}
	}
	return diags
}

// target resolves a step name used by `next` or `goto`; targets stay in
// their section (main steps or on_failure).
func (l *loader) target(from *Step, name string, rng hcl.Range) (*Step, hcl.Diagnostics) {
	t := l.pb.steps[name]
	if t == nil {
		return nil, hcl.Diagnostics{errDiag("Reference to undeclared step",
			fmt.Sprintf("There is no step named %q.%s", name, didYouMean(name, l.stepNames())), rng)}
	}
	if t.OnFailure != from.OnFailure {
		return nil, hcl.Diagnostics{errDiag("Jump across sections",
			fmt.Sprintf("Step %q cannot go to %q: main steps and on_failure steps only go to steps of their own section.", from.Name, name), rng)}
	}
	return t, nil
}

func (l *loader) decodeAction(s *Step, b *hcl.Block) (Action, hcl.Diagnostics) {
	switch b.Type {
	case "shell":
		return l.decodeShellBlock(b)
	case "agent":
		return l.decodeAgentActionBlock(s, b)
	case "call":
		return l.decodeCallBlock(b)
	}
	return nil, hcl.Diagnostics{errDiag("Unknown action", fmt.Sprintf("%q is not an action.", b.Type), b.DefRange)}
}

func (l *loader) decodeShellBlock(b *hcl.Block) (Action, hcl.Diagnostics) {
	content, diags := b.Body.Content(shellSchema)
	sh := &Shell{Parse: "text", DeclRange: b.DefRange}
	scope := refScope{what: "a shell action"}
	cmd, script := content.Attributes["command"], content.Attributes["script"]
	switch {
	case cmd != nil && script != nil:
		diags = append(diags, errDiag("Conflicting shell attributes",
			"A shell action has either command (an argv list, run without a shell) or script (run with bash), not both.", script.NameRange))
	case cmd == nil && script == nil:
		diags = append(diags, errDiag("Missing shell command",
			`A shell action needs command = ["prog", "arg"] or script = "...".`, b.DefRange))
	case cmd != nil:
		sh.Command = cmd.Expr
		if _, ok := cmd.Expr.(*hclsyntax.TemplateExpr); ok {
			diags = append(diags, errDiag("Command must be a list",
				`command is an argv list such as ["git", "status", "--short"]; use script = "..." for a shell line.`, cmd.Expr.Range()))
		}
	default:
		sh.Script = script.Expr
	}
	if a := content.Attributes["parse"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		if !d.HasErrors() && v != "text" && v != "lines" && v != "json" {
			diags = append(diags, errDiag("Invalid parse",
				fmt.Sprintf(`parse is "text", "lines" or "json", not %q.`, v), a.Expr.Range()))
		}
		sh.Parse = v
	}
	for name, dst := range map[string]*hcl.Expression{"dir": &sh.Dir, "env": &sh.Env, "stdin": &sh.Stdin} {
		if a := content.Attributes[name]; a != nil {
			*dst = a.Expr
		}
	}
	for _, e := range []hcl.Expression{sh.Command, sh.Script, sh.Dir, sh.Env, sh.Stdin} {
		l.deferRefs(e, scope)
	}
	return sh, diags
}

func (l *loader) decodeAgentActionBlock(s *Step, b *hcl.Block) (Action, hcl.Diagnostics) {
	name := b.Labels[0]
	content, diags := b.Body.Content(agentActionSchema)
	ag := l.pb.Agents[name]
	if ag == nil {
		diags = append(diags, errDiag("Reference to undeclared agent",
			fmt.Sprintf("Step %q uses agent %q, but no agent block has that name.%s", s.Name, name, didYouMean(name, mapKeys(l.pb.Agents))), b.LabelRanges[0]))
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
					fmt.Sprintf("There is no prompt named %q.%s", names[0], didYouMean(names[0], mapKeys(l.pb.Prompts))), a.Expr.Range()))
			} else {
				call.Prompt, call.Template = p, p.Template
				l.used["prompt."+p.Name] = true
			}
		} else {
			tmpl, d := l.templateExpr(a.Expr)
			diags = append(diags, d...)
			call.Template = tmpl
			l.deferRefs(tmpl, refScope{vars: true, what: "a prompt"})
		}
	}
	if a := content.Attributes["vars"]; a != nil {
		call.Vars = a.Expr
		l.deferRefs(a.Expr, refScope{vars: true, what: "agent vars"})
	}
	if a := content.Attributes["budget"]; a != nil {
		v, rng, d := refName(a, "budget")
		diags = append(diags, d...)
		if bg := l.pb.Budgets[v]; bg != nil {
			call.Budget = bg
			l.used["budget."+v] = true
		} else if v != "" {
			diags = append(diags, errDiag("Reference to undeclared budget",
				fmt.Sprintf("There is no budget named %q.%s", v, didYouMean(v, mapKeys(l.pb.Budgets))), rng))
		}
	}
	if a := content.Attributes["model"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		call.Model = v
	}
	return call, diags
}

func (l *loader) decodeCallBlock(b *hcl.Block) (Action, hcl.Diagnostics) {
	c := &Call{Builtin: b.Labels[0], DeclRange: b.DefRange}
	attrs, diags := b.Body.JustAttributes()
	if l.builtins != nil && !contains(l.builtins, c.Builtin) {
		diags = append(diags, errDiag("Unknown builtin",
			fmt.Sprintf("There is no builtin named %q.%s", c.Builtin, didYouMean(c.Builtin, l.builtins)), b.LabelRanges[0]))
	}
	for _, a := range sortedAttrs(attrs) {
		c.Args = append(c.Args, &NamedExpr{Name: a.Name, Expr: a.Expr, Range: a.Range})
		l.deferRefs(a.Expr, refScope{what: "a builtin call"})
	}
	return c, diags
}

// sortedAttrs returns attributes in source order.
func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Range.Start.Byte < out[j-1].Range.Start.Byte; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
