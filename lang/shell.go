package lang

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

var shellSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "command"},
		{Name: "script"},
		{Name: "parse"},
		{Name: "dir"},
		{Name: "env"},
		{Name: "stdin"},
	},
}

// Shell runs a command: Command as argv without a shell, or Script with
// bash. Values interpolated into Script are shell-quoted at run time.
type Shell struct {
	Command   hcl.Expression // list of strings; nil when Script is set
	Script    hcl.Expression // template; nil when Command is set
	Parse     Parse
	Dir       hcl.Expression
	Env       hcl.Expression
	Stdin     hcl.Expression
	DeclRange hcl.Range
}

// Parse says how a shell action's stdout becomes the step's output.
type Parse string

// The parse modes of a shell action.
const (
	ParseText  Parse = "text"  // stdout as one string
	ParseLines Parse = "lines" // stdout as a list of lines
	ParseJSON  Parse = "json"  // stdout as one JSON value
)

// Parses are the parse modes, in the order messages list them.
var Parses = []Parse{ParseText, ParseLines, ParseJSON}

func (*Shell) action()            {}
func (a *Shell) Range() hcl.Range { return a.DeclRange }

func (a *Shell) String() string {
	kind := "command"
	if a.Script != nil {
		kind = "script"
	}
	return "shell " + kind + " parse=" + string(a.Parse)
}

func (l *loader) decodeShellBlock(s *Step, b *hcl.Block) (Action, hcl.Diagnostics) {
	content, diags := b.Body.Content(shellSchema)
	sh := &Shell{Parse: ParseText, DeclRange: b.DefRange}
	scope := refScope{body: s.Parent, step: s, action: true, what: "a shell action"}
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
		if !d.HasErrors() && !slices.Contains(Parses, Parse(v)) {
			diags = append(diags, errDiag("Invalid parse",
				fmt.Sprintf(`parse is "text", "lines" or "json", not %q.`, v), a.Expr.Range()))
		}
		sh.Parse = Parse(v)
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

// parseGives says why a shell action's parse mode cannot give the returns
// type, or "" when it can.
func parseGives(parse Parse, returns cty.Type) string {
	if returns == cty.NilType || returns == cty.DynamicPseudoType {
		return ""
	}
	switch parse {
	case ParseText, "":
		if returns != cty.String {
			return `parse = "text" gives a string`
		}
	case ParseLines:
		if !(returns.IsListType() || returns.IsSetType()) || !(returns.ElementType() == cty.String || returns.ElementType() == cty.DynamicPseudoType) {
			return `parse = "lines" gives a list of strings`
		}
	}
	return ""
}
