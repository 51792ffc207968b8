package lang

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// The checks in this file run once every block is decoded. They type-check
// HCL value expressions the way Terraform's validate does: each expression
// is evaluated against unknown values of the types the playbook declares
// (inputs, returns, for_each items, builtin results), so that HCL and cty
// check attribute names and function arguments without running anything.
// Where a type is not known the value is cty.DynamicVal, which every
// operation accepts: a missing type never makes an error.

// checkAfterDecode runs the checks that need the whole playbook: the types
// of HCL expressions, the fields read from untyped outputs, vars nothing
// sets, builtin calls, and exit_codes.
func (l *loader) checkAfterDecode() hcl.Diagnostics {
	tc := &typeChecker{l: l, ctxs: map[*Step]*hcl.EvalContext{}, stepCtxs: map[*Step]*hcl.EvalContext{}}
	scripts := map[hcl.Expression]bool{}
	for _, s := range l.pb.AllSteps() {
		if sh, ok := s.Action.(*Shell); ok && sh.Script != nil {
			scripts[sh.Script] = true
		}
	}
	vars := l.collectVarNames()
	var diags hcl.Diagnostics
	bad := map[hcl.Expression]bool{}
	for _, rc := range l.refChecks {
		if l.checkRefs(rc.expr, rc.scope).HasErrors() {
			// Reported already; an evaluation would only repeat it.
			bad[rc.expr] = true
			continue
		}
		d := l.checkOutputTraversals(rc.expr)
		d = append(d, l.checkVarTraversals(rc.expr, rc.scope, vars)...)
		diags = append(diags, d...)
		if d.HasErrors() {
			bad[rc.expr] = true
			continue
		}
		ctx := tc.scopeCtx(rc.scope)
		if scripts[rc.expr] {
			diags = append(diags, typeCheckScript(rc.expr, ctx)...)
		} else {
			diags = append(diags, typeCheckExpr(rc.expr, ctx)...)
		}
	}
	for _, cr := range l.conds {
		diags = append(diags, l.checkConditionRefs(cr, vars)...)
	}
	for _, s := range l.pb.AllSteps() {
		if c, ok := s.Action.(*Call); ok {
			ctx := tc.stepCtx(s)
			for _, a := range c.Args {
				if bad[a.Expr] {
					ctx = nil // arguments with errors are not evaluated again
				}
			}
			diags = append(diags, l.checkCall(s, c, ctx)...)
		}
	}
	diags = append(diags, l.checkExitCodes()...)
	diags = append(diags, l.checkAgentModels(tc.stepCtx, bad)...)
	diags = append(diags, l.checkSetTypes(tc)...)
	return diags
}

// vars is vars as type checks see it: an object of the declared vars'
// types and of every name a set assigns, as any. When some set's names
// cannot be told, or no var is declared, it is DynamicVal.
func (tc *typeChecker) vars() cty.Value {
	if len(tc.l.pb.Vars) == 0 {
		return cty.DynamicVal
	}
	names := tc.l.collectVarNames()
	if names.open || names.agentOpen {
		return cty.DynamicVal
	}
	m := map[string]cty.Value{}
	for _, n := range append(names.set, names.agent...) {
		m[n] = cty.DynamicVal
	}
	for _, v := range tc.l.pb.Vars {
		m[v.Name] = unknownOf(v.Type)
	}
	return cty.ObjectVal(m)
}

// typeChecker builds, once per section and once per step with locals,
// the evaluation context of type checks.
type typeChecker struct {
	l        *loader
	ctxs     map[*Step]*hcl.EvalContext
	stepCtxs map[*Step]*hcl.EvalContext
}

// scopeCtx is what an expression of scope sees: its section, and the
// locals of the step it belongs to.
func (tc *typeChecker) scopeCtx(sc refScope) *hcl.EvalContext {
	if sc.step != nil {
		return tc.stepCtx(sc.step)
	}
	return tc.ctx(sc.body)
}

// stepCtx is what step s's own expressions see once its locals are
// evaluated: its section's context with s's locals added to local.
func (tc *typeChecker) stepCtx(s *Step) *hcl.EvalContext {
	base := tc.ctx(s.Parent)
	if len(s.Locals) == 0 {
		return base
	}
	if c, ok := tc.stepCtxs[s]; ok {
		return c
	}
	locals := map[string]cty.Value{}
	for _, lv := range slices.Concat(tc.l.pb.Locals, s.Locals) {
		locals[lv.Name] = unknownOf(lv.Type)
	}
	c := base.NewChild()
	c.Variables = map[string]cty.Value{RootLocal: cty.ObjectVal(locals)}
	tc.stepCtxs[s] = c
	return c
}

// ctx is what expressions in the section of body (nil: the main and
// on_failure steps) see, as unknown values of their types. vars is
// DynamicVal: which names exist is checked on its own (checkVarTraversals).
func (tc *typeChecker) ctx(body *Step) *hcl.EvalContext {
	if c, ok := tc.ctxs[body]; ok {
		return c
	}
	l := tc.l
	inputs := map[string]cty.Value{}
	for _, in := range l.pb.Inputs {
		inputs[in.Name] = unknownOf(in.Type)
	}
	steps := map[string]cty.Value{}
	for _, s := range l.pb.AllSteps() {
		if s.Parent != nil && s.Parent != body {
			continue
		}
		fields := map[string]cty.Value{"output": unknownOf(l.outputType(s))}
		for name, f := range StepFields {
			fields[name] = cty.UnknownVal(f.Type)
		}
		steps[s.Name] = cty.ObjectVal(fields)
	}
	run := map[string]cty.Value{}
	for name, f := range RunFields {
		run[name] = cty.UnknownVal(f.Type)
	}
	vars := map[string]cty.Value{
		RootInputs: cty.ObjectVal(inputs),
		RootSteps:  cty.ObjectVal(steps),
		RootRun:    cty.ObjectVal(run),
		RootVars:   tc.vars(),
	}
	if body != nil && body.ForEach != nil {
		vars[RootItem] = unknownOf(body.ForEach.ItemType)
		vars[RootItemAttempt] = cty.UnknownVal(cty.Number)
	}
	if len(l.pb.Locals) > 0 {
		locals := map[string]cty.Value{}
		for _, lv := range l.pb.Locals {
			locals[lv.Name] = unknownOf(lv.Type)
		}
		vars[RootLocal] = cty.ObjectVal(locals)
	}
	c := &hcl.EvalContext{Variables: vars, Functions: typeCheckFunctions}
	tc.ctxs[body] = c
	return c
}

// unknownOf is an unknown value of type t; DynamicVal when t is not known.
// Optional attributes only shape conversions; values have them all.
func unknownOf(t cty.Type) cty.Value {
	if t == cty.NilType || t == cty.DynamicPseudoType {
		return cty.DynamicVal
	}
	return cty.UnknownVal(t.WithoutOptionalAttributesDeep())
}

// outputType is the type of steps.NAME.output as a run makes it: the
// declared returns, else what the action gives: an agent's or an ask's
// answer as text, a command's stdout as text or lines, a builtin's
// result. cty.DynamicPseudoType when it cannot be known (JSON without
// returns, a sub-playbook's output).
func (l *loader) outputType(s *Step) cty.Type {
	if s.Returns != cty.NilType {
		return s.Returns
	}
	switch a := s.Action.(type) {
	case *AgentCall, *Ask:
		return cty.String
	case *Shell:
		switch a.Parse {
		case ParseText, "":
			return cty.String
		case ParseLines:
			return cty.List(cty.String)
		}
	case *Call:
		if l.sigs != nil {
			return l.sigs.Result(a.Builtin)
		}
	}
	return cty.DynamicPseudoType
}

// typeCheckExpr evaluates e against ctx and returns the errors. The body
// of a for expression over an unknown collection is not evaluated by HCL,
// so each is checked here with its variables bound to unknown elements.
func typeCheckExpr(e hcl.Expression, ctx *hcl.EvalContext) hcl.Diagnostics {
	if e == nil {
		return nil
	}
	_, diags := e.Value(ctx)
	out := typeErrors(diags)
	for _, f := range outerFors(e) {
		out = append(out, typeCheckFor(f, ctx, false)...)
	}
	return out
}

// typeCheckFor checks a for expression's parts, its key and value
// variables bound to unknown elements of its collection's type.
func typeCheckFor(f *hclsyntax.ForExpr, ctx *hcl.EvalContext, script bool) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, g := range outerFors(f.CollExpr) {
		diags = append(diags, typeCheckFor(g, ctx, false)...)
	}
	coll, _ := f.CollExpr.Value(ctx)
	child := forContext(f, coll.Type(), ctx)
	for _, e := range []hcl.Expression{f.KeyExpr, f.CondExpr} {
		if e != nil {
			diags = append(diags, typeCheckExpr(e, child)...)
		}
	}
	if script {
		return append(diags, typeCheckScript(f.ValExpr, child)...)
	}
	return append(diags, typeCheckExpr(f.ValExpr, child)...)
}

// forContext binds a for expression's variables to unknown keys and
// elements of a collection of type t.
func forContext(f *hclsyntax.ForExpr, t cty.Type, ctx *hcl.EvalContext) *hcl.EvalContext {
	key, val := cty.DynamicVal, cty.DynamicVal
	switch {
	case t.IsListType():
		key, val = cty.UnknownVal(cty.Number), unknownOf(t.ElementType())
	case t.IsSetType():
		val = unknownOf(t.ElementType())
		key = val
	case t.IsMapType():
		key, val = cty.UnknownVal(cty.String), unknownOf(t.ElementType())
	case t.IsObjectType():
		key = cty.UnknownVal(cty.String)
	case t.IsTupleType():
		key = cty.UnknownVal(cty.Number)
	}
	child := ctx.NewChild()
	child.Variables = map[string]cty.Value{f.ValVar: val}
	if f.KeyVar != "" {
		child.Variables[f.KeyVar] = key
	}
	return child
}

// outerFors returns the for expressions in e that are not inside another
// for expression in e.
func outerFors(e hcl.Expression) []*hclsyntax.ForExpr {
	node, ok := e.(hclsyntax.Node)
	if !ok {
		return nil
	}
	var all []*hclsyntax.ForExpr
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		if f, ok := n.(*hclsyntax.ForExpr); ok {
			all = append(all, f)
		}
		return nil
	})
	var out []*hclsyntax.ForExpr
	for _, f := range all {
		inner := false
		for _, g := range all {
			if g != f && contains(g.SrcRange, f.SrcRange) {
				inner = true
				break
			}
		}
		if !inner {
			out = append(out, f)
		}
	}
	return out
}

func contains(outer, inner hcl.Range) bool {
	return outer.Filename == inner.Filename && outer.Start.Byte <= inner.Start.Byte && inner.End.Byte <= outer.End.Byte
}

// typeCheckScript checks a shell script template the way the interpreter
// renders it (renderScript): each interpolation on its own, since a list
// is quoted into a script as words where a string template would refuse
// it.
func typeCheckScript(e hcl.Expression, ctx *hcl.EvalContext) hcl.Diagnostics {
	switch e := e.(type) {
	case *hclsyntax.TemplateExpr:
		var diags hcl.Diagnostics
		for _, p := range e.Parts {
			diags = append(diags, typeCheckScript(p, ctx)...)
		}
		return diags
	case *hclsyntax.LiteralValueExpr:
		return nil
	case *hclsyntax.TemplateWrapExpr:
		return typeCheckExpr(e.Wrapped, ctx)
	case *hclsyntax.ConditionalExpr:
		if isTemplateExpr(e.TrueResult) && isTemplateExpr(e.FalseResult) {
			diags := typeCheckExpr(e.Condition, ctx)
			diags = append(diags, typeCheckScript(e.TrueResult, ctx)...)
			return append(diags, typeCheckScript(e.FalseResult, ctx)...)
		}
	case *hclsyntax.TemplateJoinExpr:
		if f, ok := e.Tuple.(*hclsyntax.ForExpr); ok && isTemplateExpr(f.ValExpr) {
			diags := typeCheckExpr(f.CollExpr, ctx)
			return append(diags, typeCheckFor(f, ctx, true)...)
		}
	}
	return typeCheckExpr(e, ctx)
}

func isTemplateExpr(e hcl.Expression) bool {
	_, ok := e.(*hclsyntax.TemplateExpr)
	return ok
}

// typeErrors keeps the errors of an evaluation, with a "Did you mean" for
// an attribute the value's type does not have.
func typeErrors(diags hcl.Diagnostics) hcl.Diagnostics {
	var out hcl.Diagnostics
	for _, d := range diags {
		if d.Severity != hcl.DiagError || d.Subject == nil {
			continue
		}
		if d.Summary == "Unsupported attribute" {
			d = withAttrSuggestion(d)
		}
		// The evaluation context is of unknowns; a caller printing it
		// would mislead.
		d.Expression, d.EvalContext = nil, nil
		out = append(out, d)
	}
	return out
}

// withAttrSuggestion adds the names the value has to HCL's "This object
// does not have an attribute named ...", found by evaluating the traversal
// up to the missing attribute.
func withAttrSuggestion(d *hcl.Diagnostic) *hcl.Diagnostic {
	var name string
	if _, err := fmt.Sscanf(d.Detail, "This object does not have an attribute named %q.", &name); err != nil || d.EvalContext == nil {
		return d
	}
	var prefix cty.Value
	switch e := d.Expression.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		i := stepAt(e.Traversal, *d.Subject)
		if i < 1 {
			return d
		}
		v, diags := e.Traversal[:i].TraverseAbs(d.EvalContext)
		if diags.HasErrors() {
			return d
		}
		prefix = v
	case *hclsyntax.RelativeTraversalExpr:
		i := stepAt(e.Traversal, *d.Subject)
		if i < 0 {
			return d
		}
		src, diags := e.Source.Value(d.EvalContext)
		if diags.HasErrors() {
			return d
		}
		v, diags := e.Traversal[:i].TraverseRel(src)
		if diags.HasErrors() {
			return d
		}
		prefix = v
	default:
		return d
	}
	t := prefix.Type()
	if !t.IsObjectType() {
		return d
	}
	names := slices.Sorted(maps.Keys(t.AttributeTypes()))
	out := *d
	if s := Suggest(name, names); s != "" {
		out.Detail = fmt.Sprintf("%s Did you mean %q?", d.Detail, s)
	} else if len(names) > 0 {
		out.Detail = fmt.Sprintf("%s It has %s.", d.Detail, quotedList(names))
	}
	return &out
}

// stepAt finds the traversal step whose range is rng.
func stepAt(tr hcl.Traversal, rng hcl.Range) int {
	for i, s := range tr {
		if s.SourceRange() == rng {
			return i
		}
	}
	return -1
}
