package interp

import (
	"fmt"
	"maps"
	"strings"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// evalCtx is the HCL evaluation context of frame f: inputs, steps, run,
// vars, the item inside a for_each body, plus any extra names (prompt
// vars). Only the roots that exprs read are built: steps grows with the
// playbook, and building it for every expression made long runs
// quadratic.
func (r *run) evalCtx(f *frame, extra map[string]cty.Value, exprs ...hcl.Expression) *hcl.EvalContext {
	need := map[string]bool{}
	for _, e := range exprs {
		if e == nil {
			continue
		}
		for _, tr := range e.Variables() {
			need[tr.RootName()] = true
		}
	}
	all := len(exprs) == 0
	vars := map[string]cty.Value{}
	if all || need[lang.RootInputs] {
		vars[lang.RootInputs] = r.inputs
	}
	if all || need[lang.RootSteps] {
		vars[lang.RootSteps] = r.stepsValue(f)
	}
	if all || need[lang.RootRun] {
		vars[lang.RootRun] = r.runValue()
	}
	if all || need[lang.RootVars] {
		vars[lang.RootVars] = cty.ObjectVal(r.vars)
	}
	if f != nil && f.item != nil {
		vars[lang.RootItem] = f.item.value
	}
	for k, v := range extra {
		vars[k] = v
	}
	return &hcl.EvalContext{Variables: vars, Functions: lang.Functions()}
}

// changed drops the cached values of a top-level step whose record or
// output changed.
func (r *run) changed(step string) {
	delete(r.stepCty, step)
	r.stepGoStale = append(r.stepGoStale, step)
	r.stepsCache = cty.NilVal
	r.store.touch(step)
}

// stepsValue is steps.* as HCL sees it in frame f. Top-level values are
// cached until the step changes; an item's own steps are added on top.
func (r *run) stepsValue(f *frame) cty.Value {
	if r.stepsCache == cty.NilVal {
		m := make(map[string]cty.Value, len(r.pb.Steps)+len(r.pb.OnFailure))
		for _, s := range r.topSteps() {
			v, ok := r.stepCty[s.Name]
			if !ok {
				v = stepValue(r.st.Steps[s.Name], r.outputs[s.Name])
				r.stepCty[s.Name] = v
			}
			m[s.Name] = v
		}
		r.stepsCache = cty.ObjectVal(m)
	}
	if f == nil || f.item == nil {
		return r.stepsCache
	}
	m := r.stepsCache.AsValueMap()
	if m == nil {
		m = map[string]cty.Value{}
	}
	for _, s := range f.item.parent.ForEach.Steps {
		m[s.Name] = stepValue(f.recs[s.Name], f.outputs[s.Name])
	}
	return cty.ObjectVal(m)
}

func stepValue(rec *StepRecord, out cty.Value) cty.Value {
	if out == cty.NilVal {
		out = cty.NullVal(cty.DynamicPseudoType)
	}
	exit := cty.NullVal(cty.Number)
	if rec.ExitCode != nil {
		exit = cty.NumberIntVal(int64(*rec.ExitCode))
	}
	return cty.ObjectVal(map[string]cty.Value{
		"status":     cty.StringVal(rec.Status),
		"attempts":   cty.NumberIntVal(int64(rec.Attempts)),
		"duration_s": cty.NumberFloatVal(rec.DurationS),
		"error":      cty.StringVal(rec.Error),
		"exit_code":  exit,
		"output":     out,
	})
}

func (r *run) runValue() cty.Value {
	cost := cty.NullVal(cty.Number)
	if c := r.st.Metrics.TotalCostUSD; c != nil {
		cost = cty.NumberFloatVal(*c)
	}
	return cty.ObjectVal(map[string]cty.Value{
		"id":             cty.StringVal(r.st.Meta.RunID),
		"mode":           cty.StringVal(r.st.Meta.Mode),
		"status":         cty.StringVal(r.st.Meta.Status),
		"recommendation": cty.StringVal(r.st.Meta.Recommendation),
		"reason":         cty.StringVal(r.st.Meta.Reason),
		"elapsed_s":      cty.NumberFloatVal(r.elapsed().Seconds()),
		"tokens":         cty.NumberIntVal(int64(r.st.Metrics.TotalTokens)),
		"cost_usd":       cost,
		"workdir":        cty.StringVal(r.workdir),
	})
}

// exprEnv is the environment conditions run against; the same names as
// evalCtx, as Go values.
func (r *run) exprEnv(f *frame) map[string]any {
	// steps for conditions is kept up to date in place: only the steps that
	// changed since the last condition are converted again. Conditions only
	// read it, one at a time under the run's lock.
	if r.stepGo == nil {
		r.stepGo = make(map[string]any, len(r.st.Steps))
		for _, s := range r.topSteps() {
			r.stepGo[s.Name] = stepGo(r.st.Steps[s.Name], r.outputs[s.Name])
		}
		r.stepGoStale = r.stepGoStale[:0]
	}
	for _, name := range r.stepGoStale {
		r.stepGo[name] = stepGo(r.st.Steps[name], r.outputs[name])
	}
	r.stepGoStale = r.stepGoStale[:0]
	steps := r.stepGo
	var item cty.Value
	if f != nil && f.item != nil {
		steps = maps.Clone(steps)
		for _, s := range f.item.parent.ForEach.Steps {
			steps[s.Name] = stepGo(f.recs[s.Name], f.outputs[s.Name])
		}
		item = f.item.value
	}
	run := goValue(r.runValue()).(map[string]any)
	run["tokens"] = r.st.Metrics.TotalTokens
	env := map[string]any{
		lang.RootInputs: r.inputsGo(),
		lang.RootSteps:  steps,
		lang.RootRun:    run,
		lang.RootVars:   goValue(cty.ObjectVal(r.vars)),
	}
	if item != cty.NilVal {
		env[lang.RootItem] = goValue(item)
	}
	return env
}

// inputsGo is inputs as conditions see them; inputs never change during
// a run, so they are converted once.
func (r *run) inputsGo() any {
	if r.inputsGoCache == nil {
		r.inputsGoCache = goValue(r.inputs)
	}
	return r.inputsGoCache
}

func stepGo(rec *StepRecord, out cty.Value) map[string]any {
	var exit any
	if rec.ExitCode != nil {
		exit = *rec.ExitCode
	}
	var o any
	if out != cty.NilVal {
		o = goValue(out)
	}
	return map[string]any{
		"status":     rec.Status,
		"attempts":   rec.Attempts,
		"duration_s": rec.DurationS,
		"error":      rec.Error,
		"exit_code":  exit,
		"output":     o,
	}
}

// goValue converts a cty value to the plain Go values expr works on:
// numbers become float64, as conditions are type-checked to expect.
func goValue(v cty.Value) any {
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
			out = append(out, goValue(ev))
		}
		return out
	case t.IsMapType() || t.IsObjectType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			out[k.AsString()] = goValue(ev)
		}
		return out
	}
	return nil
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

// renderScript renders a bash script template. Every interpolated value is
// shell-quoted, so an input such as $(rm -rf ~) stays one literal word; a
// list becomes several quoted words. Literal text and %{ } directives are
// kept as written.
func renderScript(expr hcl.Expression, ctx *hcl.EvalContext) (string, error) {
	var b strings.Builder
	if err := renderScriptPart(&b, expr, ctx); err != nil {
		return "", err
	}
	return b.String(), nil
}

func renderScriptPart(b *strings.Builder, expr hcl.Expression, ctx *hcl.EvalContext) error {
	switch e := expr.(type) {
	case *hclsyntax.TemplateExpr:
		for _, p := range e.Parts {
			if err := renderScriptPart(b, p, ctx); err != nil {
				return err
			}
		}
		return nil
	case *hclsyntax.LiteralValueExpr:
		s, err := toString(e.Val)
		b.WriteString(s)
		return err
	case *hclsyntax.TemplateWrapExpr:
		return quoteValue(b, e.Wrapped, ctx)
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
				return renderScriptPart(b, e.TrueResult, ctx)
			}
			return renderScriptPart(b, e.FalseResult, ctx)
		}
	case *hclsyntax.TemplateJoinExpr:
		if f, ok := e.Tuple.(*hclsyntax.ForExpr); ok && isTemplate(f.ValExpr) {
			return renderScriptFor(b, f, ctx)
		}
	}
	return quoteValue(b, expr, ctx)
}

func isTemplate(e hcl.Expression) bool {
	_, ok := e.(*hclsyntax.TemplateExpr)
	return ok
}

// renderScriptFor renders a %{ for } directive, quoting the values its
// body interpolates.
func renderScriptFor(b *strings.Builder, f *hclsyntax.ForExpr, ctx *hcl.EvalContext) error {
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
		if err := renderScriptPart(b, f.ValExpr, child); err != nil {
			return err
		}
	}
	return nil
}

func quoteValue(b *strings.Builder, expr hcl.Expression, ctx *hcl.EvalContext) error {
	v, diags := expr.Value(ctx)
	if diags.HasErrors() {
		return diagsError(diags)
	}
	if v.IsNull() {
		return fmt.Errorf("%s: cannot put a null value into a script", expr.Range())
	}
	t := v.Type()
	if t.IsListType() || t.IsTupleType() || t.IsSetType() {
		first := true
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			s, err := toString(ev)
			if err != nil {
				return fmt.Errorf("%s: list element: %w", expr.Range(), err)
			}
			if !first {
				b.WriteByte(' ')
			}
			first = false
			b.WriteString(builtins.ShellQuote(s))
		}
		return nil
	}
	s, err := toString(v)
	if err != nil {
		return fmt.Errorf("%s: %w", expr.Range(), err)
	}
	b.WriteString(builtins.ShellQuote(s))
	return nil
}
