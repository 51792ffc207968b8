package interp

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// What expressions see of the run is derived from the run's records when
// an expression is evaluated, for the names it reads. Which names exist
// where is lang's (lang.Scope: the same description the loader typed the
// expressions against); rootValue builds each, and one derivation serves
// both languages (conditions convert it with lang.ExprRoot). Nothing is
// cached, so no change to a record can leave an expression reading stale
// data. Each expression reads a few steps by name (lang
// lists them), so the cost follows what it reads, not how many steps the
// playbook has.

// evalCtx is the HCL evaluation context of frame f: inputs, steps, run,
// vars, the item inside a for_each body, plus any extra names (prompt
// vars). Only the roots and steps that exprs read are built; with no
// exprs, everything is.
func (r *run) evalCtx(f *frame, extra map[string]cty.Value, exprs ...hcl.Expression) *hcl.EvalContext {
	return r.evalCtxIn(r.stepsValue, f, extra, exprs...)
}

// stepsView makes the value of steps an expression sees: stepsValue,
// or a document's (documentSteps), where a running for_each shows its
// items.
type stepsView func(f *frame, refs stepRefs) cty.Value

// evalCtxIn is evalCtx with steps, and the locals the expressions read,
// seen through view.
func (r *run) evalCtxIn(view stepsView, f *frame, extra map[string]cty.Value, exprs ...hcl.Expression) *hcl.EvalContext {
	rd := reads{all: len(exprs) == 0}
	need := map[string]bool{} // on the stack: rootValue does not see it
	for _, e := range exprs {
		if e == nil {
			continue
		}
		for _, tr := range e.Variables() {
			need[tr.RootName()] = true
			switch tr.RootName() {
			case lang.RootSteps:
				rd.steps.addTraversal(tr)
			case lang.RootLocal:
				rd.locals = append(rd.locals, localName(tr))
			}
		}
	}
	rd.steps.all = rd.steps.all || rd.all
	rd.events = rd.all || need[lang.RootRun] && readsEvents(exprs)
	vars := map[string]cty.Value{}
	for _, root := range scopeOf(f).Roots() {
		if _, given := extra[root]; !given && (rd.all || need[root]) {
			vars[root] = r.rootValue(root, view, f, rd)
		}
	}
	for k, v := range extra {
		vars[k] = v
	}
	return &hcl.EvalContext{Variables: vars, Functions: r.functions()}
}

// scopeOf is where in the playbook frame f is: inside a for_each item,
// the body of its for_each step. lang's Scope says which names exist
// there; rootValue builds them.
func scopeOf(f *frame) lang.Scope {
	if f != nil && f.item != nil {
		return lang.Scope{Body: f.item.parent}
	}
	return lang.Scope{}
}

// reads is what some expressions read, so that only that is built.
type reads struct {
	all    bool // everything (no expressions given)
	steps  stepRefs
	locals []string // the locals read by name; "" for local[expr]
	events bool     // run.events
}

// rootValue is the value of root, one of the names lang's Scope of frame
// f has, for expressions that read rd.
func (r *run) rootValue(root string, view stepsView, f *frame, rd reads) cty.Value {
	switch root {
	case lang.RootInputs:
		return r.inputs
	case lang.RootSteps:
		return view(f, rd.steps)
	case lang.RootRun:
		return r.runValue(rd.events)
	case lang.RootVars:
		return cty.ObjectVal(r.vars)
	case lang.RootLocal:
		locals := withStepLocals(r.localsValue(view, rd.locals, rd.all), f)
		if rd.all || readsLate(f, rd.locals) {
			locals = r.withLateLocals(view, locals, f)
		}
		return locals
	case lang.RootItem:
		return f.item.value
	case lang.RootItemAttempt:
		return cty.NumberIntVal(int64(f.item.rec.Requeues + 1))
	}
	panic(fmt.Sprintf("interp: lang's scope has a root %q that the run does not build", root))
}

// functions are the HCL functions of the run: timestamp() reads the
// host's clock and uuid() the host's UUIDs.
func (r *run) functions() map[string]function.Function {
	if r.hclFuncs == nil {
		r.hclFuncs = lang.RunFunctions(lang.Impure{Now: r.now, UUID: r.host.uuid})
	}
	return r.hclFuncs
}

// localsValue is local as expressions see it: the locals names, with
// those they read, or all of them. A local is derived like everything
// else here, from the run's records when it is read; one whose
// expression fails (it reads the output of a step that has not run) is
// null.
func (r *run) localsValue(view stepsView, names []string, all bool) cty.Value {
	want := map[string]bool{}
	var add func(name string)
	add = func(name string) {
		lv := r.pb.Local(name)
		if lv == nil || want[name] {
			return
		}
		want[name] = true
		for _, tr := range lv.Expr.Variables() {
			if tr.RootName() == lang.RootLocal {
				add(localName(tr))
			}
		}
	}
	for _, n := range names {
		all = all || n == "" // local[expr]: any of them
		add(n)
	}
	m := map[string]cty.Value{}
	for _, lv := range r.pb.Locals { // each after those it reads
		if !all && !want[lv.Name] {
			continue
		}
		v, diags := lv.Expr.Value(r.evalCtxIn(view, r.top(), map[string]cty.Value{lang.RootLocal: cty.ObjectVal(m)}, lv.Expr))
		if diags.HasErrors() {
			v = cty.NullVal(lv.Type)
		}
		m[lv.Name] = v
	}
	return cty.ObjectVal(m)
}

// stepLocals evaluates step s's own locals in frame f, each after those
// it reads, into the object the step's expressions see them in. Unlike
// a playbook's local, a step's local that fails to evaluate fails the
// step: it is evaluated once, when the step starts, from what the step
// is about to use.
func (r *run) stepLocals(f *frame, s *lang.Step) (cty.Value, error) {
	f.locals = cty.EmptyObjectVal
	m := map[string]cty.Value{}
	for _, lv := range s.Locals {
		if lv.Late {
			continue
		}
		v, diags := lv.Expr.Value(r.evalCtx(f, nil, lv.Expr))
		if diags.HasErrors() {
			f.locals = cty.NilVal
			return cty.NilVal, fmt.Errorf("evaluating local %q: %w", lv.Name, diagsError(diags))
		}
		m[lv.Name] = v
		f.locals = cty.ObjectVal(m)
	}
	return f.locals, nil
}

// readsLate reports whether names (the locals some expressions read; ""
// for local[expr]) take in a late local of frame f's current step.
func readsLate(f *frame, names []string) bool {
	if f == nil || f.step == nil {
		return false
	}
	for _, lv := range f.step.Locals {
		if lv.Late && (slices.Contains(names, lv.Name) || slices.Contains(names, "")) {
			return true
		}
	}
	return false
}

// withLateLocals adds to locals the late locals of the current step of
// frame f, derived now from the step's record: null when they cannot be
// (the action has not given an output yet).
func (r *run) withLateLocals(view stepsView, locals cty.Value, f *frame) cty.Value {
	if f == nil || f.step == nil || f.locals == cty.NilVal {
		return locals
	}
	var m map[string]cty.Value
	for _, lv := range f.step.Locals {
		if !lv.Late {
			continue
		}
		if m == nil {
			m = locals.AsValueMap()
			if m == nil {
				m = map[string]cty.Value{}
			}
		}
		v, diags := lv.Expr.Value(r.evalCtxIn(view, f, map[string]cty.Value{lang.RootLocal: cty.ObjectVal(m)}, lv.Expr))
		if diags.HasErrors() {
			v = cty.NullVal(lv.Type)
		}
		m[lv.Name] = v
	}
	if m == nil {
		return locals
	}
	return cty.ObjectVal(m)
}

// withStepLocals adds the current step's own locals in frame f to the
// playbook's locals.
func withStepLocals(locals cty.Value, f *frame) cty.Value {
	if f == nil || f.locals == cty.NilVal {
		return locals
	}
	m := locals.AsValueMap()
	if m == nil {
		m = map[string]cty.Value{}
	}
	for k, v := range f.locals.AsValueMap() {
		m[k] = v
	}
	return cty.ObjectVal(m)
}

// localName is the NAME of a traversal local.NAME..., "" if it has none.
func localName(tr hcl.Traversal) string {
	if len(tr) > 1 {
		if a, ok := tr[1].(hcl.TraverseAttr); ok {
			return a.Name
		}
	}
	return ""
}

// stepRefs are the steps some expressions read: by name, or all of them.
type stepRefs struct {
	names []string
	all   bool
}

func (s *stepRefs) addTraversal(tr hcl.Traversal) {
	if len(tr) > 1 {
		switch t := tr[1].(type) {
		case hcl.TraverseAttr:
			s.names = append(s.names, t.Name)
			return
		case hcl.TraverseIndex:
			if t.Key.Type() == cty.String && t.Key.IsKnown() && !t.Key.IsNull() {
				s.names = append(s.names, t.Key.AsString())
				return
			}
		}
	}
	s.all = true
}

func (s *stepRefs) addCondition(c *lang.Condition) {
	if c == nil {
		return
	}
	s.names = append(s.names, c.Steps...)
	s.all = s.all || c.AllSteps
}

// visit calls fn with each step of frame f the refs name: the run's
// steps, and inside a for_each body the item's own, which hide run steps
// of the same name.
func (r *run) visitSteps(f *frame, refs stepRefs, fn func(name string, rec *StepRecord, out cty.Value)) {
	var nested []*lang.Step
	if f != nil && f.item != nil {
		nested = f.item.parent.ForEach.Steps
	}
	one := func(name string) {
		for _, s := range nested {
			if s.Name == name {
				fn(name, f.recs[name], f.outputs[name])
				return
			}
		}
		if rec := r.st.Steps[name]; rec != nil {
			fn(name, rec, r.outputs[name])
		}
	}
	if !refs.all {
		for _, name := range refs.names {
			one(name)
		}
		return
	}
	for _, s := range r.topSteps() {
		one(s.Name)
	}
	for _, s := range nested {
		one(s.Name)
	}
}

// stepsValue is steps as HCL sees it in frame f, for the steps refs name.
func (r *run) stepsValue(f *frame, refs stepRefs) cty.Value {
	m := map[string]cty.Value{}
	r.visitSteps(f, refs, func(name string, rec *StepRecord, out cty.Value) { m[name] = stepValue(rec, out, r.rawValue(rec)) })
	return cty.ObjectVal(m)
}

// stepValue is what expressions see of a step: its record, its output
// and the text of its last agent answer (raw, null for other steps).
func stepValue(rec *StepRecord, out, raw cty.Value) cty.Value {
	if out == cty.NilVal {
		out = cty.NullVal(cty.DynamicPseudoType)
	}
	exit := cty.NullVal(cty.Number)
	if rec.ExitCode != nil {
		exit = cty.NumberIntVal(int64(*rec.ExitCode))
	}
	cost := cty.NullVal(cty.Number)
	if rec.CostUSD != nil {
		cost = cty.NumberFloatVal(*rec.CostUSD)
	}
	return cty.ObjectVal(map[string]cty.Value{
		"status":     cty.StringVal(rec.Status),
		"attempts":   cty.NumberIntVal(int64(rec.Attempts)),
		"duration_s": cty.NumberFloatVal(rec.DurationS),
		"error":      cty.StringVal(rec.Error),
		"error_kind": cty.StringVal(rec.ErrorKind),
		"exit_code":  exit,
		"session_id": cty.StringVal(rec.SessionID),
		"started_at": timeValue(rec.StartedAt),
		"ended_at":   timeValue(rec.CompletedAt),
		"tokens":     cty.NumberIntVal(int64(rec.Tokens)),
		"cost_usd":   cost,
		"model":      cty.StringVal(rec.Model),
		"agent":      cty.StringVal(rec.Agent),
		"raw":        raw,
		"output":     out,
	})
}

// timeValue is a time as expressions see it: an RFC 3339 string, null
// when unset.
func timeValue(t *time.Time) cty.Value {
	if t == nil {
		return cty.NullVal(cty.String)
	}
	return cty.StringVal(t.Format(time.RFC3339))
}

// events builds run.events; without it run.events is null, for the
// expressions that do not read it (readsEvents), which are most: the list
// is rebuilt from the event log at each evaluation.
func (r *run) runValue(events bool) cty.Value {
	cost := cty.NullVal(cty.Number)
	if c := r.st.Metrics.TotalCostUSD; c != nil {
		cost = cty.NumberFloatVal(*c)
	}
	dir := cty.NullVal(cty.String)
	if r.dir != nil {
		dir = cty.StringVal(r.dir.abs)
	}
	evs := cty.NullVal(cty.DynamicPseudoType)
	if events {
		evs = r.eventsValue()
	}
	return cty.ObjectVal(map[string]cty.Value{
		"id":              cty.StringVal(r.st.Meta.RunID),
		"mode":            cty.StringVal(r.st.Meta.Mode),
		"status":          cty.StringVal(r.st.Meta.Status),
		"recommendation":  cty.StringVal(r.st.Meta.Recommendation),
		"reason":          cty.StringVal(r.st.Meta.Reason),
		"elapsed_s":       cty.NumberFloatVal(r.elapsed().Seconds()),
		"tokens":          cty.NumberIntVal(int64(r.st.Metrics.TotalTokens)),
		"cost_usd":        cost,
		"workdir":         cty.StringVal(r.workdir),
		"dir":             dir,
		"circuit_breaker": r.breakerValue(),
		"events":          evs,
	})
}

// exprEnv is the environment the conditions conds run against in frame
// f: the same names and values as evalCtx, as Go values (lang.ExprRoot).
func (r *run) exprEnv(f *frame, conds ...*lang.Condition) map[string]any {
	rd := reads{all: true, events: condsReadRun(conds)}
	readsLocals := false
	for _, c := range conds {
		rd.steps.addCondition(c)
		readsLocals = readsLocals || c != nil && c.Locals
	}
	env := map[string]any{}
	for _, root := range scopeOf(f).Roots() {
		switch {
		case root == lang.RootInputs:
			env[root] = r.inputsGo()
		case root == lang.RootSteps:
			// Step by step, as lang.ExprRoot converts them, without
			// building steps' object first.
			steps := map[string]any{}
			r.visitSteps(f, rd.steps, func(name string, rec *StepRecord, out cty.Value) {
				steps[name] = lang.ExprFields(stepValue(rec, out, r.rawValue(rec)), lang.StepFields)
			})
			env[root] = steps
		case root == lang.RootLocal && !readsLocals:
			// Built only for the conditions that read it.
		default:
			env[root] = lang.ExprRoot(root, r.rootValue(root, r.stepsValue, f, rd))
		}
	}
	return env
}

// validationEnv is what input in's validation conditions see (lang's
// Scope of the validation): value, the input's own value, and inputs, as
// conditions see them.
func validationEnv(in *lang.Input, value cty.Value, inputs any) map[string]any {
	env := map[string]any{}
	for _, root := range (lang.Scope{Input: in}).Roots() {
		switch root {
		case lang.RootValue:
			env[root] = lang.ExprValue(value)
		case lang.RootInputs:
			env[root] = inputs
		default:
			panic(fmt.Sprintf("interp: lang's validation scope has a root %q that the run does not build", root))
		}
	}
	return env
}

// inputsGo is inputs as conditions see them; inputs never change during
// a run, so they are converted once.
func (r *run) inputsGo() any {
	if r.inputsGoCache == nil {
		r.inputsGoCache = lang.ExprValue(r.inputs)
	}
	return r.inputsGoCache
}

// evalString evaluates an expression that must give a string.
func evalString(expr hcl.Expression, ctx *hcl.EvalContext) (string, error) {
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return "", diagsError(diags)
	}
	s, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", expr.Range(), err)
	}
	return s, nil
}

func toString(v cty.Value) (string, error) {
	if v.IsNull() {
		return "", fmt.Errorf("value is null")
	}
	sv, err := convert.Convert(v, cty.String)
	if err != nil {
		return "", fmt.Errorf("want a string, got %s", v.Type().FriendlyName())
	}
	return sv.AsString(), nil
}

// diagsError turns HCL diagnostics into one error that keeps their
// locations.
func diagsError(diags hcl.Diagnostics) error {
	var parts []string
	for _, d := range diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Subject != nil {
			msg = d.Subject.String() + ": " + msg
		}
		parts = append(parts, msg)
	}
	return fmt.Errorf("%s", strings.Join(parts, "; "))
}

// renderScript renders a bash script template. Every interpolated value
// is quoted for where it lands in the script (a bare word, double or
// single quotes, a heredoc: builtins.Script), so an input such as
// $(rm -rf ~) stays literal text; a list becomes several quoted words
// where a word may stand. A value where no quoting is safe (inside
// backticks) is an error that names the safe form. Literal text and
// %{ } directives are kept as written.
func renderScript(expr hcl.Expression, ctx *hcl.EvalContext) (string, error) {
	var sc builtins.Script
	if err := renderScriptPart(&sc, expr, ctx); err != nil {
		return "", err
	}
	return sc.String(), nil
}

func renderScriptPart(sc *builtins.Script, expr hcl.Expression, ctx *hcl.EvalContext) error {
	switch e := expr.(type) {
	case *hclsyntax.TemplateExpr:
		for _, p := range e.Parts {
			if err := renderScriptPart(sc, p, ctx); err != nil {
				return err
			}
		}
		return nil
	case *hclsyntax.LiteralValueExpr:
		s, err := toString(e.Val)
		if err != nil {
			return err
		}
		if err := sc.Literal(s); err != nil {
			return fmt.Errorf("%s: %w", e.Range(), err)
		}
		return nil
	case *hclsyntax.TemplateWrapExpr:
		return quoteValue(sc, e.Wrapped, ctx)
	case *hclsyntax.ConditionalExpr:
		if isTemplate(e.TrueResult) && isTemplate(e.FalseResult) {
			c, diags := e.Condition.Value(ctx)
			if diags.HasErrors() {
				return diagsError(diags)
			}
			c, err := convert.Convert(c, cty.Bool)
			if err != nil || c.IsNull() {
				return fmt.Errorf("%s: an if condition must be true or false", e.Condition.Range())
			}
			if c.True() {
				return renderScriptPart(sc, e.TrueResult, ctx)
			}
			return renderScriptPart(sc, e.FalseResult, ctx)
		}
	case *hclsyntax.TemplateJoinExpr:
		if f, ok := e.Tuple.(*hclsyntax.ForExpr); ok && isTemplate(f.ValExpr) {
			return renderScriptFor(sc, f, ctx)
		}
	}
	return quoteValue(sc, expr, ctx)
}

func isTemplate(e hcl.Expression) bool {
	_, ok := e.(*hclsyntax.TemplateExpr)
	return ok
}

// renderScriptFor renders a %{ for } directive, quoting the values its
// body interpolates.
func renderScriptFor(sc *builtins.Script, f *hclsyntax.ForExpr, ctx *hcl.EvalContext) error {
	coll, diags := f.CollExpr.Value(ctx)
	if diags.HasErrors() {
		return diagsError(diags)
	}
	if coll.IsNull() || !coll.CanIterateElements() {
		return fmt.Errorf("%s: a for directive needs a list, set, map or object", f.CollExpr.Range())
	}
	for it := coll.ElementIterator(); it.Next(); {
		k, v := it.Element()
		child := ctx.NewChild()
		child.Variables = map[string]cty.Value{f.ValVar: v}
		if f.KeyVar != "" {
			child.Variables[f.KeyVar] = k
		}
		if f.CondExpr != nil {
			c, diags := f.CondExpr.Value(child)
			if diags.HasErrors() {
				return diagsError(diags)
			}
			if c.IsNull() || c.Type() != cty.Bool || c.False() {
				continue
			}
		}
		if err := renderScriptPart(sc, f.ValExpr, child); err != nil {
			return err
		}
	}
	return nil
}

func quoteValue(sc *builtins.Script, expr hcl.Expression, ctx *hcl.EvalContext) error {
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return diagsError(diags)
	}
	if v.IsNull() {
		return fmt.Errorf("%s: cannot put a null value into a script", expr.Range())
	}
	t := v.Type()
	if t.IsListType() || t.IsTupleType() || t.IsSetType() {
		var list []string
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			s, err := toString(ev)
			if err != nil {
				return fmt.Errorf("%s: list element: %w", expr.Range(), err)
			}
			list = append(list, s)
		}
		if err := sc.Values(list); err != nil {
			return fmt.Errorf("%s: %w", expr.Range(), err)
		}
		return nil
	}
	s, err := toString(v)
	if err != nil {
		return fmt.Errorf("%s: %w", expr.Range(), err)
	}
	if err := sc.Value(s); err != nil {
		return fmt.Errorf("%s: %w", expr.Range(), err)
	}
	return nil
}
