package lang

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/checker/nature"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/types"
	"github.com/expr-lang/expr/vm"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Condition is an expr-lang expression compiled once, at load time,
// against the playbook's typed environment. Most are conditions (when,
// gate rules, checks: Eval); for_each's list, key, depends_on, priority
// and limit keys yield other values (Value).
type Condition struct {
	Source  string
	Program *vm.Program
	Range   hcl.Range
	// Steps names the steps the expression reads (steps.NAME), so that
	// the interpreter builds only those; AllSteps is set when it reads
	// steps as a whole or by a computed name.
	Steps    []string
	AllSteps bool
	// Locals is set when the expression reads local values.
	Locals bool
	// Run is set when the expression may read run.events (it names it,
	// or reads run other than by a constant field), so that the
	// interpreter builds run.events only for those that may read it.
	Run bool
}

// Value runs the expression against env and returns what it yields.
func (c *Condition) Value(env map[string]any) (any, error) {
	return expr.Run(c.Program, env)
}

// Eval runs the condition against env (the interpreter's run state, shaped
// as the environment the condition was compiled against).
func (c *Condition) Eval(env map[string]any) (bool, error) {
	out, err := expr.Run(c.Program, env)
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, fmt.Errorf("the condition gave %s, not true or false", Kind(out))
	}
	return b, nil
}

// decodeCondition reads an attribute holding an expr-lang condition as a
// string constant and compiles it against env.
func (l *loader) decodeCondition(attr *hcl.Attribute, env *condEnv) (*Condition, hcl.Diagnostics) {
	return l.decodeExprAttr(attr, env, true)
}

// decodeExpr compiles an expr-lang expression that yields a value of any
// type (for_each lists, keys, priorities).
func (l *loader) decodeExpr(attr *hcl.Attribute, env *condEnv) (*Condition, hcl.Diagnostics) {
	return l.decodeExprAttr(attr, env, false)
}

func (l *loader) decodeExprAttr(attr *hcl.Attribute, env *condEnv, asBool bool) (*Condition, hcl.Diagnostics) {
	src, diags := constString(attr)
	if diags.HasErrors() {
		return nil, diags
	}
	c, diags := compileExpr(src, attr.Expr, env, asBool)
	if c == nil {
		if d := l.outputFieldErrors(src, attr.Expr); d != nil {
			diags = d
		}
	}
	for _, d := range diags {
		fixLineStart(d.Subject, l.sources[d.Subject.Filename])
		l.addStepLocalHint(d)
	}
	if c != nil {
		l.conds = append(l.conds, condRec{c, attr.Expr})
	} else {
		l.noteFailedRefs(src)
	}
	return c, diags
}

// addStepLocalHint says, when a condition reads local.NAME where it is
// not visible, which step declares NAME: a step's locals are its own.
func (l *loader) addStepLocalHint(d *hcl.Diagnostic) {
	const marker = "local has no field "
	i := strings.Index(d.Detail, marker)
	if i < 0 {
		return
	}
	var name string
	if _, err := fmt.Sscanf(d.Detail[i+len(marker):], "%q", &name); err != nil {
		return
	}
	if owner := l.stepLocalOwner(name); owner != nil {
		d.Summary = "Reference to another step's local"
		d.Detail = strings.TrimSuffix(d.Detail, ".") + fmt.Sprintf(". Local %q is declared in step %q, and only that step's own expressions (its action, checks, gate and progress templates, not its when) see it.", name, owner.Name)
	}
}

// fixLineStart fills in the byte offsets of a range built from a line
// number alone, so that snippets show the right line.
func fixLineStart(r *hcl.Range, src []byte) {
	if r == nil || r.Start.Byte != 0 || r.Start.Line <= 1 || src == nil {
		return
	}
	line := 1
	for i, c := range src {
		if c == '\n' {
			line++
			if line == r.Start.Line {
				r.Start.Byte = i + 1
				r.End.Byte = i + 2
				return
			}
		}
	}
}

// compileExpr compiles src, as a condition when asBool; errors point into
// the HCL expression that holds it, at expr's line and column when the
// string has no escapes.
func compileExpr(src string, holder hcl.Expression, env *condEnv, asBool bool) (*Condition, hcl.Diagnostics) {
	rng := holder.Range()
	if strings.TrimSpace(src) == "" {
		summary, detail := "Empty expression", "An expr-lang expression is required here."
		if asBool {
			summary, detail = "Empty condition", "A condition must be an expr-lang expression that yields true or false."
		}
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: &rng}}
	}
	code := renameContainsCalls(src)
	tree, err := parser.Parse(code)
	if err != nil {
		return nil, hcl.Diagnostics{exprDiag("Invalid condition", src, err, holder, env, nil)}
	}
	var patch []expr.Option
	if env.inst != "" {
		p := instancePatch{env.inst}
		ast.Walk(&tree.Node, p)
		patch = append(patch, expr.Patch(p))
	}
	if msg := splitOrderError(tree.Node); msg != "" {
		return nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid condition",
			Detail: fmt.Sprintf("In the condition %q: %s.", strings.Join(strings.Fields(src), " "), msg), Subject: &rng}}
	}
	// now() would make routing depend on when a run happens to take a
	// step, and a resumed run could take another path: conditions read
	// time only through the run's records (steps.NAME.started_at).
	opts := append([]expr.Option{env.option(), expr.DisableBuiltin("now"), condFunctions}, patch...)
	if asBool {
		opts = append(opts, expr.AsBool())
	}
	prog, err := expr.Compile(code, opts...)
	if err != nil {
		return nil, hcl.Diagnostics{exprDiag("Invalid condition", src, err, holder, env, tree)}
	}
	c := &Condition{Source: src, Program: prog, Range: rng}
	c.Steps, c.AllSteps = stepRefs(tree.Node)
	c.Locals = ast.Find(tree.Node, func(n ast.Node) bool {
		id, ok := n.(*ast.IdentifierNode)
		return ok && id.Value == RootLocal
	}) != nil
	c.Run = readsRunEvents(tree.Node)
	return c, nil
}

// stepRefs lists the steps an expression reads by name (steps.NAME or
// steps["NAME"]); all is set when it reads steps any other way.
func stepRefs(root ast.Node) (names []string, all bool) {
	v := &stepRefVisitor{named: map[*ast.IdentifierNode]bool{}, seen: map[string]bool{}}
	ast.Walk(&root, v)
	for _, id := range v.idents {
		if !v.named[id] {
			all = true
		}
	}
	return v.names, all
}

// readsRunEvents reports whether an expression may read run.events: it
// reads run other than as run.FIELD for a constant FIELD that is not
// events.
func readsRunEvents(root ast.Node) bool {
	v := &runRefVisitor{field: map[*ast.IdentifierNode]bool{}}
	ast.Walk(&root, v)
	for _, id := range v.idents {
		if !v.field[id] {
			return true
		}
	}
	return false
}

// runRefVisitor finds the run identifiers, and those that read a
// constant field other than events.
type runRefVisitor struct {
	idents []*ast.IdentifierNode
	field  map[*ast.IdentifierNode]bool
}

func (v *runRefVisitor) Visit(n *ast.Node) {
	switch n := (*n).(type) {
	case *ast.IdentifierNode:
		if n.Value == RootRun {
			v.idents = append(v.idents, n)
		}
	case *ast.MemberNode:
		id, ok := n.Node.(*ast.IdentifierNode)
		prop, isStr := n.Property.(*ast.StringNode)
		if ok && isStr && id.Value == RootRun && prop.Value != "events" {
			v.field[id] = true
		}
	}
}

type stepRefVisitor struct {
	idents []*ast.IdentifierNode
	named  map[*ast.IdentifierNode]bool
	seen   map[string]bool
	names  []string
}

func (v *stepRefVisitor) Visit(n *ast.Node) {
	switch n := (*n).(type) {
	case *ast.IdentifierNode:
		if n.Value == RootSteps {
			v.idents = append(v.idents, n)
		}
	case *ast.MemberNode:
		id, ok := n.Node.(*ast.IdentifierNode)
		prop, isStr := n.Property.(*ast.StringNode)
		if !ok || !isStr || id.Value != RootSteps {
			return
		}
		v.named[id] = true
		if !v.seen[prop.Value] {
			v.seen[prop.Value] = true
			v.names = append(v.names, prop.Value)
		}
	}
}

// condEnv is a typed environment with its expr type computed once: a
// playbook's environment grows with its steps, and converting it for every
// condition made loading quadratic.
type condEnv struct {
	types  types.Map
	nature nature.Nature
	// inst is the step, using a template, whose own conditions these
	// are: param and self are rewritten in them (instancePatch).
	inst string
}

func newCondEnv(m types.Map) *condEnv { return &condEnv{types: m, nature: m.Nature()} }

// option is expr.Env for the precomputed environment.
func (e *condEnv) option() expr.Option {
	return func(c *conf.Config) {
		c.EnvObject = e.types
		c.Env = e.nature
		c.Strict = e.nature.Strict
	}
}

// exprDiag turns an expr error into a diagnostic located in the HCL file.
// For "unknown field" errors it names what the value does have.
func exprDiag(summary, src string, err error, holder hcl.Expression, env *condEnv, tree *parser.Tree) *hcl.Diagnostic {
	rng := holder.Range()
	msg := err.Error()
	var ferr *file.Error
	if errors.As(err, &ferr) {
		msg = ferr.Message
		if sub, ok := refineRange(src, holder, ferr); ok {
			rng = sub
		}
		if name, ok := strings.CutPrefix(ferr.Message, "unknown name "); ok && tree != nil && calls(tree.Node, name) {
			msg = fmt.Sprintf("there is no function named %q.%s", name, conditionFunctionHint(name))
		}
		if tree != nil && strings.HasPrefix(ferr.Message, "unknown field ") {
			name := strings.TrimPrefix(ferr.Message, "unknown field ")
			if keys, path := fieldsAt(tree.Node, env.types, name); keys != nil {
				msg = fmt.Sprintf("%s has no field %q", path, name)
				if s := Suggest(name, keys); s != "" {
					msg += fmt.Sprintf(". Did you mean %q?", s)
				} else if len(keys) == 0 {
					msg += "; it has no fields"
				} else {
					msg += fmt.Sprintf(". It has: %s.", strings.Join(keys, ", "))
				}
			}
		}
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  summary,
		Detail:   fmt.Sprintf("In the condition %q: %s", strings.Join(strings.Fields(src), " "), msg),
		Subject:  &rng,
	}
}

// refineRange narrows rng to the column expr reported, when the HCL string
// is a one-line literal whose text is exactly src.
func refineRange(src string, holder hcl.Expression, ferr *file.Error) (hcl.Range, bool) {
	tmpl, ok := holder.(*hclsyntax.TemplateExpr)
	if !ok || len(tmpl.Parts) != 1 {
		return hcl.Range{}, false
	}
	rng := holder.Range()
	if rng.Start.Line != rng.End.Line && ferr.Line >= 1 {
		// A heredoc: its text starts on the line after the opening marker.
		// Point at the whole line of the error.
		line := rng.Start.Line + ferr.Line
		if line >= rng.End.Line {
			return hcl.Range{}, false
		}
		start := hcl.Pos{Line: line, Column: 1}
		return hcl.Range{Filename: rng.Filename, Start: start, End: hcl.Pos{Line: line, Column: 2}}, true
	}
	if strings.Contains(src, "\n") || strings.ContainsAny(src, `\"`) {
		return hcl.Range{}, false
	}
	if rng.Start.Line != rng.End.Line || rng.End.Column-rng.Start.Column != len(src)+2 {
		return hcl.Range{}, false
	}
	col := ferr.Column
	if col < 0 || col > len(src) {
		return hcl.Range{}, false
	}
	start := rng.Start
	start.Column += 1 + col
	start.Byte += 1 + col
	end := start
	// Underline up to the end of the word at the error.
	n := 1
	for col+n < len(src) && isWordByte(src[col+n]) {
		n++
	}
	end.Column += n
	end.Byte += n
	return hcl.Range{Filename: rng.Filename, Start: start, End: end}, true
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// fieldsAt finds the member access of name at offset from and returns the
// keys its base has, with the base's dotted path.
func fieldsAt(root ast.Node, env types.Map, name string) ([]string, string) {
	var keys []string
	var path string
	ast.Find(root, func(n ast.Node) bool {
		m, ok := n.(*ast.MemberNode)
		if !ok {
			return false
		}
		prop, ok := m.Property.(*ast.StringNode)
		if !ok || prop.Value != name || keys != nil {
			return false
		}
		p, t := resolveStatic(m.Node, env)
		if mt, ok := t.(types.Map); ok {
			keys, path = sortedKeys(mt), p
			return true
		}
		return false
	})
	return keys, path
}

// resolveStatic resolves a chain of identifiers and constant member
// accesses to its declared type.
func resolveStatic(n ast.Node, env types.Map) (string, types.Type) {
	switch n := n.(type) {
	case *ast.IdentifierNode:
		return n.Value, env[n.Value]
	case *ast.MemberNode:
		p, t := resolveStatic(n.Node, env)
		prop, ok := n.Property.(*ast.StringNode)
		mt, isMap := t.(types.Map)
		if !ok || !isMap {
			return "", nil
		}
		return p + "." + prop.Value, mt[prop.Value]
	}
	return "", nil
}

func sortedKeys(m types.Map) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != types.Extra {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// calls reports whether the expression calls a function by this name.
func calls(root ast.Node, name string) bool {
	return ast.Find(root, func(n ast.Node) bool {
		call, ok := n.(*ast.CallNode)
		if !ok {
			return false
		}
		id, ok := call.Callee.(*ast.IdentifierNode)
		return ok && id.Value == name
	}) != nil
}
