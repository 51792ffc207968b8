package interp

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// EmptyValue is a value an agent prompt rendered empty (or blank, or
// null) into its text: "Phase goal: " with nothing after it. An agent
// knows only its prompt, so such a line tells it nothing, or misleads it.
type EmptyValue struct {
	// Playbook is the name of the playbook whose step it is (a sub-run's
	// for a playbook step's).
	Playbook string
	Step     string
	// Item is the for_each item's key, "" outside a for_each.
	Item string
	// Prompt is the prompt block's name, "" for an inline template.
	Prompt string
	// Expr is the interpolation's source: inputs.phase_goal,
	// join(", ", vars.issues).
	Expr string
	// Range is where the interpolation is in the template.
	Range hcl.Range
	Null  bool
	expr  hcl.Expression
}

func (e EmptyValue) String() string {
	step := StepKey(e.Step, e.Item)
	prompt := "its prompt"
	if e.Prompt != "" {
		prompt = fmt.Sprintf("prompt %q", e.Prompt)
	}
	what := "empty"
	if e.Null {
		what = "null"
	}
	return fmt.Sprintf("%s:%d: step %q: %s renders ${%s} %s", e.Range.Filename, e.Range.Start.Line, step, prompt, e.Expr, what)
}

// emptyValues walks a rendered template as the render did, with the same
// context, and returns each interpolation that gave an empty or blank
// string or null, unless it reads a name optional lists. Literal text is
// never flagged, so ${x ? "" : "..."} is not; a part that failed to
// evaluate is left to the render, which reported it.
func emptyValues(expr hcl.Expression, ctx *hcl.EvalContext, optional []hcl.Traversal) []EmptyValue {
	w := emptyWalk{optional: optional}
	w.walk(expr, ctx)
	return w.found
}

type emptyWalk struct {
	optional []hcl.Traversal
	found    []EmptyValue
}

func (w *emptyWalk) walk(expr hcl.Expression, ctx *hcl.EvalContext) {
	switch e := expr.(type) {
	case *hclsyntax.TemplateExpr:
		for _, p := range e.Parts {
			w.walk(p, ctx)
		}
		return
	case *hclsyntax.LiteralValueExpr:
		return
	case *hclsyntax.TemplateWrapExpr:
		w.walk(e.Wrapped, ctx)
		return
	case *hclsyntax.ConditionalExpr:
		c, diags := e.Condition.Value(ctx)
		if diags.HasErrors() || !c.IsKnown() || c.IsNull() {
			return
		}
		if c, err := convert.Convert(c, cty.Bool); err == nil {
			if c.True() {
				w.walk(e.TrueResult, ctx)
			} else {
				w.walk(e.FalseResult, ctx)
			}
		}
		return
	case *hclsyntax.TemplateJoinExpr:
		if f, ok := e.Tuple.(*hclsyntax.ForExpr); ok && isTemplate(f.ValExpr) {
			w.walkFor(f, ctx)
			return
		}
	}
	w.check(expr, ctx)
}

// walkFor walks a %{ for } directive's body once per element.
func (w *emptyWalk) walkFor(f *hclsyntax.ForExpr, ctx *hcl.EvalContext) {
	coll, diags := f.CollExpr.Value(ctx)
	if diags.HasErrors() || coll.IsNull() || !coll.IsKnown() || !coll.CanIterateElements() {
		return
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
			if diags.HasErrors() || c.IsNull() || c.Type() != cty.Bool || c.False() {
				continue
			}
		}
		w.walk(f.ValExpr, child)
	}
}

// check flags expr when its value renders as nothing.
func (w *emptyWalk) check(expr hcl.Expression, ctx *hcl.EvalContext) {
	v, diags := expr.Value(ctx)
	if diags.HasErrors() || !v.IsKnown() {
		return
	}
	null := v.IsNull()
	if !null {
		s, err := convert.Convert(v, cty.String)
		if err != nil || s.IsNull() || !s.IsKnown() || strings.TrimSpace(s.AsString()) != "" {
			return
		}
	}
	for _, tr := range expr.Variables() {
		for _, opt := range w.optional {
			if lang.TraversalCovers(opt, tr) {
				return
			}
		}
	}
	w.found = append(w.found, EmptyValue{Range: expr.Range(), Null: null, expr: expr})
}

// exprSource is an expression's source text, when pb holds its file,
// else the names it reads.
func exprSource(pb *lang.Playbook, expr hcl.Expression) string {
	if text := pb.SourceText(expr.Range()); text != "" {
		return text
	}
	var names []string
	for _, tr := range expr.Variables() {
		names = append(names, lang.TraversalText(tr))
	}
	return strings.Join(names, ", ")
}

// reportEmpty tells the run's EmptyValue of each value the prompt of step
// s rendered empty, walking the template with the context it rendered
// with.
func (r *run) reportEmpty(f *frame, s *lang.Step, a *lang.AgentCall, ctx *hcl.EvalContext) {
	for _, ev := range emptyValues(a.Template, ctx, a.Optional) {
		ev.Playbook, ev.Step, ev.Item = r.pb.Name, s.Name, f.key()
		if a.Prompt != nil {
			ev.Prompt = a.Prompt.Name
		}
		ev.Expr = exprSource(r.pb, ev.expr)
		ev.expr = nil
		r.opts.EmptyValue(ev)
	}
}

// EmptyValueSet gathers a run's EmptyValues, each place once (a step that
// runs again renders its prompt again), safe for use from several
// goroutines: its Add is an Options.EmptyValue.
type EmptyValueSet struct {
	mu   sync.Mutex
	seen map[emptyKey]bool
	list []EmptyValue
}

type emptyKey struct {
	playbook, step, item string
	rng                  hcl.Range
}

// Add keeps ev unless the set holds one at the same place.
func (s *EmptyValueSet) Add(ev EmptyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := emptyKey{ev.Playbook, ev.Step, ev.Item, ev.Range}
	if s.seen[k] {
		return
	}
	if s.seen == nil {
		s.seen = map[emptyKey]bool{}
	}
	s.seen[k] = true
	s.list = append(s.list, ev)
}

// List returns the values in the order they were first added.
func (s *EmptyValueSet) List() []EmptyValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.list)
}
