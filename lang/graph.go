package lang

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/hashicorp/hcl/v2"
)

// EdgeKind says why control can move along an edge.
type EdgeKind int

const (
	EdgeNext      EdgeKind = iota // declared order or `next`
	EdgeGoto                      // a gate rule's goto
	EdgeExhausted                 // an on_exhausted block's goto
)

// Edge is a possible transition in the step graph.
type Edge struct {
	From, To *Step
	Kind     EdgeKind
	Rule     *Rule // for goto edges
	Max      int   // the cap on this edge; 0 = none
	Range    hcl.Range
}

func (e *Edge) String() string {
	kind := map[EdgeKind]string{EdgeNext: "next", EdgeGoto: "goto", EdgeExhausted: "exhausted"}[e.Kind]
	s := fmt.Sprintf("-> %s (%s", e.To.Name, kind)
	if e.Rule != nil {
		s += " rule=" + e.Rule.Name
	}
	if e.Max > 0 {
		s += fmt.Sprintf(" max=%d", e.Max)
	}
	return s + ")"
}

// buildGraph links steps (declared order unless `next` says otherwise),
// collects every edge, rejects cycles without a capped edge and warns
// about steps no path reaches.
func (l *loader) buildGraph() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, s := range l.pb.ProgressSteps() {
		l.pb.ProgressTotal++
		s.ProgressIndex = l.pb.ProgressTotal
	}
	for _, s := range l.pb.AllSteps() {
		if a := s.progressTemplate; a != nil && l.pb.ProgressTotal > 0 && s.Progress == "" {
			// Progress lines announce only the steps with a progress name
			// once any step has one (spec, "step").
			diags = append(diags, warnDiag("Progress template never shown",
				fmt.Sprintf("Step %q has no progress name while other steps have one, so its start and completion are not announced and %s is never printed. Give the step a progress name.", s.Name, a.Name), a.NameRange))
		}
	}
	// The main steps, then on_failure and finally: those two are entered
	// at their first step whatever happened, so reachability is not
	// checked in them.
	sections := [][]*Step{l.pb.Steps, l.pb.OnFailure, l.pb.Finally}
	for _, s := range l.pb.AllSteps() {
		if s.ForEach != nil {
			sections = append(sections, s.ForEach.Steps)
		}
	}
	for i, section := range sections {
		for i, s := range section {
			if _, explicit := l.explicitNext[s]; !explicit && i+1 < len(section) {
				s.Next = section[i+1]
			}
			s.Edges = l.edges(s)
		}
		diags = append(diags, l.checkCycles(section)...)
		if i != 1 && i != 2 {
			diags = append(diags, l.checkReachable(section)...)
		}
	}
	for _, s := range l.pb.AllSteps() {
		if s.ForEach != nil {
			diags = append(diags, l.checkRelease(s.ForEach)...)
		}
	}
	return diags
}

// checkRelease finds a for_each body's release_slot step and checks that
// no step at or after it routes back before it: an item past the release
// holds no slot, so it may go back only through the queue (requeue).
func (l *loader) checkRelease(fe *ForEach) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, s := range fe.Steps {
		if !s.ReleaseSlot {
			continue
		}
		if fe.ReleaseFrom != nil {
			diags = append(diags, errDiag("Slot released twice",
				fmt.Sprintf("Step %q already releases the item's slot, and every step after it runs without one; only one step of a for_each body says release_slot.", fe.ReleaseFrom.Name), l.stepBlocks[s].DefRange))
			continue
		}
		fe.ReleaseFrom = s
	}
	rel := fe.ReleaseFrom
	if rel == nil {
		return diags
	}
	for _, s := range fe.Steps[rel.Index:] {
		for _, e := range s.Edges {
			if e.To.Index >= rel.Index || e.Rule != nil && requeues(e) {
				continue
			}
			diags = append(diags, errDiag("Route back past the slot's release",
				fmt.Sprintf("Step %q goes back to %q, before %q, which released the item's slot; an item past it runs without a slot. Send it back through the queue with requeue = %q, where it waits for a slot again.", s.Name, e.To.Name, rel.Name, e.To.Name), e.Range))
		}
	}
	return diags
}

// requeues reports whether taking e sends the item back to the queue.
func requeues(e *Edge) bool {
	o := e.Rule.Outcome
	if e.Kind == EdgeExhausted {
		o = o.Exhausted
	}
	return o != nil && o.Requeue
}

// edges are the step-to-step edges of s's successors: the way to its next
// step once (however many successors take it), each capped or uncapped
// goto, and each on_exhausted outcome's.
func (l *loader) edges(s *Step) []*Edge {
	succ := s.Successors()
	// A skipped step (its when is false) goes to next whatever its gate
	// says, so that edge exists too.
	fallsThrough := slices.ContainsFunc(succ, func(x Successor) bool {
		return x.Exit == ExitSkip || x.Exit == ExitNext || x.Exit == ExitRule && !x.Outcome.Routes()
	})
	var out []*Edge
	if fallsThrough && s.Next != nil {
		rng := s.DeclRange
		if r, ok := l.explicitNext[s]; ok {
			rng = r
		}
		out = append(out, &Edge{From: s, To: s.Next, Kind: EdgeNext, Range: rng})
	}
	for _, x := range succ {
		o := x.Outcome
		switch {
		case x.Exit == ExitRule && o.Goto != nil:
			out = append(out, &Edge{From: s, To: x.To, Kind: EdgeGoto, Rule: x.Rule, Max: o.Max, Range: l.gotoRanges[o]})
		case x.Exit == ExitExhausted && o.Goto != nil:
			out = append(out, &Edge{From: s, To: x.To, Kind: EdgeExhausted, Rule: x.Rule, Range: l.gotoRanges[o]})
		case x.Exit == ExitExhausted && x.To != nil && !fallsThrough:
			out = append(out, &Edge{From: s, To: x.To, Kind: EdgeExhausted, Rule: x.Rule, Range: o.DeclRange})
		}
	}
	return out
}

// capped reports whether an edge is a capped goto, or one whose max is
// given but invalid (reported already).
func (l *loader) capped(e *Edge) bool {
	return e.Max > 0 || e.Kind == EdgeGoto && l.badMax[e.Rule.Outcome]
}

// checkCycles finds strongly connected components of the graph without its
// capped edges (Tarjan): any cycle left there could run forever.
func (l *loader) checkCycles(steps []*Step) hcl.Diagnostics {
	index := make(map[*Step]int, len(steps))
	low := make(map[*Step]int, len(steps))
	onStack := make(map[*Step]bool, len(steps))
	var stack []*Step
	var sccs [][]*Step
	next := 0
	var visit func(s *Step)
	visit = func(s *Step) {
		index[s], low[s] = next, next
		next++
		stack = append(stack, s)
		onStack[s] = true
		for _, e := range s.Edges {
			if l.capped(e) {
				continue
			}
			t := e.To
			if _, seen := index[t]; !seen {
				visit(t)
				low[s] = min(low[s], low[t])
			} else if onStack[t] {
				low[s] = min(low[s], index[t])
			}
		}
		if low[s] == index[s] {
			var scc []*Step
			for {
				t := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[t] = false
				scc = append(scc, t)
				if t == s {
					break
				}
			}
			sccs = append(sccs, scc)
		}
	}
	for _, s := range steps {
		if _, seen := index[s]; !seen {
			visit(s)
		}
	}
	var diags hcl.Diagnostics
	for _, scc := range sccs {
		if d := cycleDiag(scc, l.capped); d != nil {
			diags = append(diags, d)
		}
	}
	return diags
}

// cycleDiag reports a strongly connected component of uncapped edges that
// can loop: one of several steps, or one step going to itself. It looks at
// the component's own steps only, so that checking every component of a
// graph is linear (a chain is one component per step).
func cycleDiag(scc []*Step, capped func(*Edge) bool) *hcl.Diagnostic {
	if len(scc) == 1 && !slices.ContainsFunc(scc[0].Edges, func(e *Edge) bool { return !capped(e) && e.To == scc[0] }) {
		return nil
	}
	in := make(map[*Step]bool, len(scc))
	for _, s := range scc {
		in[s] = true
	}
	// Declared order, for the message and to find the edge that closes the
	// cycle: the first uncapped edge inside the component that goes
	// backwards (or to itself).
	slices.SortFunc(scc, func(a, b *Step) int { return a.Index - b.Index })
	var back *Edge
	names := make([]string, 0, len(scc))
	for _, s := range scc {
		names = append(names, s.Name)
		for _, e := range s.Edges {
			if !capped(e) && in[e.To] && e.To.Index <= s.Index && back == nil {
				back = e
			}
		}
	}
	if back == nil {
		return nil
	}
	return errDiag("Unbounded cycle",
		fmt.Sprintf("Steps %s form a loop with no cap: it could run forever. Give the goto that goes back a cap, e.g. goto = %q with max = 3 and an on_exhausted block.",
			strings.Join(names, " → "), back.To.Name), back.Range)
}

func (l *loader) checkReachable(steps []*Step) hcl.Diagnostics {
	if len(steps) == 0 {
		return nil
	}
	seen := map[*Step]bool{steps[0]: true}
	queue := []*Step{steps[0]}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, e := range s.Edges {
			if !seen[e.To] {
				seen[e.To] = true
				queue = append(queue, e.To)
			}
		}
	}
	var diags hcl.Diagnostics
	for _, s := range steps {
		if !seen[s] {
			diags = append(diags, warnDiag("Unreachable step",
				fmt.Sprintf("No path from the first step reaches step %q, so it never runs.", s.Name), s.DeclRange))
		}
	}
	return diags
}

// noteConditionRefs records which inputs a condition reads.
func (l *loader) noteConditionRefs(c *Condition) {
	if c == nil || c.Program == nil {
		return
	}
	ast.Find(c.Program.Node(), func(n ast.Node) bool {
		m, ok := n.(*ast.MemberNode)
		if !ok {
			return false
		}
		id, ok := m.Node.(*ast.IdentifierNode)
		prop, ok2 := m.Property.(*ast.StringNode)
		if ok && ok2 && id.Value == RootInputs {
			l.usedInputs[prop.Value] = true
		}
		return false
	})
}

// runRefChecks checks every queued HCL expression's references.
func (l *loader) runRefChecks() hcl.Diagnostics {
	var diags hcl.Diagnostics
	l.refErrs = make([]bool, len(l.refChecks))
	for i, rc := range l.refChecks {
		d := l.checkRefs(rc.expr, rc.scope)
		l.refErrs[i] = d.HasErrors()
		diags = append(diags, d...)
		for _, tr := range l.traversals(rc.expr) {
			if tr.RootName() == RootInputs {
				if names := attrNames(tr[1:]); len(names) > 0 {
					l.usedInputs[names[0]] = true
				}
			}
		}
	}
	return diags
}

// checkUnused warns about declarations nothing uses.
func (l *loader) checkUnused() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, in := range l.pb.Inputs {
		if !l.usedInputs[in.Name] {
			diags = append(diags, warnDiag("Unused input",
				fmt.Sprintf("Input %q is declared but no expression reads inputs.%s.", in.Name, in.Name), in.DeclRange))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(l.pb.Prompts)) {
		if !l.used["prompt."+n] {
			diags = append(diags, warnDiag("Unused prompt", fmt.Sprintf("No agent step uses prompt %q.", n), l.pb.Prompts[n].DeclRange))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(l.pb.Budgets)) {
		if !l.used["budget."+n] {
			diags = append(diags, warnDiag("Unused budget", fmt.Sprintf("No agent or step uses budget %q.", n), l.pb.Budgets[n].DeclRange))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(l.pb.Types)) {
		if !l.used["type."+n] {
			diags = append(diags, warnDiag("Unused type", fmt.Sprintf("Nothing refers to type.%s.", n), l.pb.Types[n].DeclRange))
		}
	}
	for _, n := range slices.Sorted(maps.Keys(l.pb.Agents)) {
		if !l.used["agent."+n] {
			diags = append(diags, warnDiag("Unused agent", fmt.Sprintf("No step uses agent %q.", n), l.pb.Agents[n].DeclRange))
		}
	}
	return diags
}
