package lang

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

var stepHeaderSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "returns"}, {Name: "for_each"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "step", LabelNames: []string{"name"}}},
}

var onFailureSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{{Type: "step", LabelNames: []string{"name"}}},
}

// declareStep registers a step's name and returns type, and those of the
// steps nested in it; bodies are decoded once every step is known
// (decodeStepBody).
func (l *loader) declareStep(b *hcl.Block, parent *Step, onFailure bool) hcl.Diagnostics {
	diags := validName("step", b)
	name := b.Labels[0]
	if prev := l.pb.steps[name]; prev != nil {
		return append(diags, duplicate("step", name, prev.DeclRange, b))
	}
	s := &Step{Name: name, Returns: cty.NilType, OnFailure: onFailure, Parent: parent, DeclRange: b.DefRange}
	content, _, d := b.Body.PartialContent(stepHeaderSchema)
	diags = append(diags, d...)
	if a := content.Attributes["returns"]; a != nil {
		t, d := decodeType(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			s.Returns = t
		}
	}
	switch {
	case parent != nil:
		s.Index = len(parent.ForEach.Steps)
		parent.ForEach.Steps = append(parent.ForEach.Steps, s)
	case onFailure:
		s.Index = len(l.pb.OnFailure)
		l.pb.OnFailure = append(l.pb.OnFailure, s)
	default:
		s.Index = len(l.pb.Steps)
		l.pb.Steps = append(l.pb.Steps, s)
	}
	l.pb.steps[name] = s
	l.stepBlocks[s] = b
	if content.Attributes["for_each"] != nil {
		if parent != nil {
			diags = append(diags, errDiag("Nested for_each",
				fmt.Sprintf("Step %q is inside for_each step %q; a for_each body cannot hold another for_each.", name, parent.Name), content.Attributes["for_each"].NameRange))
		}
		s.ForEach = &ForEach{Concurrency: 1, ItemType: cty.DynamicPseudoType}
		if s.Returns != cty.NilType {
			diags = append(diags, errDiag("returns on a for_each step",
				"A for_each step's output is fixed (items, completed, failed, blocked); declare returns on its nested steps.", content.Attributes["returns"].NameRange))
			s.Returns = cty.NilType
		}
	}
	for _, nb := range content.Blocks {
		if s.ForEach == nil {
			diags = append(diags, errDiag("Nested step without for_each",
				fmt.Sprintf("Step %q holds step %q, but only a for_each step has nested steps (run once per item).", name, nb.Labels[0]), nb.DefRange))
			continue
		}
		if s.ForEach != nil && parent == nil {
			diags = append(diags, l.declareStep(nb, s, onFailure)...)
		}
	}
	if s.ForEach != nil {
		s.Returns = forEachOutputType
		if len(s.ForEach.Steps) == 0 && parent == nil {
			diags = append(diags, errDiag("Empty for_each",
				fmt.Sprintf("for_each step %q has no nested steps to run per item.", name), b.DefRange))
		}
	}
	return diags
}

// forEachOutputType is the output of every for_each step.
var forEachOutputType = cty.Object(map[string]cty.Type{
	"items":      cty.Map(cty.Object(map[string]cty.Type{"key": cty.String, "status": cty.String, "error": cty.String, "outputs": cty.DynamicPseudoType})),
	"completed":  cty.Number,
	"failed":     cty.Number,
	"blocked":    cty.Number,
	"deadlocked": cty.List(cty.String),
})

func (l *loader) declareOnFailure(b *hcl.Block) hcl.Diagnostics {
	content, diags := b.Body.Content(onFailureSchema)
	for _, sb := range content.Blocks {
		diags = append(diags, l.declareStep(sb, nil, true)...)
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
		l.deferRefs(a.Expr, refScope{body: s.Parent, what: "a skip reason"})
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
	if a := content.Attributes["serial"]; a != nil {
		v, d := constBool(a)
		diags = append(diags, d...)
		s.Serial = v
		if s.Parent == nil && v {
			diags = append(diags, warnDiag("serial outside for_each",
				"serial makes items of a for_each take turns at this step; outside a for_each body steps run one at a time anyway.", a.NameRange))
		}
	}
	if a := content.Attributes["max_tokens"]; a != nil {
		v, d := constPositiveInt(a)
		diags = append(diags, d...)
		s.MaxTokens = v
	}
	if a := content.Attributes["max_cost_usd"]; a != nil {
		v, d := constPositiveFloat(a)
		diags = append(diags, d...)
		s.MaxCostUSD = v
	}
	if a := content.Attributes["progress_when"]; a != nil {
		c, d := l.decodeCondition(a, env)
		diags = append(diags, d...)
		s.ProgressWhen = c
		l.noteConditionRefs(c)
	}
	forEachAttrs := []string{"for_each", "key", "depends_on", "priority", "concurrency"}
	if s.ForEach != nil {
		diags = append(diags, l.decodeForEach(s, content, env)...)
	} else {
		for _, name := range forEachAttrs[1:] {
			if a := content.Attributes[name]; a != nil {
				diags = append(diags, errDiag("for_each attribute without for_each",
					fmt.Sprintf("%s only applies to a for_each step.", name), a.NameRange))
			}
		}
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
	checks := map[string]bool{}
	for _, ab := range content.Blocks {
		switch ab.Type {
		case "step":
			// Declared with the step; decoded on its own.
		case "limit":
			if s.ForEach == nil {
				diags = append(diags, errDiag("limit without for_each", "A limit caps items of a for_each step running at once.", ab.DefRange))
			}
		case "retry":
			if s.Retry != nil {
				diags = append(diags, errDiag("Duplicate retry", fmt.Sprintf("Step %q already has a retry block.", s.Name), ab.DefRange))
				continue
			}
			r, d := decodeRetryBlock(ab)
			diags = append(diags, d...)
			s.Retry = r
		case "check":
			if checks[ab.Labels[0]] {
				diags = append(diags, errDiag("Duplicate check", fmt.Sprintf("Step %q already has a check named %q.", s.Name, ab.Labels[0]), ab.LabelRanges[0]))
			}
			checks[ab.Labels[0]] = true
			c, d := l.decodeCheckBlock(s, ab, env)
			diags = append(diags, d...)
			s.Checks = append(s.Checks, c)
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
			if s.ForEach != nil {
				diags = append(diags, errDiag("Action on a for_each step",
					fmt.Sprintf("for_each step %q runs its nested steps per item; put the %s action in a nested step.", s.Name, ab.Type), ab.DefRange))
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

func decodeRetryBlock(b *hcl.Block) (*Retry, hcl.Diagnostics) {
	content, diags := b.Body.Content(retrySchema)
	r := &Retry{}
	if a := content.Attributes["max"]; a != nil {
		n, d := constPositiveInt(a)
		diags = append(diags, d...)
		r.Max = n
	}
	if a := content.Attributes["backoff"]; a != nil {
		dur, d := constDuration(a)
		diags = append(diags, d...)
		r.Backoff = dur
	}
	return r, diags
}

// decodeCheckBlock reads a check on the step's output: the condition sees
// the output as steps.NAME.output, like any condition.
func (l *loader) decodeCheckBlock(s *Step, b *hcl.Block, env *condEnv) (*Check, hcl.Diagnostics) {
	content, diags := b.Body.Content(checkSchema)
	c := &Check{Name: b.Labels[0], OnFail: "retry", Max: 1, DeclRange: b.DefRange}
	if a := content.Attributes["condition"]; a != nil {
		cond, d := l.decodeCondition(a, env)
		diags = append(diags, d...)
		c.Condition = cond
		l.noteConditionRefs(cond)
	}
	if a := content.Attributes["message"]; a != nil {
		c.Message = a.Expr
		l.deferRefs(a.Expr, refScope{body: s.Parent, what: "a check message"})
	}
	if a := content.Attributes["on_fail"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		if !d.HasErrors() && v != "retry" && v != "fail" {
			diags = append(diags, errDiag("Invalid on_fail", fmt.Sprintf(`on_fail is "retry" (run the step again) or "fail", not %q.`, v), a.Expr.Range()))
		}
		c.OnFail = v
	}
	if a := content.Attributes["max"]; a != nil {
		n, d := constPositiveInt(a)
		diags = append(diags, d...)
		c.Max = n
	}
	return c, diags
}

// target resolves a step name used by `next` or `goto`; targets stay in
// their section (main steps or on_failure).
func (l *loader) target(from *Step, name string, rng hcl.Range) (*Step, hcl.Diagnostics) {
	t := l.pb.steps[name]
	if t == nil {
		return nil, hcl.Diagnostics{errDiag("Reference to undeclared step",
			fmt.Sprintf("There is no step named %q.%s", name, didYouMean(name, l.stepNames())), rng)}
	}
	if t.OnFailure != from.OnFailure || t.Parent != from.Parent {
		return nil, hcl.Diagnostics{errDiag("Jump across sections",
			fmt.Sprintf("Step %q cannot go to %q: a step only goes to steps of its own section (the main steps, on_failure, or the same for_each body).", from.Name, name), rng)}
	}
	return t, nil
}

func (l *loader) decodeAction(s *Step, b *hcl.Block) (Action, hcl.Diagnostics) {
	switch b.Type {
	case "shell":
		return l.decodeShellBlock(s, b)
	case "agent":
		return l.decodeAgentActionBlock(s, b)
	case "call":
		return l.decodeCallBlock(s, b)
	case "ask":
		return l.decodeAskBlock(s, b)
	case "playbook":
		return l.decodeSubPlaybookBlock(s, b)
	}
	return nil, hcl.Diagnostics{errDiag("Unknown action", fmt.Sprintf("%q is not an action.", b.Type), b.DefRange)}
}

func (l *loader) decodeShellBlock(s *Step, b *hcl.Block) (Action, hcl.Diagnostics) {
	content, diags := b.Body.Content(shellSchema)
	sh := &Shell{Parse: "text", DeclRange: b.DefRange}
	scope := refScope{body: s.Parent, what: "a shell action"}
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
		diags = append(diags, l.checkScriptQuoting(script.Expr)...)
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
	if msg := parseGives(sh.Parse, s.Returns); msg != "" {
		diags = append(diags, errDiag("returns does not match parse",
			fmt.Sprintf("Step %q returns %s, but %s, so the step could never succeed. %s", s.Name, typeString(s.Returns), msg,
				`Use parse = "json" for objects, numbers and bools.`), b.DefRange))
	}
	return sh, diags
}

// checkScriptQuoting reports an interpolation in a script template that
// lands where no quoting is safe (inside backticks, say), which would fail
// at run time. Both branches of a %{ if } and one round of a %{ for } are
// read in order, as the text they would add.
func (l *loader) checkScriptQuoting(e hcl.Expression) hcl.Diagnostics {
	if l.checkScript == nil {
		return nil
	}
	literals := []string{""}
	var values []hcl.Range
	var walk func(e hcl.Expression)
	walk = func(e hcl.Expression) {
		switch e := e.(type) {
		case *hclsyntax.TemplateExpr:
			for _, p := range e.Parts {
				walk(p)
			}
			return
		case *hclsyntax.LiteralValueExpr:
			if e.Val.Type() == cty.String && !e.Val.IsNull() {
				literals[len(literals)-1] += e.Val.AsString()
				return
			}
		case *hclsyntax.TemplateWrapExpr:
			walk(e.Wrapped)
			return
		case *hclsyntax.ConditionalExpr:
			if _, ok := e.TrueResult.(*hclsyntax.TemplateExpr); ok {
				walk(e.TrueResult)
				walk(e.FalseResult)
				return
			}
		case *hclsyntax.TemplateJoinExpr:
			if f, ok := e.Tuple.(*hclsyntax.ForExpr); ok {
				walk(f.ValExpr)
				return
			}
		}
		values = append(values, e.Range())
		literals = append(literals, "")
	}
	walk(e)
	i, err := l.checkScript(literals)
	if err == nil || i < 0 || i >= len(values) {
		return nil
	}
	return hcl.Diagnostics{errDiag("Unsafe interpolation in script", sentence(err.Error()), values[i])}
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
	if a := content.Attributes["session"]; a != nil {
		call.Session = a.Expr
		l.deferRefs(a.Expr, refScope{body: s.Parent, what: "an agent's session"})
	}
	return call, diags
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
		t, what := l.sessionType(a.Session, s.Parent)
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
func (l *loader) sessionType(expr hcl.Expression, body *Step) (cty.Type, string) {
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
	var t cty.Type
	switch tr.RootName() {
	case RootSteps:
		if len(attrs) == 0 {
			return cty.EmptyObject, what
		}
		st := l.stepByName(attrs[0])
		if st == nil || (st.Parent != nil && st.Parent != body) {
			return cty.NilType, "" // reported by the reference check
		}
		if len(attrs) == 1 {
			return cty.EmptyObject, what
		}
		if f, ok := StepFields[attrs[1]]; ok {
			return f.Type, what
		}
		if attrs[1] != "output" {
			return cty.NilType, ""
		}
		t, attrs = st.Returns, attrs[2:]
		if t == cty.NilType {
			// An agent's or a shell's text.
			t = cty.DynamicPseudoType
		}
	case RootInputs:
		if len(attrs) == 0 {
			return cty.EmptyObject, what
		}
		in := l.pb.inputs[attrs[0]]
		if in == nil {
			return cty.NilType, ""
		}
		t, attrs = in.Type, attrs[1:]
	case RootRun:
		if len(attrs) == 0 {
			return cty.EmptyObject, what
		}
		if f, ok := RunFields[attrs[0]]; ok {
			return f.Type, what
		}
		return cty.NilType, ""
	default:
		return cty.NilType, ""
	}
	for _, a := range attrs {
		if !t.IsObjectType() || !t.HasAttribute(a) {
			return cty.NilType, ""
		}
		t = t.AttributeType(a)
	}
	return t, what
}

func (l *loader) decodeCallBlock(s *Step, b *hcl.Block) (Action, hcl.Diagnostics) {
	c := &Call{Builtin: b.Labels[0], DeclRange: b.DefRange}
	attrs, diags := b.Body.JustAttributes()
	if l.builtins != nil && !slices.Contains(l.builtins, c.Builtin) {
		diags = append(diags, errDiag("Unknown builtin",
			fmt.Sprintf("There is no builtin named %q.%s", c.Builtin, didYouMean(c.Builtin, l.builtins)), b.LabelRanges[0]))
	}
	for _, a := range sortedAttrs(attrs) {
		c.Args = append(c.Args, &NamedExpr{Name: a.Name, Expr: a.Expr, Range: a.Range})
		l.deferRefs(a.Expr, refScope{body: s.Parent, what: "a builtin call"})
	}
	return c, diags
}

// parseGives says why a shell action's parse mode cannot give the returns
// type, or "" when it can.
func parseGives(parse string, returns cty.Type) string {
	if returns == cty.NilType || returns == cty.DynamicPseudoType {
		return ""
	}
	switch parse {
	case "text", "":
		if returns != cty.String {
			return `parse = "text" gives a string`
		}
	case "lines":
		if !(returns.IsListType() || returns.IsSetType()) || !(returns.ElementType() == cty.String || returns.ElementType() == cty.DynamicPseudoType) {
			return `parse = "lines" gives a list of strings`
		}
	}
	return ""
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
