package lang

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/expr-lang/expr/types"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The names every expression sees. Conditions (expr-lang) and values (HCL)
// share them; spec/language.md, "Names", lists them.
const (
	RootInputs = "inputs"
	RootSteps  = "steps"
	RootRun    = "run"
	RootVars   = "vars"
	RootItem   = "item"
	// RootItemAttempt is how many times the current for_each item has
	// started: 1, then 2 after one requeue, and so on.
	RootItemAttempt = "item_attempt"
	RootLocal       = "local"
	RootValue       = "value" // inside an input's validation only
)

// A Field is an attribute of steps.NAME (besides output) or of run, as
// both languages see it: its HCL type and, for a number, whether
// conditions see it as a whole number (int) rather than float64. The
// interpreter builds the values from these same tables.
type Field struct {
	Type  cty.Type
	Whole bool
}

// StepFields are the attributes of steps.NAME besides output.
var StepFields = map[string]Field{
	"status":     {Type: cty.String},
	"attempts":   {Type: cty.Number, Whole: true},
	"duration_s": {Type: cty.Number},
	"error":      {Type: cty.String},
	"error_kind": {Type: cty.String},
	"exit_code":  {Type: cty.Number, Whole: true},
	"session_id": {Type: cty.String},
	"started_at": {Type: cty.String},
	"ended_at":   {Type: cty.String},
	"tokens":     {Type: cty.Number, Whole: true},
	"cost_usd":   {Type: cty.Number},
	"model":      {Type: cty.String},
	"agent":      {Type: cty.String},
	"raw":        {Type: cty.String},
}

// RunFields are the attributes of run.
var RunFields = map[string]Field{
	"id":             {Type: cty.String},
	"mode":           {Type: cty.String},
	"status":         {Type: cty.String},
	"recommendation": {Type: cty.String},
	"reason":         {Type: cty.String},
	"elapsed_s":      {Type: cty.Number},
	"tokens":         {Type: cty.Number, Whole: true},
	"cost_usd":       {Type: cty.Number},
	"workdir":        {Type: cty.String},
	"dir":            {Type: cty.String},
	// circuit_breaker is the breaker's state as the state file has it:
	// closed, open or half_open, its counters, and when it last opened.
	"circuit_breaker": {Type: BreakerType},
	// events are the playbook's own events (gate events with their
	// details), oldest first: at most MaxRunEvents, the newest.
	"events": {Type: cty.DynamicPseudoType},
}

// BreakerType is the type of run.circuit_breaker. Without a
// circuit_breaker block it stays closed, its counters 0.
var BreakerType = cty.Object(map[string]cty.Type{
	"state":                   cty.String,
	"consecutive_no_progress": cty.Number,
	"consecutive_same_error":  cty.Number,
	"last_error":              cty.String,
	"reason":                  cty.String,
	"opened_at":               cty.String,
	"cooldown_until":          cty.String,
})

// MaxRunEvents bounds run.events: the newest this many of the playbook's
// own events.
const MaxRunEvents = 1000

func (f Field) exprType() types.Type {
	if f.Whole {
		return types.Int
	}
	return exprType(f.Type)
}

// ExprValue converts a value to what conditions see, as exprType types
// them: numbers are float64, lists and tuples []any, maps and objects
// map[string]any, null nil.
func ExprValue(v cty.Value) any {
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Number:
		f, _ := v.AsBigFloat().Float64()
		return f
	case t == cty.Bool:
		return v.True()
	case t.IsListType() || t.IsSetType() || t.IsTupleType():
		out := make([]any, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			out = append(out, ExprValue(ev))
		}
		return out
	case t.IsMapType() || t.IsObjectType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			out[k.AsString()] = ExprValue(ev)
		}
		return out
	}
	return nil
}

// ExprFields converts an object holding fields (a step's or the run's)
// for conditions: as ExprValue, with whole-number fields as int.
func ExprFields(v cty.Value, fields map[string]Field) map[string]any {
	m, _ := ExprValue(v).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	for name, f := range fields {
		if x, ok := m[name].(float64); ok && f.Whole {
			m[name] = int(x)
		}
	}
	return m
}

// ExprRoot converts the value of a root of a Scope to what conditions
// see, as the scope types it: ExprValue, with the whole-number fields of
// each step and of run, and item_attempt, as int.
func ExprRoot(root string, v cty.Value) any {
	switch root {
	case RootSteps:
		m := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, sv := it.Element()
			m[k.AsString()] = ExprFields(sv, StepFields)
		}
		return m
	case RootRun:
		return ExprFields(v, RunFields)
	case RootItemAttempt:
		n, _ := v.AsBigFloat().Int64()
		return int(n)
	}
	return ExprValue(v)
}

// exprType maps a cty type to the expr-lang type conditions are checked
// against. Numbers are float64 at run time.
func exprType(t cty.Type) types.Type {
	switch {
	case t == cty.NilType || t == cty.DynamicPseudoType:
		return types.Any
	case t == cty.Number:
		return types.Float64
	case t == cty.String:
		return types.String
	case t == cty.Bool:
		return types.Bool
	case t.IsListType() || t.IsSetType():
		return types.Array(exprType(t.ElementType()))
	case t.IsTupleType():
		return types.Array(types.Any)
	case t.IsMapType():
		return types.Map{types.Extra: exprType(t.ElementType())}
	case t.IsObjectType():
		m := types.Map{}
		for name, at := range t.AttributeTypes() {
			m[name] = exprType(at)
		}
		return m
	}
	return types.Any
}

// refScope is where an HCL expression is, for the checks of what it
// reads.
type refScope struct {
	vars bool  // prompt templates and agent vars see vars
	body *Step // the for_each step whose body the expression is in
	// step is the step whose own expression this is, when its locals
	// are evaluated by then: it sees them as local.NAME.
	step *Step
	// action is set on the expressions of the step's action, evaluated
	// before it gives an output: they cannot read its late locals.
	action bool
	what   string // for messages: "a prompt template", "a shell command", ...
}

// scope is the Scope the expression sees.
func (r refScope) scope() Scope { return Scope{Body: r.body, Step: r.step} }

// checkRefs checks that every variable an HCL expression reads exists:
// the root, the input, the step, and the fields of a step's declared
// returns type.
func (l *loader) checkRefs(expr hcl.Expression, scope refScope) hcl.Diagnostics {
	if expr == nil {
		return nil
	}
	var diags hcl.Diagnostics
	for _, tr := range l.traversals(expr) {
		diags = append(diags, l.checkTraversal(tr, scope)...)
	}
	return append(diags, checkFunctions(expr)...)
}

// checkFunctions reports calls of functions that do not exist.
func checkFunctions(expr hcl.Expression) hcl.Diagnostics {
	node, ok := expr.(hclsyntax.Expression)
	if !ok {
		return nil
	}
	var diags hcl.Diagnostics
	visitExprs(node, func(n hclsyntax.Expression) {
		call, ok := n.(*hclsyntax.FunctionCallExpr)
		if !ok {
			return
		}
		if _, ok := functions[call.Name]; ok {
			return
		}
		detail := fmt.Sprintf("There is no function named %q.%s", call.Name, valueFunctionHint(call.Name))
		if call.Name == "file" {
			detail = "file() is read when the playbook loads and may only be the whole template of a prompt: template = file(\"prompts/x.md\")."
		}
		diags = append(diags, errDiag("Call to unknown function", detail, call.NameRange))

	})
	return diags
}

func (l *loader) checkTraversal(tr hcl.Traversal, scope refScope) hcl.Diagnostics {
	root := tr.RootName()
	attrs := attrNames(tr[1:])
	rng := tr.SourceRange()
	roots := scope.scope().Roots()
	if !slices.Contains(roots, root) {
		return hcl.Diagnostics{errDiag("Unknown variable",
			fmt.Sprintf("%s cannot refer to %q; it may use %s.%s", upperFirst(scope.what), root,
				strings.Join(roots, ", "), didYouMean(root, roots)+instanceRootHint(root)), rng)}
	}
	switch root {
	case RootInputs:
		if len(attrs) == 0 {
			return nil
		}
		if l.pb.inputs[attrs[0]] == nil {
			return hcl.Diagnostics{errDiag("Reference to undeclared input",
				fmt.Sprintf("There is no input named %q.%s", attrs[0], didYouMean(attrs[0], l.inputNames())), rng)}
		}
		return nil
	case RootSteps:
		return l.checkStepRef(attrs, rng, scope.body)
	case RootRun:
		if len(attrs) > 0 {
			if _, ok := RunFields[attrs[0]]; !ok {
				return hcl.Diagnostics{errDiag("Unknown run attribute",
					fmt.Sprintf("run has no attribute %q.%s", attrs[0], didYouMean(attrs[0], slices.Sorted(maps.Keys(RunFields)))), rng)}
			}
		}
		return nil
	case RootVars:
		return l.checkVarRef(attrs, rng)
	case RootLocal:
		if d := l.checkLocalRef(attrs, rng, scope.step); d != nil {
			return d
		}
		if scope.action && len(attrs) > 0 {
			if lv := scope.step.locals[attrs[0]]; lv != nil && lv.Late {
				return hcl.Diagnostics{errDiag("Local read before the step's output",
					fmt.Sprintf("%s of step %q reads local.%s, which reads the step's own record, so it exists only once the action has given its output: its checks and gate may read it, the action may not.", upperFirst(scope.what), scope.step.Name, attrs[0]), rng)}
			}
		}
		return nil
	}
	return nil
}

func (l *loader) checkStepRef(attrs []string, rng hcl.Range, body *Step) hcl.Diagnostics {
	if len(attrs) == 0 {
		return nil
	}
	s := l.stepByName(attrs[0])
	if s == nil {
		return hcl.Diagnostics{errDiag("Reference to undeclared step",
			fmt.Sprintf("There is no step named %q.%s", attrs[0], didYouMean(attrs[0], l.stepNames())), rng)}
	}
	if s.Parent != nil && s.Parent != body {
		return hcl.Diagnostics{errDiag("Reference to a per-item step",
			fmt.Sprintf("Step %q runs once per item of %q, so it has no single value here; read steps.%s.output.items instead.", s.Name, s.Parent.Name, s.Parent.Name), rng)}
	}
	if len(attrs) == 1 {
		return nil
	}
	field := attrs[1]
	if field != "output" {
		if _, ok := StepFields[field]; !ok {
			names := append(slices.Sorted(maps.Keys(StepFields)), "output")
			sort.Strings(names)
			return hcl.Diagnostics{errDiag("Unknown step attribute",
				fmt.Sprintf("steps.%s has no attribute %q.%s", s.Name, field, didYouMean(field, names)), rng)}
		}
		return nil
	}
	t := s.Returns
	path := "steps." + s.Name + ".output"
	for _, a := range attrs[2:] {
		if t == cty.NilType || t == cty.DynamicPseudoType || !t.IsObjectType() {
			return nil
		}
		if !t.HasAttribute(a) {
			return hcl.Diagnostics{errDiag("Unknown output field",
				fmt.Sprintf("%s has no field %q: step %q returns %s.%s", path, a, s.Name, typeString(s.Returns),
					didYouMean(a, slices.Sorted(maps.Keys(t.AttributeTypes())))), rng)}
		}
		t = t.AttributeType(a)
		path += "." + a
	}
	return nil
}

// attrNames returns the leading attribute names of a relative traversal,
// stopping at the first index step.
func attrNames(tr hcl.Traversal) []string {
	var out []string
	for _, s := range tr {
		switch s := s.(type) {
		case hcl.TraverseAttr:
			out = append(out, s.Name)
		case hcl.TraverseIndex:
			if s.Key.Type() == cty.String && s.Key.IsKnown() && !s.Key.IsNull() {
				out = append(out, s.Key.AsString())
				continue
			}
			return out
		default:
			return out
		}
	}
	return out
}

type refCheck struct {
	expr  hcl.Expression
	scope refScope
}

// deferRefs queues a reference check until every step is declared.
func (l *loader) deferRefs(expr hcl.Expression, scope refScope) {
	if expr != nil {
		l.refChecks = append(l.refChecks, refCheck{expr, scope})
	}
}

// refName reads an attribute that names a block of kind: either a
// reference (budget.research) or a string ("research").
func refName(a *hcl.Attribute, kind string) (string, hcl.Range, hcl.Diagnostics) {
	if tr, d := hcl.AbsTraversalForExpr(a.Expr); !d.HasErrors() {
		names := attrNames(tr[1:])
		if tr.RootName() == kind && len(names) == 1 && len(tr) == 2 {
			return names[0], a.Expr.Range(), nil
		}
		if len(tr) == 1 {
			return "", a.Expr.Range(), hcl.Diagnostics{errDiag("Invalid reference",
				fmt.Sprintf("%s must name a %s block: %s.NAME or %q.", a.Name, kind, kind, "NAME"), a.Expr.Range())}
		}
	}
	s, d := constString(a)
	if d.HasErrors() {
		return "", a.Expr.Range(), hcl.Diagnostics{errDiag("Invalid reference",
			fmt.Sprintf("%s must name a %s block: %s.NAME or %q.", a.Name, kind, kind, "NAME"), a.Expr.Range())}
	}
	return s, a.Expr.Range(), nil
}

// traversals is e.Variables(), each expression of the playbook's files
// walked once per load: several checks read the same expression's
// references (checkRefs, checkOutputTraversals, checkVarTraversals,
// checkUseBeforeRun), and the walks were a sixth of a load. The result
// is shared and must not be changed.
func (l *loader) traversals(e hcl.Expression) []hcl.Traversal {
	se, ok := e.(hclsyntax.Expression) // a pointer, so a map key
	if !ok {
		return e.Variables()
	}
	if trs, ok := l.refs[se]; ok {
		return trs
	}
	trs := exprVariables(se)
	if l.refs == nil {
		l.refs = map[hclsyntax.Expression][]hcl.Traversal{}
	}
	l.refs[se] = trs
	return trs
}
