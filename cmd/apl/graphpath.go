package main

import (
	"fmt"
	"strings"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
)

// runPath is one run's way through a playbook, as apl graph --path draws
// it: which steps each frame (the run, or a for_each item) visited in
// order, which gate rule each visit chose, and how the run stands. A
// recorded run gives one (pathFromState); anything else that can say
// which steps ran in which order, such as a dry run, can give another and
// be drawn the same way.
type runPath struct {
	runID, status string
	reason        string
	// frames lists each frame's visits in order; frameOrder is the order
	// frames began. The run's own frame is "".
	frames     map[string][]*visit
	frameOrder []string
	// stopped is the step the run stopped at, when it did not end (waiting,
	// interrupted, still running), or "".
	stopped string
	// stepStatus is the recorded status of each main step.
	stepStatus map[string]string
}

// visit is one step of a frame: run (with the gate rule it chose, if any)
// or skipped.
type visit struct {
	step      string
	skipped   bool
	status    string // completed, failed, skipped, running
	rule      string // the gate rule chosen; "" for none
	exhausted bool   // the rule's cap was used up: its on_exhausted ran
}

// readRunPath reads a recorded run's path: ref is a run id, a run
// directory or "latest".
func readRunPath(runsDir, ref string) (*runPath, error) {
	if runsDir == "" {
		// A checkout may hold a planted .apl symlink: graph reads runs
		// only inside the project, as runs write them.
		dir, err := builtins.ConfinedDir(".", interp.RunsDir("."))
		if err != nil {
			return nil, err
		}
		runsDir = dir
	}
	dir, err := interp.ResolveRun(runsDir, ref)
	if err != nil {
		return nil, err
	}
	st, _, err := interp.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	// The whole event log: a long run keeps only its newest in the state.
	if st.Events, err = interp.ReadEvents(dir, st); err != nil {
		return nil, err
	}
	return pathFromState(st), nil
}

// pathFromState reads a run's path from its event log. A step that starts
// again with no gate decision in between (a retry, a resumed run) is one
// visit; a step_reused event is a visit of an earlier session, already in
// the log.
func pathFromState(st *interp.State) *runPath {
	p := &runPath{runID: st.Meta.RunID, status: st.Meta.Status, reason: st.Meta.Reason,
		frames: map[string][]*visit{}, stepStatus: map[string]string{}}
	if st.Meta.Recommendation != "" && st.Meta.Status == interp.StatusFailed {
		p.status += " (" + st.Meta.Recommendation + ")"
	}
	for name, rec := range st.Steps {
		p.stepStatus[name] = rec.Status
	}
	last := func(frame string) *visit {
		vs := p.frames[frame]
		if len(vs) == 0 {
			return nil
		}
		return vs[len(vs)-1]
	}
	add := func(frame string, vis *visit) {
		if _, ok := p.frames[frame]; !ok {
			p.frameOrder = append(p.frameOrder, frame)
		}
		p.frames[frame] = append(p.frames[frame], vis)
	}
	for _, e := range st.Events {
		if e.Step == "" {
			continue
		}
		frame := e.Item
		l := last(frame)
		switch e.Type {
		case interp.EventStepStarted:
			if l != nil && l.step == e.Step && !l.skipped && l.rule == "" {
				l.status = interp.StepRunning
				continue
			}
			add(frame, &visit{step: e.Step, status: interp.StepRunning})
		case interp.EventStepSkipped:
			add(frame, &visit{step: e.Step, skipped: true, status: interp.StepSkipped})
		case interp.EventStepCompleted, interp.EventStepFailed:
			if l != nil && l.step == e.Step {
				l.status = map[string]string{interp.EventStepCompleted: interp.StepCompleted, interp.EventStepFailed: interp.StepFailed}[e.Type]
			}
		case interp.EventGateDecision:
			if l != nil && l.step == e.Step {
				l.rule, _ = e.Details["rule"].(string)
			}
		case interp.EventCapExhausted:
			if l != nil && l.step == e.Step {
				l.exhausted = true
			}
		}
	}
	switch st.Meta.Status {
	case interp.StatusCompleted, interp.StatusFailed:
	default:
		p.stopped = st.Meta.CurrentStep
		if w := st.Waiting; w != nil && w.Step != "" {
			// A decision inside a for_each body: the step that asks.
			p.stopped = w.Step
		}
		if l := last(""); p.stopped == "" && l != nil {
			p.stopped = l.step
		}
	}
	return p
}

// pathOverlay is a runPath laid on a view: counts per node, edge and route.
type pathOverlay struct {
	*runPath
	nodes   map[*vnode]*nodeMark
	edges   map[*vedge]int
	routes  map[*route]int
	reached map[*vnode]bool // ends the run or its items reached
}

type nodeMark struct {
	runs, completed, failed, skipped int
	stopped                          bool
}

// overlay lays p on the view.
func (v *view) overlay(p *runPath) {
	o := &pathOverlay{runPath: p, nodes: map[*vnode]*nodeMark{}, edges: map[*vedge]int{},
		routes: map[*route]int{}, reached: map[*vnode]bool{}}
	v.path = o
	mark := func(n *vnode) *nodeMark {
		if o.nodes[n] == nil {
			o.nodes[n] = &nodeMark{}
		}
		return o.nodes[n]
	}
	take := func(r *route) {
		if r == nil {
			return
		}
		o.routes[r]++
		o.edges[r.edge]++
		if r.to.kind == nodeEnd {
			o.reached[r.to] = true
			mark(r.to).runs++
		}
	}
	var failedEnd *vnode
	for _, frame := range p.frameOrder {
		// The run's own frame holds its main steps, then its on_failure
		// and finally steps: sections, each with its own entry.
		var sections [][]*visit
		var cur []*visit
		for _, vis := range p.frames[frame] {
			s := v.pb.Step(vis.step)
			if s == nil {
				continue
			}
			if len(cur) > 0 {
				if c := v.pb.Step(cur[0].step); s.OnFailure != c.OnFailure || s.Finally != c.Finally {
					sections = append(sections, cur)
					cur = nil
				}
			}
			cur = append(cur, vis)
		}
		if len(cur) > 0 {
			sections = append(sections, cur)
		}
		for _, visits := range sections {
			first := v.byStep[v.pb.Step(visits[0].step)]
			var entry *vnode
			switch {
			case first.cluster.step != nil:
				entry = v.byStep[first.cluster.step]
			case first.step.OnFailure:
				entry = failedEnd
			case first.step.Finally:
				entry = nil // after whichever ending the run reached
			default:
				entry = v.start
			}
			prev := entry
			for i, vis := range visits {
				n := v.byStep[v.pb.Step(vis.step)]
				m := mark(n)
				switch vis.status {
				case interp.StepSkipped:
					m.skipped++
				case interp.StepFailed:
					m.failed++
					m.runs++
				case interp.StepCompleted:
					m.completed++
					m.runs++
				default:
					m.runs++
				}
				if vis.skipped {
					take(findRoute(v, prev, v.next(n.step), func(r *route) bool { return r.kind == routeSkip && r.skipped == n.step }))
				} else if i == 0 && prev != nil {
					take(findRoute(v, prev, n, nil))
				}
				if !vis.skipped {
					var to *vnode
					if i+1 < len(visits) && !visits[i+1].skipped {
						to = v.byStep[v.pb.Step(visits[i+1].step)]
					}
					// A rule the gate chose was taken even when the step it
					// goes to was then skipped (the bypass shows that too).
					r := chosenRoute(v, n, vis, to)
					if vis.rule != "" || to != nil || (r != nil && r.to.kind == nodeEnd && vis.status != interp.StepFailed) {
						take(r)
						if r != nil && r.to.kind == nodeEnd && r.to.failed && r.to.cluster.id == "" {
							failedEnd = r.to
						}
					}
				}
				prev = n
			}
		}
	}
	if p.stopped != "" {
		if s := v.pb.Step(p.stopped); s != nil {
			mark(v.byStep[s]).stopped = true
		}
	}
}

// chosenRoute is the route a visit of n left by: the gate rule it chose
// (or that rule's on_exhausted), else the one route to `to`, else (the
// frame's last visit) the route to the end of the section.
func chosenRoute(v *view, n *vnode, vis *visit, to *vnode) *route {
	if vis.rule != "" {
		for _, r := range v.routesFrom(n) {
			if r.rule != nil && r.rule.Name == vis.rule && (r.kind == routeExhausted) == vis.exhausted {
				return r
			}
		}
	}
	if to != nil {
		return findRoute(v, n, to, nil)
	}
	if vis.status == interp.StepCompleted && (n.step.Gate == nil || vis.rule == "") {
		return findRoute(v, n, v.next(n.step), func(r *route) bool { return r.kind == routeNext })
	}
	return nil
}

// findRoute is a route from one node to another that ok accepts (nil:
// any but a skip).
func findRoute(v *view, from, to *vnode, ok func(*route) bool) *route {
	if from == nil || to == nil {
		return nil
	}
	for _, r := range v.routes {
		if r.from == from && r.to == to && (ok == nil && r.kind != routeSkip || ok != nil && ok(r)) {
			return r
		}
	}
	return nil
}

// stepNote is a step's line suffix in text: how often it ran and how.
func (o *pathOverlay) stepNote(n *vnode) string {
	if o == nil {
		return ""
	}
	m := o.nodes[n]
	if m == nil {
		return "  (not reached)"
	}
	var parts []string
	for _, c := range []struct {
		n    int
		what string
	}{{m.completed, "completed"}, {m.failed, "failed"}, {m.skipped, "skipped"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%s ×%d", c.what, c.n))
		}
	}
	if running := m.runs - m.completed - m.failed; running > 0 {
		parts = append(parts, fmt.Sprintf("running ×%d", running))
	}
	if m.stopped {
		parts = append(parts, "stopped here: "+o.status)
	}
	return "  (" + strings.Join(parts, ", ") + ")"
}

// routeNote is a route's line suffix in text: how often the run took it.
func (o *pathOverlay) routeNote(r *route) string {
	if o == nil || o.routes[r] == 0 {
		return ""
	}
	return fmt.Sprintf("  (taken ×%d)", o.routes[r])
}

// skipNote is the suffix of a skipped step's bypass line in text.
func (o *pathOverlay) skipNote(v *view, s *lang.Step) string {
	if o == nil {
		return ""
	}
	n := 0
	for _, r := range v.routes {
		if r.kind == routeSkip && r.skipped == s {
			n += o.routes[r]
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("  (taken ×%d)", n)
}

// stepBadge is a step's line in its node: how often it ran and how.
func (o *pathOverlay) stepBadge(n *vnode) string {
	if o == nil || o.nodes[n] == nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(o.stepNote(n), "  ("), ")")
}

// edgeLabel is a taken edge's label: each route's name with how often the
// run took it.
func (o *pathOverlay) edgeLabel(e *vedge) []string {
	var l []string
	for _, r := range e.routes {
		n, c := r.name(), o.routes[r]
		switch {
		case n != "" && c > 0:
			l = append(l, fmt.Sprintf("%s ×%d", n, c))
		case n != "":
			l = append(l, n)
		}
	}
	if len(l) == 0 {
		l = append(l, fmt.Sprintf("×%d", o.edges[e]))
	}
	return l
}

// Colours of a run drawn over the graph.
const (
	colorVisited = "#2e7d32"
	colorUnseen  = "#bbbbbb"
)

func (o *pathOverlay) dotNodeAttrs(n *vnode) []string {
	if o == nil || n.kind == nodeStart {
		return nil
	}
	m := o.nodes[n]
	if m == nil {
		return []string{"color=" + dotString(colorUnseen), "fontcolor=" + dotString(colorUnseen)}
	}
	var a []string
	switch {
	case m.failed > 0 && m.completed == 0 || n.kind == nodeEnd && n.failed:
		a = append(a, "color="+dotString(colorFail), "penwidth=2.5")
	case m.runs == 0 && m.skipped > 0:
		a = append(a, "color="+dotString(colorMuted), `style="rounded,filled,dashed"`, "penwidth=1.5")
	default:
		a = append(a, "color="+dotString(colorVisited), "penwidth=2.5")
	}
	if m.stopped {
		a = append(a, "penwidth=4", "color="+dotString(colorExhausted))
	}
	return a
}

func (o *pathOverlay) dotEdgeAttrs(e *vedge) []string {
	if o == nil {
		return nil
	}
	n := o.edges[e]
	if n == 0 {
		return []string{"color=" + dotString(colorUnseen), "fontcolor=" + dotString(colorUnseen)}
	}
	return []string{"label=" + dotString(strings.Join(o.edgeLabel(e), "\n")), "penwidth=2.5", "color=" + dotString(colorVisited), "fontcolor=" + dotString(colorVisited)}
}

// overlayStatus is the run's status line, for the DOT graph's label.
func (o *pathOverlay) title() string {
	if o == nil {
		return ""
	}
	s := "run " + o.runID + ": " + o.status
	if o.reason != "" {
		s += " — " + o.reason
	}
	return s
}
