package lang

import (
	"fmt"
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Use before run: an expression of step S that reads steps.X.output
// where X cannot have run before S is a mistake a dry run would find
// only on the path it takes. The step graph (Successors) says which
// steps may have run before S (some path from the start to S passes
// through them) and which must have (every path does):
//   - no path: an error;
//   - some paths only: a warning, unless the expression guards for a
//     step that did not run: try() or can() around the read, ?. or ??,
//     a null check, a read of steps.X.status or steps.X.attempts, or a
//     conditional (c ? a : b) whose condition reads the step.
//
// A step's own output is never flagged (its gate reads what its action
// made; its when reads the last visit's). The sections that run after
// the main walk (on_failure, finally) and the output block may follow
// any step, and are not checked.

// runOrder answers, for a step S of the main walk or a for_each body and
// a step X, whether X may have run before S (some path from the start to
// S passes through X) and whether it must have (every path does). The
// answers are worked out per question, by a walk of the graph, and
// remembered: a playbook of many steps reads few outputs, and sets of
// every step's ancestors would grow with the square of its steps.
type runOrder struct {
	entry      *Step
	pred, succ map[*Step][]*Step
	ancestors  map[*Step]map[*Step]bool // S: the steps that may run before it
	avoiding   map[*Step]map[*Step]bool // X: the steps reachable from the start without X
}

func newRunOrder(p *Playbook) *runOrder {
	o := &runOrder{pred: map[*Step][]*Step{}, succ: map[*Step][]*Step{},
		ancestors: map[*Step]map[*Step]bool{}, avoiding: map[*Step]map[*Step]bool{}}
	if len(p.Steps) > 0 {
		o.entry = p.Steps[0]
	}
	var walk func([]*Step)
	walk = func(ss []*Step) {
		for _, s := range ss {
			o.succ[s] = nil
			for _, succ := range s.Successors() {
				if succ.To != nil && succ.To != s {
					o.pred[succ.To] = append(o.pred[succ.To], s)
					o.succ[s] = append(o.succ[s], succ.To)
				}
			}
			if s.ForEach != nil {
				walk(s.ForEach.Steps)
			}
		}
	}
	walk(p.Steps)
	return o
}

// reach is every step reached from the starts by next, without entering
// avoid.
func reach(starts []*Step, next map[*Step][]*Step, avoid *Step) map[*Step]bool {
	seen := map[*Step]bool{}
	queue := slices.Clone(starts)
	for len(queue) > 0 {
		q := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if q == avoid || seen[q] {
			continue
		}
		seen[q] = true
		queue = append(queue, next[q]...)
	}
	return seen
}

// mayPrecede reports whether x may have run before s.
func (o *runOrder) mayPrecede(x, s *Step) bool {
	a, ok := o.ancestors[s]
	if !ok {
		a = reach(o.pred[s], o.pred, nil)
		o.ancestors[s] = a
	}
	return a[x]
}

// mustPrecede reports whether x runs before s on every path to s: s
// cannot be reached from the start without passing through x.
func (o *runOrder) mustPrecede(x, s *Step) bool {
	if o.entry == nil {
		return false
	}
	r, ok := o.avoiding[x]
	if !ok {
		r = reach([]*Step{o.entry}, o.succ, x)
		o.avoiding[x] = r
	}
	return !r[s]
}

// check says what is wrong with step s reading steps.x.output, guarded
// or not; nil when nothing is.
func (o *runOrder) check(s, x *Step, guarded bool, rng hcl.Range) *hcl.Diagnostic {
	if _, ok := o.succ[s]; !ok || x == s || x.Parent == s {
		return nil
	}
	switch {
	case !o.mayPrecede(x, s):
		return errDiag("Output of a step that cannot have run",
			fmt.Sprintf("Step %q reads steps.%s.output, but no path to %s passes through %s: the output is always null there.", s.Name, x.Name, s.Name, x.Name), rng)
	case !guarded && !o.mustPrecede(x, s):
		return warnDiag("Output of a step that may not have run",
			fmt.Sprintf("Step %q reads steps.%s.output, but some paths to %s skip %s, where the output is null. Guard the read: try(steps.%s.output.FIELD, DEFAULT) in a value, steps.%s.output?.FIELD ?? DEFAULT in a condition, or check steps.%s.status.", s.Name, x.Name, s.Name, x.Name, x.Name, x.Name, x.Name), rng)
	}
	return nil
}

// checkUseBeforeRun checks the step-owned expressions: conditions of a
// step (when, its gate's rules, checks, progress_when) and the value
// expressions of its action and gate.
func (l *loader) checkUseBeforeRun() hcl.Diagnostics {
	o := newRunOrder(l.pb)
	var diags hcl.Diagnostics
	for _, rc := range l.refChecks {
		s := rc.scope.step
		if s == nil {
			continue
		}
		steps, reads := hclGuards(rc.expr)
		for _, tr := range l.traversals(rc.expr) {
			x, ok := l.outputRead(tr)
			if !ok {
				continue
			}
			guarded := steps[x.Name] || reads[tr.SourceRange().Start.Byte]
			if d := o.check(s, x, guarded, tr.SourceRange()); d != nil {
				diags = append(diags, d)
			}
		}
	}
	for _, s := range l.pb.AllSteps() {
		for _, c := range stepConditions(s) {
			if c == nil || c.Program == nil {
				continue
			}
			guarded := strings.Contains(c.Source, "?.") || strings.Contains(c.Source, "??")
			for _, name := range conditionOutputReads(c) {
				x := l.pb.Step(name)
				if x == nil {
					continue
				}
				g := guarded || strings.Contains(c.Source, "steps."+name+".status") || strings.Contains(c.Source, "steps."+name+".attempts")
				if d := o.check(s, x, g, c.Range); d != nil {
					diags = append(diags, d)
				}
			}
		}
	}
	return diags
}

// stepRead names the step a traversal of steps reads (steps.X...) and
// the field it reads ("" for steps.X alone).
func stepRead(tr hcl.Traversal) (step, field string, ok bool) {
	if tr.RootName() != RootSteps {
		return "", "", false
	}
	names := attrNames(tr[1:])
	switch len(names) {
	case 0:
		return "", "", false
	case 1:
		return names[0], "", true
	}
	return names[0], names[1], true
}

// outputRead is the step whose output a traversal reads (steps.X.output).
func (l *loader) outputRead(tr hcl.Traversal) (*Step, bool) {
	name, field, ok := stepRead(tr)
	if !ok || field != "output" {
		return nil, false
	}
	x := l.pb.Step(name)
	return x, x != nil
}

// guardSteps marks the steps e reads as guarded.
func guardSteps(g map[string]bool, e hcl.Expression) {
	for _, tr := range e.Variables() {
		if name, _, ok := stepRead(tr); ok {
			g[name] = true
		}
	}
}

// hclGuards says which reads of an HCL expression are guarded: steps,
// the steps whose reads it guards everywhere (compared with null, or
// whose status or attempts it reads); reads, the reads inside try() or
// can(), by where they start.
func hclGuards(e hcl.Expression) (steps map[string]bool, reads map[int]bool) {
	g, reads := map[string]bool{}, map[int]bool{}
	node, ok := e.(hclsyntax.Expression)
	if !ok {
		return g, reads
	}
	visitExprs(node, func(n hclsyntax.Expression) {
		switch n := n.(type) {
		case *hclsyntax.FunctionCallExpr:
			if n.Name == "try" || n.Name == "can" {
				for _, a := range n.Args {
					for _, tr := range a.Variables() {
						reads[tr.SourceRange().Start.Byte] = true
					}
				}
			}
		case *hclsyntax.ConditionalExpr:
			// cond ? a : b, where cond reads the step: the author chose
			// between its outcomes.
			tested := map[string]bool{}
			guardSteps(tested, n.Condition)
			for _, branch := range []hclsyntax.Expression{n.TrueResult, n.FalseResult} {
				for _, tr := range branch.Variables() {
					if name, _, ok := stepRead(tr); ok && tested[name] {
						reads[tr.SourceRange().Start.Byte] = true
					}
				}
			}
		case *hclsyntax.BinaryOpExpr:
			if isNull(n.LHS) || isNull(n.RHS) {
				guardSteps(g, n)
			}
		case *hclsyntax.ScopeTraversalExpr:
			if name, field, ok := stepRead(n.Traversal); ok && (field == "status" || field == "attempts") {
				g[name] = true
			}
		}
	})
	return g, reads
}

func isNull(e hclsyntax.Expression) bool {
	lit, ok := e.(*hclsyntax.LiteralValueExpr)
	return ok && lit.Val.IsNull()
}

// stepConditions are the conditions that belong to a step.
func stepConditions(s *Step) []*Condition {
	out := []*Condition{s.When, s.ProgressWhen}
	for _, c := range s.Checks {
		out = append(out, c.Condition)
	}
	if s.Gate != nil {
		for _, r := range s.Gate.Rules {
			out = append(out, r.When)
		}
	}
	return out
}

// conditionOutputReads lists the steps whose output a condition reads
// (steps.X.output or steps["X"].output).
func conditionOutputReads(c *Condition) []string {
	var names []string
	ast.Find(c.Program.Node(), func(n ast.Node) bool {
		m, ok := n.(*ast.MemberNode)
		if !ok {
			return false
		}
		prop, ok := m.Property.(*ast.StringNode)
		if !ok || prop.Value != "output" {
			return false
		}
		inner, ok := m.Node.(*ast.MemberNode)
		if !ok {
			return false
		}
		id, ok := inner.Node.(*ast.IdentifierNode)
		step, ok2 := inner.Property.(*ast.StringNode)
		if ok && ok2 && id.Value == RootSteps && !slices.Contains(names, step.Value) {
			names = append(names, step.Value)
		}
		return false
	})
	return names
}
