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

// runOrder is, for each step of the main walk and its for_each bodies,
// the steps that may and that must have run before it.
type runOrder struct {
	may  map[*Step]map[*Step]bool
	must map[*Step]map[*Step]bool
}

func newRunOrder(p *Playbook) *runOrder {
	pred := map[*Step][]*Step{}
	var steps []*Step
	var walk func([]*Step)
	walk = func(ss []*Step) {
		for _, s := range ss {
			steps = append(steps, s)
			for _, succ := range s.Successors() {
				if succ.To != nil && succ.To != s {
					pred[succ.To] = append(pred[succ.To], s)
				}
			}
			if s.ForEach != nil {
				walk(s.ForEach.Steps)
			}
		}
	}
	walk(p.Steps)
	o := &runOrder{may: map[*Step]map[*Step]bool{}, must: map[*Step]map[*Step]bool{}}
	for _, s := range steps {
		seen := map[*Step]bool{}
		queue := slices.Clone(pred[s])
		for len(queue) > 0 {
			q := queue[0]
			queue = queue[1:]
			if seen[q] {
				continue
			}
			seen[q] = true
			queue = append(queue, pred[q]...)
		}
		o.may[s] = seen
	}
	// Dominators, by the usual fixed point: a step must have run before
	// S when it is on every path from the start to S.
	all := map[*Step]bool{}
	for _, s := range steps {
		all[s] = true
	}
	var entry *Step
	if len(p.Steps) > 0 {
		entry = p.Steps[0]
	}
	dom := map[*Step]map[*Step]bool{}
	for _, s := range steps {
		if s == entry {
			dom[s] = map[*Step]bool{s: true}
		} else {
			dom[s] = all
		}
	}
	for changed := true; changed; {
		changed = false
		for _, s := range steps {
			if s == entry || len(pred[s]) == 0 {
				continue
			}
			var next map[*Step]bool
			for _, p := range pred[s] {
				if next == nil {
					next = map[*Step]bool{}
					for d := range dom[p] {
						next[d] = true
					}
					continue
				}
				for d := range next {
					if !dom[p][d] {
						delete(next, d)
					}
				}
			}
			next[s] = true
			if len(next) != len(dom[s]) {
				dom[s], changed = next, true
			}
		}
	}
	for s, d := range dom {
		m := map[*Step]bool{}
		for x := range d {
			if x != s {
				m[x] = true
			}
		}
		o.must[s] = m
	}
	return o
}

// check says what is wrong with step s reading steps.x.output, guarded
// or not; nil when nothing is.
func (o *runOrder) check(s, x *Step, guarded bool, rng hcl.Range) *hcl.Diagnostic {
	may, ok := o.may[s]
	if !ok || x == s || x.Parent == s {
		return nil
	}
	switch {
	case !may[x]:
		return errDiag("Output of a step that cannot have run",
			fmt.Sprintf("Step %q reads steps.%s.output, but no path to %s passes through %s: the output is always null there.", s.Name, x.Name, s.Name, x.Name), rng)
	case !o.must[s][x] && !guarded:
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
		for _, tr := range rc.expr.Variables() {
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

// outputRead is the step whose output a traversal reads (steps.X.output).
func (l *loader) outputRead(tr hcl.Traversal) (*Step, bool) {
	if tr.RootName() != RootSteps {
		return nil, false
	}
	names := attrNames(tr[1:])
	if len(names) < 2 || names[1] != "output" {
		return nil, false
	}
	x := l.pb.Step(names[0])
	return x, x != nil
}

// hclGuards says which reads of an HCL expression are guarded: steps,
// the steps whose reads it guards everywhere (compared with null, or
// whose status or attempts it reads); reads, the reads inside try() or
// can(), by where they start.
func hclGuards(e hcl.Expression) (steps map[string]bool, reads map[int]bool) {
	g, reads := map[string]bool{}, map[int]bool{}
	node, ok := e.(hclsyntax.Node)
	if !ok {
		return g, reads
	}
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
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
			for _, tr := range n.Condition.Variables() {
				if names := attrNames(tr[1:]); tr.RootName() == RootSteps && len(names) > 0 {
					tested[names[0]] = true
				}
			}
			for _, branch := range []hclsyntax.Expression{n.TrueResult, n.FalseResult} {
				for _, tr := range branch.Variables() {
					if names := attrNames(tr[1:]); tr.RootName() == RootSteps && len(names) > 0 && tested[names[0]] {
						reads[tr.SourceRange().Start.Byte] = true
					}
				}
			}
		case *hclsyntax.BinaryOpExpr:
			if isNull(n.LHS) || isNull(n.RHS) {
				for _, tr := range n.Variables() {
					if names := attrNames(tr[1:]); tr.RootName() == RootSteps && len(names) > 0 {
						g[names[0]] = true
					}
				}
			}
		case *hclsyntax.ScopeTraversalExpr:
			if names := attrNames(n.Traversal[1:]); n.Traversal.RootName() == RootSteps && len(names) > 1 && (names[1] == "status" || names[1] == "attempts") {
				g[names[0]] = true
			}
		}
		return nil
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
