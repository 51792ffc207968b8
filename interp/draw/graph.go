package draw

import (
	"fmt"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// Graph is a playbook's step graph as apl graph draws it: the steps of
// each section, the ends a run (or a for_each item) can reach, and every
// way control moves between them. A step's successors (lang.Step's
// Successors) say where control may go; a Graph adds what a reader needs
// besides: which ends they reach, how rules that go to one place merge
// into one edge, where a `when` skips a step. Every format draws from one
// Graph, so text, DOT and Mermaid agree.
type Graph struct {
	pb       *lang.Playbook
	clusters []*cluster // main, its for_each bodies, on_failure, its bodies, finally, its bodies
	nodes    []*vnode
	// routes are every way out of every node, in declared order (rules in
	// gate order); edges merges those with the same ends, for drawing.
	routes []*route
	edges  []*vedge
	start  *vnode
	byStep map[*lang.Step]*vnode
	// ends maps a cluster and an end label to its node, so that every
	// "failed: halt" of a section is one node.
	ends map[string]*vnode
	ids  map[string]bool // node ids in use
	// path, when set, is a run drawn over the graph.
	path *pathOverlay
	// badgeRoom keeps a line in every step's node for its badge
	// (RoomForBadges).
	badgeRoom bool
}

// cluster is a section of steps: the main steps, a for_each body or the
// on_failure steps.
type cluster struct {
	id    string // "" for the main steps
	title string
	step  *lang.Step // the for_each step whose body this is
	// onFailure marks the on_failure steps' section, finally the finally
	// steps'.
	onFailure bool
	finally   bool
	nodes     []*vnode
}

type nodeKind int

const (
	nodeStep nodeKind = iota
	nodeStart
	nodeEnd
)

// vnode is a step, the start of the run, or an end.
type vnode struct {
	id      string
	kind    nodeKind
	step    *lang.Step // nodeStep
	label   string     // nodeEnd: "completed", "failed: halt"
	failed  bool       // nodeEnd: the run (or item) fails there
	cluster *cluster
}

type routeKind int

const (
	routeNext      routeKind = iota // declared order, `next`, or a rule that does not route
	routeRule                       // a gate rule's goto, finish or fail
	routeExhausted                  // a rule's on_exhausted outcome
	routeSkip                       // a `when` that is false skips the step
	routeEach                       // a for_each step runs its body per item
	routeOnFailure                  // a failed run runs its on_failure steps
	routeFinally                    // every ending runs the finally steps
	routeStart                      // the run begins
)

// route is one way control leaves a node.
type route struct {
	from, to *vnode
	kind     routeKind
	rule     *lang.Rule // routeRule, routeExhausted, and routeNext from a rule
	max      int        // the goto's cap
	skipped  *lang.Step // routeSkip: the step skipped
	reason   string     // finish or fail reason, for tooltips
	edge     *vedge
}

// name is the route's short label on a drawn edge: the rule's name and
// cap ("debug ≤3"), "debug exhausted", "research skipped".
func (r *route) name() string {
	switch r.kind {
	case routeRule, routeNext:
		if r.rule == nil && r.from.step != nil && r.from.step.ForEach != nil {
			return "all items done"
		}
		if r.rule == nil {
			return ""
		}
		if r.max > 0 {
			return fmt.Sprintf("%s ≤%d", r.rule.Name, r.max)
		}
		return r.rule.Name
	case routeExhausted:
		return r.rule.Name + " exhausted"
	case routeSkip:
		return r.skipped.Name + " skipped"
	case routeEach:
		return "each item"

	case routeOnFailure:
		return "on_failure"
	case routeFinally:
		return "finally"
	}
	return ""
}

// condition is what must hold for the route to be taken, in full, for
// tooltips and text.
func (r *route) condition() string {
	switch r.kind {
	case routeRule, routeNext:
		if r.rule == nil {
			if r.from.step != nil && r.from.step.Gate != nil {
				return "no rule matches"
			}
			if r.from.step != nil && r.from.step.ForEach != nil {
				return "once every item is done"
			}
			return ""
		}
		if r.rule.When == nil {
			return "otherwise"
		}
		return oneLine(r.rule.When.Source)
	case routeExhausted:
		return fmt.Sprintf("rule %s matched once its goto was taken %d times (max %d)", r.rule.Name, r.max, r.max)
	case routeSkip:
		return "when is false: " + oneLine(r.skipped.When.Source)
	}
	return r.name()
}

// vedge is one drawn edge: every route between two nodes.
type vedge struct {
	from, to *vnode
	routes   []*route
}

func (e *vedge) has(k routeKind) bool {
	for _, r := range e.routes {
		if r.kind == k {
			return true
		}
	}
	return false
}

func (e *vedge) only(k routeKind) bool {
	for _, r := range e.routes {
		if r.kind != k {
			return false
		}
	}
	return true
}

func (e *vedge) capped() bool {
	for _, r := range e.routes {
		if r.kind == routeRule && r.max > 0 {
			return true
		}
	}
	return false
}

// label is the edge's label: its routes' names, one a line.
func (e *vedge) label() []string {
	var out []string
	for _, r := range e.routes {
		if n := r.name(); n != "" {
			out = append(out, n)
		}
	}
	return out
}

// tooltip is every route's name and full condition.
func (e *vedge) tooltip() string {
	var lines []string
	for _, r := range e.routes {
		n, c := r.name(), r.condition()
		switch {
		case c == "":
		case n == "" || n == c:
			lines = append(lines, c)
		default:
			lines = append(lines, n+": "+c)
		}
		if r.reason != "" {
			lines = append(lines, "  reason: "+r.reason)
		}
	}
	return strings.Join(lines, "\n")
}

// New builds the graph of pb, to write in any of the formats.
func New(pb *lang.Playbook) *Graph {
	v := &Graph{pb: pb, byStep: map[*lang.Step]*vnode{}, ends: map[string]*vnode{}, ids: map[string]bool{}}
	main := &cluster{}
	v.clusters = append(v.clusters, main)
	for _, s := range pb.AllSteps() {
		v.ids[s.Name] = true
	}
	v.start = v.node(&vnode{id: v.newID("start"), kind: nodeStart, label: "start", cluster: main})
	v.addSteps(pb.Steps, main)
	v.addBodies(pb.Steps)
	onFailure := v.addSection(pb.OnFailure, &cluster{id: "on_failure", title: "on_failure: runs once the run failed", onFailure: true})
	finally := v.addSection(pb.Finally, &cluster{id: "finally", title: "finally: runs after every ending", finally: true})
	// Routes in declared order: the main steps, each body, on_failure,
	// finally.
	if len(pb.Steps) > 0 {
		v.addRoute(&route{from: v.start, to: v.byStep[pb.Steps[0]], kind: routeStart})
	}
	for _, c := range v.clusters {
		for _, n := range c.nodes {
			if n.kind == nodeStep {
				v.stepRoutes(n)
			}
		}
	}
	v.skipRoutes()
	if onFailure != nil {
		first := v.byStep[pb.OnFailure[0]]
		for _, n := range main.nodes {
			if n.kind == nodeEnd && n.failed {
				v.addRoute(&route{from: n, to: first, kind: routeOnFailure})
			}
		}
	}
	if finally != nil {
		first := v.byStep[pb.Finally[0]]
		for _, c := range []*cluster{main, onFailure} {
			if c == nil {
				continue
			}
			for _, n := range c.nodes {
				if n.kind == nodeEnd {
					v.addRoute(&route{from: n, to: first, kind: routeFinally})
				}
			}
		}
	}
	v.mergeEdges()
	return v
}

// addSection adds c, the cluster of the on_failure or the finally steps,
// when there are any, with its id made unique; nil when there are none.
func (v *Graph) addSection(steps []*lang.Step, c *cluster) *cluster {
	if len(steps) == 0 {
		return nil
	}
	c.id = v.newID(c.id)
	v.clusters = append(v.clusters, c)
	v.addSteps(steps, c)
	v.addBodies(steps)
	return c
}

func (v *Graph) node(n *vnode) *vnode {
	v.nodes = append(v.nodes, n)
	n.cluster.nodes = append(n.cluster.nodes, n)
	return n
}

// newID returns a node id like want that no step or other node has: ids
// of letters, digits and underscores, which DOT and Mermaid both take.
func (v *Graph) newID(want string) string {
	want = safeID(want)
	for strings.Contains(want, "__") {
		want = strings.ReplaceAll(want, "__", "_")
	}
	want = strings.Trim(want, "_")
	id := want
	for i := 2; v.ids[id]; i++ {
		id = fmt.Sprintf("%s_%d", want, i)
	}
	v.ids[id] = true
	return id
}

func (v *Graph) addSteps(steps []*lang.Step, c *cluster) {
	for _, s := range steps {
		v.byStep[s] = v.node(&vnode{id: s.Name, kind: nodeStep, step: s, cluster: c})
	}
}

// addBodies adds a cluster for the body of each for_each step of steps,
// wherever the step is (main, on_failure, finally, another body).
func (v *Graph) addBodies(steps []*lang.Step) {
	for _, s := range steps {
		fe := s.ForEach
		if fe == nil || len(fe.Steps) == 0 {
			continue
		}
		title := "for each item of " + oneLine(fe.List.Source)
		if fe.Concurrency > 1 {
			title += fmt.Sprintf(", %d at a time", fe.Concurrency)
		}
		c := &cluster{id: v.newID("body_" + s.Name), title: title, step: s}
		v.clusters = append(v.clusters, c)
		v.addSteps(fe.Steps, c)
		v.addBodies(fe.Steps)
	}
}

func (v *Graph) addRoute(r *route) {
	if r.to == nil {
		return
	}
	v.routes = append(v.routes, r)
}

// end returns the end node of cluster c with label, making it on first
// use.
func (v *Graph) end(c *cluster, label string, failed bool) *vnode {
	key := c.id + "\x00" + label
	if n := v.ends[key]; n != nil {
		return n
	}
	id := "outcome_" + label
	if c.id != "" {
		id = c.id + "_" + id
	}
	n := v.node(&vnode{id: v.newID(id), kind: nodeEnd, label: label, failed: failed, cluster: c})
	v.ends[key] = n
	return n
}

// next is where control goes after s when nothing routes it elsewhere: its
// next step, or the end of its section.
func (v *Graph) next(s *lang.Step) *vnode {
	if s.Next != nil {
		return v.byStep[s.Next]
	}
	c := v.byStep[s].cluster
	switch {
	case c.step != nil:
		return v.end(c, "item completed", false)
	case c.onFailure:
		return v.end(c, "run stays failed", true)
	case c.finally:
		return v.end(c, "run keeps its status", false)
	}
	return v.end(c, "completed", false)
}

// stepRoutes adds the routes out of a step: its successors, but for the
// skip (drawn as a bypass around the step, skipRoutes) and its failure
// (not drawn).
func (v *Graph) stepRoutes(n *vnode) {
	for _, x := range n.step.Successors() {
		switch x.Exit {
		case lang.ExitBody:
			v.addRoute(&route{from: n, to: v.byStep[x.To], kind: routeEach})
		case lang.ExitNext:
			v.addRoute(&route{from: n, to: v.next(n.step), kind: routeNext})
		case lang.ExitRule, lang.ExitExhausted:
			v.addRoute(v.outcomeRoute(n, x))
		}
	}
}

// outcomeRoute is where a rule's outcome (or its on_exhausted outcome)
// sends control.
func (v *Graph) outcomeRoute(n *vnode, x lang.Successor) *route {
	r := &route{from: n, kind: routeRule, rule: x.Rule}
	if x.Exit == lang.ExitExhausted {
		r.kind, r.max = routeExhausted, x.Rule.Outcome.Max
	}
	o := x.Outcome
	c := n.cluster
	item := ""
	if c.step != nil {
		item = "item "
	}
	if o.Reason != nil {
		r.reason = v.exprText(o.Reason)
	}
	switch {
	case o.Goto != nil:
		r.to = v.byStep[x.To]
		if r.kind == routeRule {
			r.max = o.Max
		}
	case x.End == lang.EndFinish:
		r.to = v.end(c, item+v.exprText(o.Finish), false)
	case x.End == lang.EndFail:
		r.to = v.end(c, item+"failed: "+v.exprText(o.Fail), true)
	default:
		r.to = v.next(n.step)
		if r.kind == routeRule {
			r.kind = routeNext
		}
	}
	return r
}

// skipRoutes adds a bypass for every step with a `when`: from each step
// that flows into it (declared order or `next`, not a goto) to where it
// goes when skipped.
func (v *Graph) skipRoutes() {
	for _, c := range v.clusters {
		for _, n := range c.nodes {
			s := n.step
			if s == nil || s.When == nil {
				continue
			}
			to := v.next(s)
			var from []*vnode
			for _, r := range v.routes {
				if r.to == n && (r.kind == routeNext || r.kind == routeStart || r.kind == routeEach || r.kind == routeOnFailure || r.kind == routeFinally) && !from0(from, r.from) {
					from = append(from, r.from)
				}
			}
			for _, f := range from {
				v.addRoute(&route{from: f, to: to, kind: routeSkip, skipped: s})
			}
		}
	}
}

func from0(ns []*vnode, n *vnode) bool {
	for _, m := range ns {
		if m == n {
			return true
		}
	}
	return false
}

// mergeEdges draws the routes between the same two nodes as one edge, in
// the order of the first: five rules that all go to rollback are one
// arrow listing the five.
func (v *Graph) mergeEdges() {
	type key struct{ from, to *vnode }
	byKey := map[key]*vedge{}
	for _, r := range v.routes {
		k := key{r.from, r.to}
		e := byKey[k]
		if e == nil {
			e = &vedge{from: r.from, to: r.to}
			byKey[k] = e
			v.edges = append(v.edges, e)
		}
		e.routes = append(e.routes, r)
		r.edge = e
	}
}

// routesFrom returns the routes leaving n, in order.
func (v *Graph) routesFrom(n *vnode) []*route {
	var out []*route
	for _, r := range v.routes {
		if r.from == n {
			out = append(out, r)
		}
	}
	return out
}

// exprText is a constant string expression's value ("halt"), else its
// source text (vars.recommendation).
func (v *Graph) exprText(e hcl.Expression) string {
	if val, diags := e.Value(nil); !diags.HasErrors() && val.IsKnown() && !val.IsNull() && val.Type() == cty.String {
		return val.AsString()
	}
	r := e.Range()
	if src, ok := v.pb.Sources[r.Filename]; ok && r.End.Byte <= len(src) && r.Start.Byte < r.End.Byte {
		return oneLine(string(src[r.Start.Byte:r.End.Byte]))
	}
	return "?"
}

// actionText is a short description of a step's action for a node.
func actionText(s *lang.Step) string {
	switch a := s.Action.(type) {
	case nil:
		if s.ForEach != nil {
			return "runs its body per item"
		}
		return ""
	case *lang.Shell:
		if a.Script != nil {
			return "shell script"
		}
		return "shell command"
	case *lang.AgentCall:
		return "agent " + a.Agent.Name
	case *lang.Call:
		return "call " + a.Builtin
	case *lang.Ask:
		return "ask a person"
	case *lang.SubPlaybook:
		return "playbook " + a.Source
	}
	return s.Action.String()
}

// oneLine collapses a multi-line condition into one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// safeID makes a node id of letters, digits and underscores, which DOT and
// Mermaid both take unquoted.
func safeID(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
