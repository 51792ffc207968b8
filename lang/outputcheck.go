package lang

import (
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// condRec is a compiled expr-lang expression with the HCL value that holds
// it, for the checks that run once every block is decoded.
type condRec struct {
	c      *Condition
	holder hcl.Expression
}

// checkOutputTraversals checks the fields an HCL expression reads from
// outputs whose type the step does not declare (outputFieldDiag).
func (l *loader) checkOutputTraversals(e hcl.Expression) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, tr := range l.traversals(e) {
		if tr.RootName() != RootSteps {
			continue
		}
		attrs := attrNames(tr[1:])
		if len(attrs) < 3 || attrs[1] != "output" {
			continue
		}
		if s := l.stepByName(attrs[0]); s != nil {
			if d, _ := l.outputFieldDiag(s, attrs[2:], tr.SourceRange()); d != nil {
				diags = append(diags, d)
			}
		}
	}
	return diags
}

// outputFieldDiag checks reading fields from the output of a step without
// returns: an agent's or an ask's answer and a command's text or lines
// have no fields; a builtin's result has the fields its signature names;
// JSON without returns may have any, which nothing checks. It returns the
// problem and the index in fields of the field it is about.
func (l *loader) outputFieldDiag(s *Step, fields []string, rng hcl.Range) (*hcl.Diagnostic, int) {
	if s.Returns != cty.NilType || len(fields) == 0 {
		return nil, 0
	}
	path := "steps." + s.Name + ".output"
	field := fields[0]
	declare := fmt.Sprintf("returns = object({ %s = string })", field)
	const summary = "Output has no fields"
	switch a := s.Action.(type) {
	case *AgentCall:
		return errDiag(summary, fmt.Sprintf("Step %q declares no returns, so %s is the agent's answer as text and has no field %q. Declare the fields the answer must have, e.g. %s.",
			s.Name, path, field, declare), rng), 0
	case *Ask:
		answer := "the chosen option"
		if a.Text {
			answer = "the typed answer"
		}
		return errDiag(summary, fmt.Sprintf("Step %q asks a question, so %s is %s as text and has no field %q.", s.Name, path, answer, field), rng), 0
	case *Shell:
		switch a.Parse {
		case ParseText, "":
			return errDiag(summary, fmt.Sprintf("Step %q declares no returns and parses its stdout as text, so %s is a string and has no field %q. Use parse = \"json\" and declare the fields, e.g. %s.",
				s.Name, path, field, declare), rng), 0
		case ParseLines:
			return errDiag(summary, fmt.Sprintf("Step %q parses its stdout as lines, so %s is a list of strings and has no field %q. Use parse = \"json\" and declare the fields, e.g. %s.",
				s.Name, path, field, declare), rng), 0
		case ParseJSON:
			return warnDiag("Output field not declared", fmt.Sprintf("Step %q parses its stdout as JSON but declares no returns, so nothing checks that %s has a field %q until a run reads it. Declare the fields, e.g. %s.",
				s.Name, path, field, declare), rng), 0
		}
	case *Call:
		if l.sigs == nil {
			return nil, 0
		}
		result := l.sigs.Result(a.Builtin)
		t := result
		for i, f := range fields {
			if !t.IsObjectType() {
				return nil, 0
			}
			if !t.HasAttribute(f) {
				return errDiag("Unknown output field",
					fmt.Sprintf("%s has no field %q: builtin %q returns %s.%s", path, f, a.Builtin, typeString(result),
						didYouMean(f, slices.Sorted(maps.Keys(t.AttributeTypes())))), rng), i
			}
			t = t.AttributeType(f)
			path += "." + f
		}
	}
	return nil, 0
}

// checkConditionRefs checks, in a compiled expr-lang expression, the
// fields read from untyped outputs and the vars read, which its typed
// environment leaves open.
func (l *loader) checkConditionRefs(cr condRec, vars *varNames) hcl.Diagnostics {
	if cr.c == nil || cr.c.Program == nil {
		return nil
	}
	return l.conditionRefDiags(cr, cr.c.Program.Node(), vars)
}

// conditionRefDiags checks the fields node reads from untyped outputs
// and, with vars, the vars it reads.
func (l *loader) conditionRefDiags(cr condRec, node ast.Node, vars *varNames) hcl.Diagnostics {
	var diags hcl.Diagnostics
	ast.Find(node, func(n ast.Node) bool {
		m, ok := n.(*ast.MemberNode)
		if !ok {
			return false
		}
		path := memberPath(m)
		switch {
		case len(path) == 2 && path[0] == RootVars && vars != nil:
			if msg := vars.unset(path[1], false); msg != "" {
				diags = append(diags, errDiag("Var never set", msg, l.condRange(cr, m)))
			}
		case len(path) >= 4 && path[0] == RootSteps && path[2] == "output":
			s := l.stepByName(path[1])
			if s == nil {
				return false
			}
			// Each member node reports the field it ends at, so that a
			// chain reports its first bad field once.
			if d, i := l.outputFieldDiag(s, path[3:], l.condRange(cr, m)); d != nil && i == len(path)-4 {
				d.Detail = fmt.Sprintf("In the condition %q: %s", condText(cr.c.Source), d.Detail)
				diags = append(diags, d)
			}
		}
		return false
	})
	return diags
}

// outputFieldErrors are the errors of the fields a condition that did
// not compile reads from untyped outputs: conditions are typed with what
// each step's action makes its output, so reading a field of a text is
// a type error, which these say better.
func (l *loader) outputFieldErrors(src string, holder hcl.Expression) hcl.Diagnostics {
	tree, err := parser.Parse(src)
	if err != nil {
		return nil
	}
	var out hcl.Diagnostics
	for _, d := range l.conditionRefDiags(condRec{&Condition{Source: src}, holder}, tree.Node, nil) {
		if d.Severity == hcl.DiagError {
			out = append(out, d)
		}
	}
	return out
}

// memberPath is the chain of names a member access reads, such as
// [steps plan output tasks]; nil when a part is computed.
func memberPath(n ast.Node) []string {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		return []string{n.Value}
	case *ast.MemberNode:
		prop, ok := n.Property.(*ast.StringNode)
		if !ok {
			return nil
		}
		base := memberPath(n.Node)
		if base == nil {
			return nil
		}
		return append(base, prop.Value)
	}
	return nil
}

// condRange is the range of node n of a condition in the HCL file, as
// narrow as the condition's quoting allows.
func (l *loader) condRange(cr condRec, n ast.Node) hcl.Range {
	ferr := (&file.Error{Location: n.Location()}).Bind(file.NewSource(cr.c.Source))
	if r, ok := refineRange(cr.c.Source, cr.holder, ferr); ok {
		fixLineStart(&r, l.sources[r.Filename])
		return r
	}
	return cr.holder.Range()
}

var spaceRE = regexp.MustCompile(`\s+`)

func condText(src string) string { return spaceRE.ReplaceAllString(src, " ") }

// inputRefRE finds inputs.NAME and inputs["NAME"] in the text of an
// expression that did not compile.
var inputRefRE = regexp.MustCompile(`\binputs\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*["']([^"']+)["']\s*\])`)

// noteFailedRefs records the inputs an expr-lang expression that did not
// compile reads, so that its error does not also make them "unused".
func (l *loader) noteFailedRefs(src string) {
	for _, m := range inputRefRE.FindAllStringSubmatch(src, -1) {
		l.usedInputs[m[1]+m[2]] = true
	}
}
