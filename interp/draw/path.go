package draw

import (
	"fmt"
	"strings"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
)

// Run is a run drawn over the graph: its way through the playbook, and
// how it stands. A recorded run gives one (RunOf); anything else that can
// say which steps ran in which order, such as a dry run, can give another
// and be drawn the same way.
type Run struct {
	// ID, Status and Reason title the drawing: "run ID: Status — Reason".
	ID, Status, Reason string
	Path               *interp.Path
	// Stopped is the step the run stopped at, when it did not end
	// (waiting, interrupted, still running), or "".
	Stopped string
}

// RunOf is the run st records, its path read from its event log.
func RunOf(st *interp.State) *Run {
	p := &Run{ID: st.Meta.RunID, Status: st.Meta.Status, Reason: st.Meta.Reason, Path: interp.PathOf(st.Events)}
	if st.Meta.Recommendation != "" && st.Meta.Status == interp.StatusFailed {
		p.Status += " (" + st.Meta.Recommendation + ")"
	}
	switch st.Meta.Status {
	case interp.StatusCompleted, interp.StatusFailed:
	default:
		p.Stopped = st.Meta.CurrentStep
		if w := st.Waiting; w != nil && w.Step != "" {
			// A decision inside a for_each body: the step that asks.
			p.Stopped = w.Step
		}
		if l := p.Path.Last(""); p.Stopped == "" && l != nil {
			p.Stopped = l.Step
		}
	}
	return p
}

// pathOverlay is a Run laid on a Graph: counts per node, edge and route.
type pathOverlay struct {
	*Run
	nodes   map[*vnode]*nodeMark
	edges   map[*vedge]int
	routes  map[*route]int
	reached map[*vnode]bool // ends the run or its items reached
}

type nodeMark struct {
	runs, completed, failed, skipped int
	stopped                          bool
}

// Overlay lays a run on the graph: every format then draws the steps it
// visited and the edges it took, with how often.
func (v *Graph) Overlay(p *Run) {
	o := &pathOverlay{Run: p, nodes: map[*vnode]*nodeMark{}, edges: map[*vedge]int{},
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
	for _, frame := range p.Path.FrameOrder {
		// The run's own frame holds its main steps, then its on_failure
		// and finally steps: sections, each with its own entry.
		var sections [][]*interp.Visit
		var cur []*interp.Visit
		for _, vis := range p.Path.Frames[frame] {
			s := v.pb.Step(vis.Step)
			if s == nil {
				continue
			}
			if len(cur) > 0 {
				if c := v.pb.Step(cur[0].Step); s.OnFailure != c.OnFailure || s.Finally != c.Finally {
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
			first := v.byStep[v.pb.Step(visits[0].Step)]
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
				n := v.byStep[v.pb.Step(vis.Step)]
				m := mark(n)
				switch vis.Status {
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
				if vis.Skipped {
					take(findRoute(v, prev, v.next(n.step), func(r *route) bool { return r.kind == routeSkip && r.skipped == n.step }))
				} else if i == 0 && prev != nil {
					take(findRoute(v, prev, n, nil))
				}
				if !vis.Skipped {
					var to *vnode
					if i+1 < len(visits) && !visits[i+1].Skipped {
						to = v.byStep[v.pb.Step(visits[i+1].Step)]
					}
					// A rule the gate chose was taken even when the step it
					// goes to was then skipped (the bypass shows that too).
					r := chosenRoute(v, n, vis, to)
					if vis.Rule != "" || to != nil || (r != nil && r.to.kind == nodeEnd && vis.Status != interp.StepFailed) {
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
	if p.Stopped != "" {
		if s := v.pb.Step(p.Stopped); s != nil {
			mark(v.byStep[s]).stopped = true
		}
	}
}

// Taken is how often the run laid over the graph took each edge and
// reached each end, by the ids WriteDotIDs gives them ("edge-FROM--TO",
// "node-END"): a page that drew the graph once can mark the run's path on
// it as the run goes on, without drawing it again. Nil when no run is laid
// over the graph.
func (v *Graph) Taken() map[string]int {
	o := v.path
	if o == nil {
		return nil
	}
	out := make(map[string]int, len(o.edges)+len(o.reached))
	for e, n := range o.edges {
		if n > 0 {
			out["edge-"+e.from.id+"--"+e.to.id] = n
		}
	}
	for n := range o.reached {
		out["node-"+n.id] = max(o.nodes[n].runs, 1)
	}
	return out
}

// RoomForBadges makes every step's node keep a line for its badge (how
// often the run ran it, and how), empty (BadgeRoom) until the run laid
// over the graph reaches the step. A page that draws the graph once and
// follows a run fills the line in (Badges) without laying the graph out
// again.
func (v *Graph) RoomForBadges() { v.badgeRoom = true }

// BadgeRoom is the text of the line RoomForBadges keeps in a step's node
// that the run has not reached: a no-break space, which Graphviz draws
// as a text of its own.
const BadgeRoom = "\u00a0"

// Badges are the lines the run laid over the graph gives the nodes of
// the steps it reached, by node id: how often each ran, and how
// ("completed ×2, running ×1"), as they are drawn in the nodes, without
// where the run stopped (a page shows that by the node's state). Nil
// when no run is laid over the graph.
func (v *Graph) Badges() map[string]string {
	o := v.path
	if o == nil {
		return nil
	}
	out := map[string]string{}
	for n, m := range o.nodes {
		if n.kind == nodeStep {
			stopped := m.stopped
			m.stopped = false
			out["node-"+n.id] = o.stepBadge(n)
			m.stopped = stopped
		}
	}
	return out
}

// chosenRoute is the route a visit of n left by: the gate rule it chose
// (or that rule's on_exhausted), else the one route to `to`, else (the
// frame's last visit) the route to the end of the section.
func chosenRoute(v *Graph, n *vnode, vis *interp.Visit, to *vnode) *route {
	if vis.Rule != "" {
		for _, r := range v.routesFrom(n) {
			if r.rule != nil && r.rule.Name == vis.Rule && (r.kind == routeExhausted) == vis.Exhausted {
				return r
			}
		}
	}
	if to != nil {
		return findRoute(v, n, to, nil)
	}
	if vis.Status == interp.StepCompleted && (n.step.Gate == nil || vis.Rule == "") {
		return findRoute(v, n, v.next(n.step), func(r *route) bool { return r.kind == routeNext })
	}
	return nil
}

// findRoute is a route from one node to another that ok accepts (nil:
// any but a skip).
func findRoute(v *Graph, from, to *vnode, ok func(*route) bool) *route {
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
		parts = append(parts, "stopped here: "+o.Status)
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
func (o *pathOverlay) skipNote(v *Graph, s *lang.Step) string {
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
	s := "run " + o.ID + ": " + o.Status
	if o.Reason != "" {
		s += " — " + o.Reason
	}
	return s
}
