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
	tc := &typeChecker{l: l, ctxs: map[Scope]*hcl.EvalContext{}}
	scripts := map[hcl.Expression]bool{}
	for _, s := range l.pb.AllSteps() {
		if sh, ok := s.Action.(*Shell); ok && sh.Script != nil {
			scripts[sh.Script] = true
		}
	}
	vars := l.varsKnown()
	var diags hcl.Diagnostics
	bad := map[hcl.Expression]bool{}
	var checks []typeCheck
	for i, rc := range l.refChecks {
		if i < len(l.refErrs) && l.refErrs[i] || i >= len(l.refErrs) && l.checkRefs(rc.expr, rc.scope).HasErrors() {
			// Reported already; an evaluation would only repeat it.
			bad[rc.expr] = true
			continue
		}
		d := l.checkOutputTraversals(rc.expr)
		d = append(d, l.checkVarTraversals(rc.expr, rc.scope, vars)...)
		if d.HasErrors() {
			bad[rc.expr] = true
			checks = append(checks, typeCheck{before: d})
			continue
		}
		checks = append(checks, typeCheck{before: d, expr: rc.expr, ctx: tc.scopeCtx(rc.scope), script: scripts[rc.expr]})
	}
	runTypeChecks(checks)
	for _, c := range checks {
		diags = append(diags, c.before...)
		diags = append(diags, c.found...)
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

// A typeCheck is the evaluation of one expression against the unknowns
// of its scope (typeCheckExpr, or typeCheckScript for a script), and
// what it found; before are the diagnostics reported ahead of it.
type typeCheck struct {
	before hcl.Diagnostics
	expr   hcl.Expression // nil: nothing to evaluate
	ctx    *hcl.EvalContext
	script bool
	found  hcl.Diagnostics
}

// minParallelTypeChecks is how many expressions a playbook has before
// runTypeChecks shares them between goroutines (a variable for tests).
var minParallelTypeChecks = 64

// runTypeChecks evaluates checks, on as many goroutines as there are CPUs
// when there are many: the evaluations are a quarter of a load, and each
// only reads its context and its expression (loads of several playbooks
// already evaluate against the same functions at once). A panic in one is
// raised again here, on the load's goroutine.
func runTypeChecks(checks []typeCheck) {
	one := func(c *typeCheck) {
		if c.expr == nil {
			return
		}
		if c.script {
			c.found = typeCheckScript(c.expr, c.ctx)
		} else {
			c.found = typeCheckExpr(c.expr, c.ctx)
		}
	}
	parallel(len(checks), 2*len(checks)/max(minParallelTypeChecks, 1), func(i int) { one(&checks[i]) })
}

// typeChecker builds, once per scope, the evaluation context of type
// checks: the scope's unknowns.
type typeChecker struct {
	l    *loader
	ctxs map[Scope]*hcl.EvalContext
}

// scopeCtx is what an expression of scope sees: its section, and the
// locals of the step it belongs to.
func (tc *typeChecker) scopeCtx(sc refScope) *hcl.EvalContext { return tc.ctx(sc.scope()) }

// stepCtx is what step s's own expressions see once its locals are
// evaluated.
func (tc *typeChecker) stepCtx(s *Step) *hcl.EvalContext {
	return tc.ctx(Scope{Body: s.Parent, Step: s})
}

func (tc *typeChecker) ctx(sc Scope) *hcl.EvalContext {
	sc = sc.normal()
	if c, ok := tc.ctxs[sc]; ok {
		return c
	}
	c := &hcl.EvalContext{Variables: tc.l.unknowns(sc), Functions: typeCheckFunctions}
	tc.ctxs[sc] = c
	return c
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
	node, ok := e.(hclsyntax.Expression)
	if !ok {
		return nil
	}
	var all []*hclsyntax.ForExpr
	visitExprs(node, func(n hclsyntax.Expression) {
		if f, ok := n.(*hclsyntax.ForExpr); ok {
			all = append(all, f)
		}
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
		out.Detail = fmt.Sprintf("%s It has %s.", d.Detail, quoteList(names))
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
