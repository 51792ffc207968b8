package lang

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The answer contract: an agent knows only the prompt it is sent, so every
// field a step's returns requires must be named there (in a JSON example,
// a list of fields, or prose). checkContracts warns about each required
// field that no literal text of the prompt names. It is a warning, not an
// error, because naming a field is evidence, not proof: a prompt may carry
// its contract in a value it interpolates, which no check before the run
// can read.

// AnswerField is one field of a step's answer, as its returns type declares it.
type AnswerField struct {
	// Path names the field from the answer's top: "scorecard[].score" for
	// the score of each element of the list scorecard.
	Path string
	// Name is the field's own name, the last part of Path.
	Name     string
	Type     cty.Type
	Optional bool
}

// AnswerFields lists the fields of an answer of type t, depth first in name
// order: each object attribute, and the attributes of objects nested in
// it, through lists, sets, maps and tuples. The fields under an optional
// field are listed as optional too, since an answer may leave out the
// whole of it.
func AnswerFields(t cty.Type) []AnswerField {
	var out []AnswerField
	collectFields(t, "", false, &out)
	return out
}

func collectFields(t cty.Type, prefix string, optional bool, out *[]AnswerField) {
	switch {
	case t == cty.NilType:
		return
	case t.IsObjectType():
		names := make([]string, 0, len(t.AttributeTypes()))
		for n := range t.AttributeTypes() {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			at := t.AttributeType(n)
			opt := optional || t.AttributeOptional(n)
			p := n
			if prefix != "" {
				p = prefix + "." + n
			}
			*out = append(*out, AnswerField{Path: p, Name: n, Type: at, Optional: opt})
			collectFields(at, p, opt, out)
		}
	case t.IsListType() || t.IsSetType():
		collectFields(t.ElementType(), prefix+"[]", optional, out)
	case t.IsMapType():
		collectFields(t.ElementType(), prefix+"[*]", optional, out)
	case t.IsTupleType():
		for i, et := range t.TupleElementTypes() {
			collectFields(et, fmt.Sprintf("%s[%d]", prefix, i), optional, out)
		}
	}
}

// promptText is the literal text of a prompt template: every part that is
// not computed, the branches of its %{ if } directives and the bodies of
// its %{ for } directives, and the string constants inside its
// interpolations. It is what a reader of the prompt sees whatever the run's
// values are.
func promptText(expr hcl.Expression) string {
	var b strings.Builder
	if expr == nil {
		return ""
	}
	hclsyntax.VisitAll(asSyntax(expr), func(n hclsyntax.Node) hcl.Diagnostics {
		if lit, ok := n.(*hclsyntax.LiteralValueExpr); ok && lit.Val.Type() == cty.String && !lit.Val.IsNull() {
			b.WriteString(lit.Val.AsString())
			b.WriteByte('\n')
		}
		return nil
	})
	return b.String()
}

// asSyntax returns expr as a syntax node; a template given some other way
// is wrapped so that VisitAll sees nothing in it.
func asSyntax(expr hcl.Expression) hclsyntax.Node {
	if n, ok := expr.(hclsyntax.Node); ok {
		return n
	}
	return &hclsyntax.TemplateExpr{}
}

// namesWord reports whether text holds name as a whole word: not as part
// of a longer identifier.
func namesWord(text, name string) bool {
	for i := 0; name != ""; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !identByte(text[start-1])) && (end == len(text) || !identByte(text[end])) {
			return true
		}
		i = start + 1
	}
	return false
}

func identByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// checkContracts warns about each required field of an agent step's
// returns that its prompt (with its agent's system prompt) never names.
func (l *loader) checkContracts() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, s := range l.pb.AllSteps() {
		a, ok := s.Action.(*AgentCall)
		if !ok || a.Template == nil || s.Returns == cty.NilType || !slices.ContainsFunc(a.Agents(), func(ag *Agent) bool { return !l.sendsSchema(ag) }) {
			continue
		}
		text := promptText(a.Template)
		if a.Agent != nil {
			text += "\n" + a.Agent.System
		}
		var required []string
		var missing []AnswerField
		for _, f := range AnswerFields(s.Returns) {
			if f.Optional {
				continue
			}
			required = append(required, f.Path)
			if !namesWord(text, f.Name) {
				missing = append(missing, f)
			}
		}
		for _, f := range missing {
			diags = append(diags, contractDiag(s, a, f, required))
		}
	}
	return diags
}

// sendsSchema reports whether the driver agent ag names hands the model
// the returns schema itself. An agent that names no driver is sent through
// whichever one the run picks (apl run --agent-cmd), which may not.
func (l *loader) sendsSchema(ag *Agent) bool {
	ss, ok := l.drivers.(SchemaSender)
	if !ok || ag == nil || ag.Driver == "" {
		return false
	}
	var settings map[string]cty.Value
	if dr := l.pb.Drivers[ag.Driver]; dr != nil {
		settings = dr.Config
	}
	return ss.SendsSchema(l.driverType(ag), settings)
}

func contractDiag(s *Step, a *AgentCall, f AnswerField, required []string) *hcl.Diagnostic {
	prompt := "its prompt"
	if a.Prompt != nil {
		prompt = fmt.Sprintf("its prompt %q", a.Prompt.Name)
	}
	d := warnDiag("Prompt does not name a returned field",
		fmt.Sprintf("Step %q requires the field %q in its answer, but %s never names it, so an agent that knows only its prompt cannot return it. The fields its returns requires are %s. Name the field in the prompt (in a JSON example of the answer, say), or mark it optional() in returns, or send it through a driver that hands the model the returns schema (claude-code, codex, openai, anthropic).",
			s.Name, f.Path, prompt, quoteList(required)),
		firstLine(a.Template.Range()))
	return d
}

// firstLine narrows r to its first line, so that a diagnostic about a
// whole prompt file shows where it starts rather than all of it.
func firstLine(r hcl.Range) hcl.Range {
	if r.End.Line > r.Start.Line {
		r.End = hcl.Pos{Line: r.Start.Line, Column: r.Start.Column, Byte: r.Start.Byte}
	}
	return r
}

// quoteList is names quoted and joined: "a", "b" and "c"; none, "none".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	switch len(q) {
	case 0:
		return "none"
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// Contract is what an agent step asks of its agent and what it accepts:
// the answer's type, the checks an answer must pass, the agent, and the
// prompt it is sent (apl explain --contract).
type Contract struct {
	Step  *Step
	Agent *Agent
	// Returns is the answer's type; cty.NilType when the step takes text.
	Returns cty.Type
	// Fields are the answer's fields (AnswerFields), optional ones marked.
	Fields []AnswerField
	Checks []ContractCheck
	// Prompt is the prompt block the step uses, nil for an inline one;
	// PromptRange is where its template is (a prompt file's first line).
	Prompt      *Prompt
	PromptRange hcl.Range
	// Variables are the names the template reads, each once, in order of
	// first use: inputs.phase_id, steps.plan.output.tasks, vars.feedback.
	Variables []string
	// Vars is the source of the agent action's vars attribute, "" when it
	// has none.
	Vars string
}

// ContractCheck is one check of a step's answer.
type ContractCheck struct {
	Name      string
	Condition string
	// Message is the message's source: a template, shown as written.
	Message string
	OnFail  OnFail
	Max     int
	Range   hcl.Range
}

// Contract returns the contract of the agent step named name, or an error
// saying why there is none.
func (p *Playbook) Contract(name string) (*Contract, error) {
	s := p.Step(name)
	if s == nil {
		names := make([]string, 0, len(p.steps))
		for n := range p.steps {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("the playbook has no step %q.%s", name, didYouMean(name, names))
	}
	a, ok := s.Action.(*AgentCall)
	if !ok {
		return nil, fmt.Errorf("step %q is not an agent step; only an agent step has an answer contract", name)
	}
	c := &Contract{Step: s, Agent: a.Agent, Returns: s.Returns, Fields: AnswerFields(s.Returns), Prompt: a.Prompt, Checks: []ContractCheck{}}
	if a.Template != nil {
		c.PromptRange = firstLine(a.Template.Range())
		c.Variables = templateVariables(a.Template)
	}
	if a.Vars != nil {
		c.Vars = p.definition(a.Vars.Range()).Text
	}
	for _, ck := range s.Checks {
		cc := ContractCheck{Name: ck.Name, OnFail: ck.OnFail, Max: ck.Max, Range: ck.DeclRange}
		if ck.Condition != nil {
			cc.Condition = ck.Condition.Source
		}
		if ck.Message != nil {
			cc.Message = p.definition(ck.Message.Range()).Text
		}
		c.Checks = append(c.Checks, cc)
	}
	return c, nil
}

// templateVariables names what a template reads, each once, in order: a
// traversal up to its first index, so that item.files[0] reads item.files.
func templateVariables(expr hcl.Expression) []string {
	var out []string
	seen := map[string]bool{}
	for _, tr := range expr.Variables() {
		var b strings.Builder
	steps:
		for _, s := range tr {
			switch s := s.(type) {
			case hcl.TraverseRoot:
				b.WriteString(s.Name)
			case hcl.TraverseAttr:
				b.WriteString("." + s.Name)
			default:
				break steps
			}
		}
		if n := b.String(); !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// TypeName is the field's type in HCL's type syntax, with a nested object
// written as object, since its fields are listed on their own:
// list(object), map(string), number.
func (f AnswerField) TypeName() string { return shortType(f.Type) }

func shortType(t cty.Type) string {
	switch {
	case t.IsObjectType():
		return "object"
	case t.IsTupleType():
		return "tuple"
	case t.IsListType():
		return "list(" + shortType(t.ElementType()) + ")"
	case t.IsSetType():
		return "set(" + shortType(t.ElementType()) + ")"
	case t.IsMapType():
		return "map(" + shortType(t.ElementType()) + ")"
	}
	return typeString(t)
}

// decodeOptional reads an optional attribute: a list of the names a
// prompt template reads that may render empty. Each must be a reference
// the template reads, itself or a field of it.
func (l *loader) decodeOptional(a *hcl.Attribute, tmpl hcl.Expression, scope refScope) ([]hcl.Traversal, hcl.Diagnostics) {
	tuple, ok := a.Expr.(*hclsyntax.TupleConsExpr)
	if !ok {
		return nil, hcl.Diagnostics{errDiag("Invalid optional",
			"optional is a list of the names the prompt reads that may render empty, such as [inputs.feedback, vars.issues].", a.Expr.Range())}
	}
	var diags hcl.Diagnostics
	var out []hcl.Traversal
	read := tmpl.Variables()
	for _, e := range tuple.Exprs {
		tr, d := hcl.AbsTraversalForExpr(e)
		if d.HasErrors() {
			diags = append(diags, errDiag("Invalid optional",
				"Each element of optional is a name the prompt reads, such as inputs.feedback or steps.plan.output.notes, not a value or an expression.", e.Range()))
			continue
		}
		s := scope
		s.what = "a prompt's optional"
		l.deferRefs(e, s)
		out = append(out, tr)
		if !readsUnder(read, tr) {
			diags = append(diags, warnDiag("Optional name not in the prompt",
				fmt.Sprintf("The prompt never reads %s, so marking it optional does nothing. Name a value the template interpolates.", traversalString(tr)), e.Range()))
		}
	}
	return out, diags
}

// readsUnder reports whether one of the traversals in read is opt or
// starts with it (opt = steps.plan.output covers steps.plan.output.notes),
// or is a part of it (a template that reads steps.plan.output whole).
func readsUnder(read []hcl.Traversal, opt hcl.Traversal) bool {
	for _, tr := range read {
		if TraversalCovers(opt, tr) || TraversalCovers(tr, opt) {
			return true
		}
	}
	return false
}

// TraversalCovers reports whether tr starts with prefix: the same root and
// the same attribute names, as far as prefix goes.
func TraversalCovers(prefix, tr hcl.Traversal) bool {
	pn, tn := traversalNames(prefix), traversalNames(tr)
	if len(pn) > len(tn) {
		return false
	}
	for i := range pn {
		if pn[i] != tn[i] {
			return false
		}
	}
	return len(pn) > 0
}

// traversalNames is the root and attribute names a traversal starts
// with, up to its first index.
func traversalNames(tr hcl.Traversal) []string {
	var out []string
	for _, s := range tr {
		switch s := s.(type) {
		case hcl.TraverseRoot:
			out = append(out, s.Name)
		case hcl.TraverseAttr:
			out = append(out, s.Name)
		default:
			return out
		}
	}
	return out
}

// SourceText is the text of the playbook's source at r, "" when the
// playbook does not hold that file.
func (p *Playbook) SourceText(r hcl.Range) string { return p.definition(r).Text }

// TraversalText writes a traversal as a template would: steps.plan.output.tasks[0].
func TraversalText(tr hcl.Traversal) string { return traversalString(tr) }

// TypeText writes a type in HCL's type syntax: object({ score = number }).
func TypeText(t cty.Type) string { return typeString(t) }
