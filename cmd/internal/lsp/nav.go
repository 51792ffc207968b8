package lsp

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// What is under the cursor is found in the syntax tree of an HCL file that
// parses (treeRef): a traversal's part, a function's name, a block's
// label, a name quoted in goto or next; a comment or a description's prose
// names nothing. The text is read instead (refAt) inside expr conditions,
// which are strings to HCL, in prompt templates, in a file that does not
// parse (half-typed), and for completion, which reads only what is left
// of the cursor.

// A ref is the name under the cursor.
type ref struct {
	parts []string // steps, plan, output, score
	at    int      // the part the cursor is in
	// quoted is the attribute or block whose string holds the name:
	// "goto", "next", "agent", "step", "input", "prompt".
	quoted string
	start  int // byte offset where the part at the cursor begins
	// file and off are where the name is: param.NAME is the param of the
	// template whose body holds it.
	file string
	off  int
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// quotedName matches a line whose string names a step, agent, input or
// prompt: goto = "fix", step "plan" {, agent "researcher" {.
var quotedName = regexp.MustCompile(`^\s*(goto|next|agent|requeue|extends)\s*=\s*"([^"]*)"|^\s*(step|mock|agent|input|prompt|var|rule|check|type|budget|template)\s+"([^"]*)"`)

// refAt is the name at byte offset off of src, the text of file, by its
// syntax tree when it has one (treeRef), else by its text (refAt).
func (s *Server) refAt(file string, src []byte, off int) ref {
	if isHCL(file) {
		if f, diags := s.parses.Parse(src, file); f != nil && !diags.HasErrors() {
			if r, ok := treeRef(f, file, off); ok {
				return r
			}
		}
	}
	return refAt(file, src, off, true)
}

// quotedBlocks are the blocks whose first label is a name resolve knows
// (the blocks of quotedName).
var quotedBlocks = map[string]bool{"step": true, "mock": true, "agent": true, "input": true, "prompt": true,
	"var": true, "rule": true, "check": true, "type": true, "budget": true, "template": true}

// quotedAttrs are the attributes whose string is a name (those of
// quotedName).
var quotedAttrs = map[string]bool{"goto": true, "next": true, "agent": true, "requeue": true, "extends": true}

// treeRef is the name at byte offset off of f, found in its syntax tree;
// ok is false where the tree cannot tell: inside an expr condition (a
// string that holds names), or a traversal after an index that is not a
// name. Elsewhere outside a name (a comment, a literal) it is the empty
// ref, which names nothing.
func treeRef(f *hcl.File, file string, off int) (ref, bool) {
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return ref{}, false
	}
	in := func(r hcl.Range) bool { return r.Start.Byte <= off && off <= r.End.Byte }
	var walk func(*hclsyntax.Body) (ref, bool)
	walk = func(body *hclsyntax.Body) (ref, bool) {
		for _, b := range body.Blocks {
			if len(b.LabelRanges) > 0 && quotedBlocks[b.Type] && in(b.LabelRanges[0]) {
				start := b.LabelRanges[0].Start.Byte + 1 // after the quote
				return ref{parts: []string{b.Labels[0]}, quoted: b.Type, start: start, file: file, off: off}, true
			}
			if in(b.Body.SrcRange) {
				return walk(b.Body)
			}
		}
		for _, a := range body.Attributes {
			if !in(a.SrcRange) {
				continue
			}
			if t, ok := a.Expr.(*hclsyntax.TemplateExpr); ok && t.IsStringLiteral() && in(t.SrcRange) {
				if quotedAttrs[a.Name] {
					v, _ := t.Value(nil)
					return ref{parts: []string{v.AsString()}, quoted: a.Name, start: t.SrcRange.Start.Byte + 1, file: file, off: off}, true
				}
				if nameStrings[a.Name] {
					return ref{}, false // an expr condition: its names are text to HCL
				}
			}
			return exprRef(a.Expr, file, off)
		}
		return ref{file: file, off: off}, true
	}
	return walk(body)
}

// exprRef is the name at off in expression e: a part of the innermost
// traversal there, or the name of a function called.
func exprRef(e hclsyntax.Expression, file string, off int) (ref, bool) {
	var found *ref
	ok := true
	hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
		switch n := n.(type) {
		case *hclsyntax.FunctionCallExpr:
			if r := n.NameRange; r.Start.Byte <= off && off <= r.End.Byte {
				found = &ref{parts: []string{n.Name}, quoted: "(", start: r.Start.Byte, file: file, off: off}
			}
		case *hclsyntax.ScopeTraversalExpr:
			if r := n.SrcRange; r.Start.Byte <= off && off <= r.End.Byte {
				found, ok = traversalRef(n.Traversal, file, off)
			}
		}
		return nil
	})
	if found == nil {
		return ref{file: file, off: off}, ok
	}
	return *found, true
}

// traversalRef is the part of tr at off, with the parts before it: the
// root, attribute names and indexes by a string (steps["plan"]).
func traversalRef(tr hcl.Traversal, file string, off int) (*ref, bool) {
	r := &ref{file: file, off: off}
	for i, step := range tr {
		var name string
		switch t := step.(type) {
		case hcl.TraverseRoot:
			name = t.Name
		case hcl.TraverseAttr:
			name = t.Name
		case hcl.TraverseIndex:
			if t.Key.Type() != cty.String || !t.Key.IsKnown() || t.Key.IsNull() {
				if off <= t.SrcRange.End.Byte {
					return nil, true // the cursor is on a number: no name
				}
				return nil, false // past an index the tree's parts no longer match a name's
			}
			name = t.Key.AsString()
		}
		rng := step.SourceRange()
		start := rng.End.Byte - len(name)
		if _, isIndex := step.(hcl.TraverseIndex); isIndex {
			start = rng.Start.Byte + 2 // after [", for a plain string key
		}
		r.parts = append(r.parts, name)
		if off <= rng.End.Byte {
			r.at, r.start = i, start
			return r, true
		}
	}
	return r, true
}

// refAt finds the name at byte offset off of src, the text of file; full
// is false for completion, which reads only what is left of the cursor.
func refAt(file string, src []byte, off int, full bool) ref {
	ls := strings.LastIndexByte(string(src[:off]), '\n') + 1
	le := len(src)
	if i := strings.IndexByte(string(src[off:]), '\n'); i >= 0 {
		le = off + i
	}
	line := string(src[ls:le])
	if m := quotedName.FindStringSubmatchIndex(line); m != nil {
		for g := 1; g <= 3; g += 2 {
			if m[2*g] < 0 {
				continue
			}
			vs, ve := ls+m[2*(g+1)], ls+m[2*(g+1)+1]
			if off >= vs && off <= ve {
				end := ve
				if !full {
					end = off
				}
				return ref{parts: []string{string(src[vs:end])}, quoted: line[m[2*g]:m[2*g+1]], start: vs, file: file, off: off}
			}
		}
	}
	s := off
	for s > ls && (isNameByte(src[s-1]) || src[s-1] == '.') {
		s--
	}
	e := off
	if full {
		for e < le && isNameByte(src[e]) {
			e++
		}
	}
	text := string(src[s:e])
	parts := strings.Split(text, ".")
	r := ref{parts: parts, at: strings.Count(string(src[s:off]), "."), file: file, off: off}
	r.start = s + strings.LastIndexByte(string(src[s:off]), '.') + 1
	if e < le && src[e] == '(' && len(parts) == 1 {
		r.quoted = "("
	}
	return r
}

// target is what a name refers to: where it is declared, and what hover
// says of it.
type target struct {
	decl  hcl.Range
	hover string
}

// resolve finds what r names in pb.
func resolve(pb *lang.Playbook, r ref) (target, bool) {
	if pb == nil || len(r.parts) == 0 {
		return target{}, false
	}
	name := r.parts[0]
	switch r.quoted {
	case "goto", "next", "requeue", "step", "mock":
		return stepTarget(pb, name)
	case "agent":
		if a := pb.Agents[name]; a != nil {
			return agentTarget(a), true
		}
		return target{}, false
	case "prompt":
		if p := pb.Prompts[name]; p != nil {
			return promptTarget(pb, p), true
		}
		return target{}, false
	case "input":
		return inputTarget(pb, name)
	case "var":
		return varTarget(pb, name)
	case "type":
		return typeTarget(pb, name)
	case "budget":
		return budgetTarget(pb, name)
	case "template":
		return templateTarget(pb, name)
	case "rule", "check":
		return target{}, false
	case "(":
		return functionTarget(name)
	}
	if len(r.parts) < 2 || r.at == 0 {
		return target{}, false
	}
	name = r.parts[1]
	switch r.parts[0] {
	case "steps":
		s := pb.Step(name)
		if s == nil {
			return target{}, false
		}
		if r.at >= 3 && len(r.parts) > 3 && r.parts[2] == "output" {
			return fieldTarget(s, r.parts[3:r.at+1])
		}
		return stepTarget(pb, name)
	case "inputs":
		return inputTarget(pb, name)
	case "var", "vars":
		return varTarget(pb, name)
	case "local":
		for _, l := range allLocals(pb) {
			if l.Name == name {
				return target{l.DeclRange, fmt.Sprintf("**local** `%s`: `%s`", l.Name, lang.TypeText(l.Type))}, true
			}
		}
	case "prompt":
		if p := pb.Prompts[name]; p != nil {
			return promptTarget(pb, p), true
		}
	case "agent":
		if a := pb.Agents[name]; a != nil {
			return agentTarget(a), true
		}
	case "type":
		return typeTarget(pb, name)
	case "budget":
		return budgetTarget(pb, name)
	case "template":
		return templateTarget(pb, name)
	case lang.RootParam:
		return paramTarget(pb, r, name)
	}
	return target{}, false
}

// templateAt is the template whose block holds byte offset off of file,
// nil for none.
func templateAt(pb *lang.Playbook, file string, off int) *lang.Template {
	for _, t := range pb.Templates {
		rng := t.DeclRange
		if t.Body != nil {
			rng = hcl.RangeOver(rng, t.Body.SrcRange)
		}
		if rng.Filename == file && rng.Start.Byte <= off && off <= rng.End.Byte {
			return t
		}
	}
	return nil
}

// paramTarget is the param name of the template whose body holds r.
func paramTarget(pb *lang.Playbook, r ref, name string) (target, bool) {
	if t := templateAt(pb, r.file, r.off); t != nil {
		for _, p := range t.Params {
			if p.Name != name {
				continue
			}
			var b strings.Builder
			fmt.Fprintf(&b, "**param** `%s` of template `%s`: `%s`", p.Name, t.Name, lang.TypeText(p.Type))
			if p.Default == nil {
				b.WriteString(", required")
			}
			if p.Description != "" {
				fmt.Fprintf(&b, "\n\n%s", p.Description)
			}
			return target{p.DeclRange, b.String()}, true
		}
	}
	return target{}, false
}

func templateTarget(pb *lang.Playbook, name string) (target, bool) {
	t := pb.Template(name)
	if t == nil {
		return target{}, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**template** `%s`", t.Name)
	if t.Description != "" {
		fmt.Fprintf(&b, "\n\n%s", t.Description)
	}
	for _, p := range t.Params {
		req := ""
		if p.Default == nil {
			req = ", required"
		}
		fmt.Fprintf(&b, "\n- param `%s`: `%s`%s", p.Name, lang.TypeText(p.Type), req)
	}
	if len(t.Uses) > 0 {
		fmt.Fprintf(&b, "\n\nused by: `%s`", strings.Join(t.Uses, "`, `"))
	}
	return target{t.DeclRange, b.String()}, true
}

func typeTarget(pb *lang.Playbook, name string) (target, bool) {
	td := pb.Types[name]
	if td == nil {
		return target{}, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**type** `%s`: `%s`", td.Name, shortTypeText(td.Type))
	if td.Description != "" {
		fmt.Fprintf(&b, "\n\n%s", td.Description)
	}
	for _, f := range lang.AnswerFields(td.Type) {
		opt := ""
		if f.Optional {
			opt = " (optional)"
		}
		fmt.Fprintf(&b, "\n- `%s`: %s%s", f.Path, f.TypeName(), opt)
	}
	return target{td.DeclRange, b.String()}, true
}

func budgetTarget(pb *lang.Playbook, name string) (target, bool) {
	bu := pb.Budgets[name]
	if bu == nil {
		return target{}, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**budget** `%s`", bu.Name)
	if bu.MaxResponseLines > 0 {
		fmt.Fprintf(&b, "\n- max_response_lines: %d", bu.MaxResponseLines)
	}
	if bu.MaxSummaryLines > 0 {
		fmt.Fprintf(&b, "\n- max_summary_lines: %d", bu.MaxSummaryLines)
	}
	if bu.Enforcement != "" {
		fmt.Fprintf(&b, "\n- enforcement: %s", bu.Enforcement)
	}
	return target{bu.DeclRange, b.String()}, true
}

// allLocals are the playbook's locals and every step's.
func allLocals(pb *lang.Playbook) []*lang.Local {
	out := slices.Clone(pb.Locals)
	for _, s := range pb.AllSteps() {
		out = append(out, s.Locals...)
	}
	return out
}

func stepTarget(pb *lang.Playbook, name string) (target, bool) {
	s := pb.Step(name)
	if s == nil {
		return target{}, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**step** `%s`: %s", s.Name, kindOf(s))
	if s.Description != "" {
		fmt.Fprintf(&b, "\n\n%s", s.Description)
	}
	if a, ok := s.Action.(*lang.AgentCall); ok && a.Agent != nil {
		fmt.Fprintf(&b, "\n\nagent: `%s`", a.Agent.Name)
		if a.Agent.Model != "" {
			fmt.Fprintf(&b, " (model %s)", a.Agent.Model)
		}
		if a.Prompt != nil {
			fmt.Fprintf(&b, ", prompt `%s`", a.Prompt.Name)
		}
	}
	if s.When != nil {
		fmt.Fprintf(&b, "\n\nwhen: `%s`", s.When.Source)
	}
	if s.Returns != cty.NilType {
		fmt.Fprintf(&b, "\n\nreturns `%s`:", shortTypeText(s.Returns))
		for _, f := range lang.AnswerFields(s.Returns) {
			opt := ""
			if f.Optional {
				opt = " (optional)"
			}
			fmt.Fprintf(&b, "\n- `%s`: %s%s", f.Path, f.TypeName(), opt)
		}
	}
	if len(s.Checks) > 0 {
		b.WriteString("\n\nchecks:")
		for _, c := range s.Checks {
			cond := ""
			if c.Condition != nil {
				cond = ": `" + c.Condition.Source + "`"
			}
			fmt.Fprintf(&b, "\n- %s%s (on_fail %s)", c.Name, cond, c.OnFail)
		}
	}
	return target{s.DeclRange, b.String()}, true
}

// shortTypeText writes a type for a hover's first line: object, not the
// whole object type that the field list spells out.
func shortTypeText(t cty.Type) string {
	if t.IsObjectType() {
		return "object"
	}
	return lang.TypeText(t)
}

// kindOf names what a step does.
func kindOf(s *lang.Step) string {
	switch a := s.Action.(type) {
	case nil:
		if s.ForEach != nil {
			return "for_each"
		}
		return "a step that only routes"
	case *lang.AgentCall:
		return "agent step"
	case *lang.Shell:
		return "shell step"
	case *lang.Call:
		return "call step (" + a.Builtin + ")"
	case *lang.SubPlaybook:
		return "sub-playbook step"
	default:
		return a.String()
	}
}

func agentTarget(a *lang.Agent) target {
	var b strings.Builder
	fmt.Fprintf(&b, "**agent** `%s`", a.Name)
	for _, kv := range [][2]string{{"type", a.Type}, {"driver", a.Driver}, {"model", a.Model}, {"budget", a.Budget}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "\n- %s: %s", kv[0], kv[1])
		}
	}
	if a.Description != "" {
		fmt.Fprintf(&b, "\n\n%s", a.Description)
	}
	return target{a.DeclRange, b.String()}
}

func inputTarget(pb *lang.Playbook, name string) (target, bool) {
	in := pb.Input(name)
	if in == nil {
		return target{}, false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**input** `%s`: `%s`", in.Name, lang.TypeText(in.Type))
	if in.Required() {
		b.WriteString(", required")
	} else {
		fmt.Fprintf(&b, ", default `%s`", valueText(in.Default))
	}
	if in.Description != "" {
		fmt.Fprintf(&b, "\n\n%s", in.Description)
	}
	return target{in.DeclRange, b.String()}, true
}

func varTarget(pb *lang.Playbook, name string) (target, bool) {
	v := pb.Var(name)
	if v == nil {
		return target{}, false
	}
	s := fmt.Sprintf("**var** `%s`: `%s`", v.Name, lang.TypeText(v.Type))
	if v.Description != "" {
		s += "\n\n" + v.Description
	}
	return target{v.DeclRange, s}, true
}

// fieldTarget is the field of step s's output that path names.
func fieldTarget(s *lang.Step, path []string) (target, bool) {
	t := s.Returns
	optional := false
	for _, n := range path {
		for t.IsListType() || t.IsSetType() || t.IsMapType() {
			t = t.ElementType()
		}
		if !t.IsObjectType() || !t.HasAttribute(n) {
			return target{}, false
		}
		optional = t.AttributeOptional(n)
		t = t.AttributeType(n)
	}
	opt := ""
	if optional {
		opt = " (optional)"
	}
	return target{s.DeclRange, fmt.Sprintf("`steps.%s.output.%s`: `%s`%s", s.Name, strings.Join(path, "."), lang.TypeText(t), opt)}, true
}

func functionTarget(name string) (target, bool) {
	sig, isValue := lang.FunctionSignature(name)
	inCond, why := lang.ConditionFunction(name)
	if !isValue && !inCond {
		return target{}, false
	}
	var b strings.Builder
	if isValue {
		fmt.Fprintf(&b, "```\n%s\n```\n\nA function of values (HCL expressions).", sig)
	} else {
		fmt.Fprintf(&b, "**%s**: an expr-lang builtin, for conditions only.", name)
	}
	switch {
	case isValue && inCond:
		b.WriteString(" Conditions may call it too.")
	case isValue:
		b.WriteString(" Conditions may not call it: " + why + ".")
	}
	return target{hover: b.String()}, true
}

func valueText(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	if v.Type() == cty.String && v.IsKnown() {
		return fmt.Sprintf("%q", v.AsString())
	}
	if v.Type() == cty.Number && v.IsKnown() {
		return v.AsBigFloat().Text('g', -1)
	}
	if v.Type() == cty.Bool && v.IsKnown() {
		return fmt.Sprint(v.True())
	}
	return lang.TypeText(v.Type())
}

// promptLines bounds the template a hover shows.
const promptLines = 12

func promptTarget(pb *lang.Playbook, p *lang.Prompt) target {
	var b strings.Builder
	fmt.Fprintf(&b, "**prompt** `%s`", p.Name)
	if p.Description != "" {
		fmt.Fprintf(&b, "\n\n%s", p.Description)
	}
	if p.Template == nil {
		return target{p.DeclRange, b.String()}
	}
	var names []string
	for _, tr := range p.Template.Variables() {
		if n := lang.TraversalText(tr); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(&b, "\n\nreads: `%s`", strings.Join(names, "`, `"))
	}
	if text := pb.SourceText(p.Template.Range()); text != "" {
		lines := strings.Split(text, "\n")
		if len(lines) > promptLines {
			lines = append(lines[:promptLines], "…")
		}
		fmt.Fprintf(&b, "\n\nfrom %s:\n```\n%s\n```", p.Template.Range(), strings.Join(lines, "\n"))
	}
	return target{p.DeclRange, b.String()}
}
