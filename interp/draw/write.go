package draw

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apl-lang/apl/lang"
)

// WriteText writes the graph as text: each step with its ways out, gate
// rules in order with their conditions in full, and where a skipped step
// goes; with a run laid over it, how often each step ran and each way
// out was taken.
func (v *Graph) WriteText(w io.Writer) {
	pb := v.pb
	fmt.Fprintf(w, "playbook %s: %s", pb.Name, stepCount(len(pb.Steps)))
	if p := v.path; p != nil {
		fmt.Fprintf(w, "; run %s %s", p.ID, p.Status)
	}
	fmt.Fprintln(w)
	writeTextSteps(w, v, pb.Steps, "")
	if len(pb.OnFailure) > 0 {
		fmt.Fprintf(w, "on_failure:\n")
		writeTextSteps(w, v, pb.OnFailure, "  ")
	}
	if len(pb.Finally) > 0 {
		fmt.Fprintf(w, "finally:\n")
		writeTextSteps(w, v, pb.Finally, "  ")
	}
}

// writeTextSteps lists steps with their routes; a for_each step's body
// follows it, indented.
func writeTextSteps(w io.Writer, v *Graph, steps []*lang.Step, indent string) {
	for _, s := range steps {
		n := v.byStep[s]
		fmt.Fprintf(w, "%s%s%s\n", indent, s, v.path.stepNote(n))
		if a, ok := s.Action.(*lang.SubPlaybook); ok && a.Playbook != nil {
			fmt.Fprintf(w, "%s  runs playbook %s: %s\n", indent, a.Playbook.Name, stepCount(len(a.Playbook.Steps)))
		}
		if fe := s.ForEach; fe != nil {
			fmt.Fprintf(w, "%s  for each item of %q, %d at a time", indent, fe.List.Source, fe.Concurrency)
			if fe.DependsOn != nil {
				fmt.Fprintf(w, ", after %q", fe.DependsOn.Source)
			}
			for _, l := range fe.Limits {
				fmt.Fprintf(w, ", limit %s by %q", l.Name, l.Key.Source)
			}
			fmt.Fprintln(w, ":")
			writeTextSteps(w, v, fe.Steps, indent+"    ")
		}
		for _, r := range v.routesFrom(n) {
			if r.kind == routeEach || r.kind == routeSkip {
				continue
			}
			fmt.Fprintf(w, "%s  %s%s\n", indent, textRoute(r), v.path.routeNote(r))
		}
		if s.When != nil {
			fmt.Fprintf(w, "%s  skipped (when is false) -> %s%s\n", indent, textTarget(v.next(s)), v.path.skipNote(v, s))
		}
	}
}

// textRoute is one line of a step's routes: "-> next",
// "rule pass [cond] -> done", "otherwise -> plan (max 2)",
// "  on_exhausted -> (failed: halt)".
func textRoute(r *route) string {
	var b strings.Builder
	switch {
	case r.kind == routeExhausted:
		b.WriteString("  on_exhausted ")
	case r.rule != nil && r.rule.When == nil:
		b.WriteString("otherwise ")
	case r.rule != nil:
		fmt.Fprintf(&b, "rule %s [%s] ", r.rule.Name, oneLine(r.rule.When.Source))
	case r.from.step != nil && r.from.step.Gate != nil:
		b.WriteString("no rule matches ")
	case r.from.step != nil && r.from.step.ForEach != nil:
		b.WriteString("all items done ")
	}
	b.WriteString("-> " + textTarget(r.to))
	if r.kind == routeRule && r.max > 0 {
		fmt.Fprintf(&b, " (max %d)", r.max)
	}
	return b.String()
}

func textTarget(n *vnode) string {
	if n.kind == nodeEnd {
		return "(" + n.label + ")"
	}
	return n.id
}

// Colours of the drawing: plain steps white, decisions (gates) pale
// yellow, ends green or red; capped loops blue, exhaustion orange,
// failing red, skips and per-item entry grey and dashed.
const (
	colorDecision  = "#fff6d5"
	colorCompleted = "#d9f2d9"
	colorFailed    = "#f8d4d4"
	colorLoop      = "#1f5fbf"
	colorExhausted = "#c25e00"
	colorFail      = "#b22222"
	colorMuted     = "#777777"
)

// WriteDot writes the graph in Graphviz's DOT language: steps as boxes
// (gates pale yellow, listing their rules), ends as ovals, for_each bodies,
// on_failure and finally as clusters, and each edge labelled with the
// rules that take it; a run laid over it is drawn in green.
func (v *Graph) WriteDot(w io.Writer) { v.writeDot(w, false) }

// WriteDotIDs writes the graph as WriteDot does, with an id on every node
// and edge that Graphviz carries into the SVG it draws, so a page can
// find and restyle them: "node-" and a node's id (a step's is its name),
// "edge-" and the ids of its ends joined by "--". Each node also gets a
// class: step, start or end.
func (v *Graph) WriteDotIDs(w io.Writer) { v.writeDot(w, true) }

// NodeID is the id WriteDotIDs gives the node of step, "" when the graph
// has no such step.
func (v *Graph) NodeID(step string) string {
	s := v.pb.Step(step)
	if s == nil || v.byStep[s] == nil {
		return ""
	}
	return "node-" + v.byStep[s].id
}

func (v *Graph) writeDot(w io.Writer, ids bool) {
	pb := v.pb
	fmt.Fprintf(w, "digraph %s {\n", dotString(pb.Name))
	tip := pb.Name
	if pb.Description != "" {
		tip += ": " + pb.Description
	}
	fmt.Fprintf(w, "  graph [rankdir=TB, newrank=true, nodesep=0.3, ranksep=0.35, fontname=\"Helvetica\", fontsize=11, tooltip=%s];\n", dotString(tip))
	if t := v.path.title(); t != "" {
		fmt.Fprintf(w, "  label=%s; labelloc=t;\n", dotString(t))
	}
	fmt.Fprintf(w, "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", fontsize=11, margin=\"0.12,0.04\", height=0.3];\n")
	fmt.Fprintf(w, "  edge [fontname=\"Helvetica\", fontsize=9, arrowsize=0.7];\n")
	for _, c := range v.clusters {
		indent := "  "
		if c.id != "" {
			fmt.Fprintf(w, "  subgraph %s {\n    label=%s; style=\"rounded,dashed\"; color=\"#999999\"; fontcolor=\"#555555\"; labeljust=l;\n", dotString("cluster_"+c.id), dotString(c.title))
			indent = "    "
		}
		for _, n := range c.nodes {
			a := v.dotNodeAttrs(n)
			if ids {
				a = append(a, "id="+dotString("node-"+n.id), "class="+dotString(nodeClass[n.kind]))
			}
			fmt.Fprintf(w, "%s%s [%s];\n", indent, dotString(n.id), strings.Join(a, ", "))
		}
		if c.id != "" {
			fmt.Fprintf(w, "  }\n")
		}
	}
	for _, e := range v.edges {
		a := v.dotEdgeAttrs(e)
		if ids {
			a = append(a, "id="+dotString("edge-"+e.from.id+"--"+e.to.id))
		}
		fmt.Fprintf(w, "  %s -> %s [%s];\n", dotString(e.from.id), dotString(e.to.id), strings.Join(a, ", "))
	}
	// What follows a for_each step runs once every item is done: draw it
	// below the body, not beside it.
	for _, c := range v.clusters {
		if c.step == nil {
			continue
		}
		next := v.next(c.step)
		for _, n := range c.nodes {
			if n.kind == nodeEnd {
				fmt.Fprintf(w, "  %s -> %s [style=invis];\n", dotString(n.id), dotString(next.id))
			}
		}
	}
	fmt.Fprintf(w, "}\n")
}

// nodeClass is the class WriteDotIDs gives a node of each kind.
var nodeClass = map[nodeKind]string{nodeStep: "step", nodeStart: "start", nodeEnd: "end"}

func (v *Graph) dotNodeAttrs(n *vnode) []string {
	var a []string
	switch n.kind {
	case nodeStart:
		a = append(a, `label="start"`, "shape=oval", `fillcolor="#eeeeee"`, "fontsize=9")
	case nodeEnd:
		fill := colorCompleted
		if n.failed {
			fill = colorFailed
		}
		a = append(a, "label="+dotString(n.label), "shape=oval", "peripheries=2", "fillcolor="+dotString(fill))
	default:
		s := n.step
		badge := v.path.stepBadge(n)
		if badge == "" && v.badgeRoom {
			badge = BadgeRoom
		}
		a = append(a, "label=<"+stepHTML(s, badge)+">")
		if s.Gate != nil {
			a = append(a, "fillcolor="+dotString(colorDecision))
		}
		if s.ForEach != nil {
			a = append(a, `style="rounded,filled,bold"`)
		}
		if sub, ok := s.Action.(*lang.SubPlaybook); ok {
			a = append(a, `shape=box3d`, `style="filled"`, "URL="+dotString(sub.Source))
		}
		a = append(a, "tooltip="+dotString(stepTooltip(s)))
	}
	return mergeAttrs(a, v.path.dotNodeAttrs(n))
}

// stepHTML is a step's node label: its name in bold, what it does, when it
// runs, and for a gate its rules in the order they are tried.
func stepHTML(s *lang.Step, badge string) string {
	var rows []string
	rows = append(rows, "<b>"+htmlText(s.Name)+"</b>")
	if badge != "" {
		rows = append(rows, `<font point-size="9" color="`+colorVisited+`">`+htmlText(badge)+`</font>`)
	}
	small := func(t string) string {
		return `<font point-size="9" color="#555555">` + htmlText(t) + `</font>`
	}
	if a := actionText(s); a != "" {
		rows = append(rows, small(a))
	}
	if s.Template != "" {
		rows = append(rows, small("template."+s.Template))
	}
	if s.When != nil {
		for _, l := range wrap("when "+oneLine(s.When.Source), 34, 3) {
			rows = append(rows, small(l))
		}
	}
	if s.Gate != nil {
		rules := s.Gate.Tried()
		if len(rules) > 1 {
			rows = append(rows, "<i>"+small("◆ first match of:")+"</i>")
		} else {
			rows = append(rows, "<i>"+small("◆ then:")+"</i>")
		}
		for i, r := range rules {
			name := fmt.Sprintf("%d. %s", i+1, r.Name)
			if r.When == nil {
				name = r.Name
			}
			rows = append(rows, `<font point-size="10">`+htmlText(name)+`</font>`)
		}
	}
	var b strings.Builder
	b.WriteString(`<table border="0" cellborder="0" cellspacing="0" cellpadding="1">`)
	for i, r := range rows {
		align := ""
		if s.Gate != nil && i > 0 && strings.HasPrefix(r, "<i>") {
			// With no cell spacing the rule is drawn on the cell's edge:
			// padding keeps it off the text below.
			b.WriteString("<hr/>")
			align = ` cellpadding="3"`
		}
		if s.Gate != nil && i > 0 && !strings.HasPrefix(r, "<i>") && rowIsRule(s, i, len(rows)) {
			align = ` align="left"`
		}
		b.WriteString("<tr><td" + align + ">" + r + "</td></tr>")
	}
	b.WriteString("</table>")
	return b.String()
}

// rowIsRule says whether row i of a gate step's label lists a rule: the
// rules are its last rows.
func rowIsRule(s *lang.Step, i, n int) bool {
	return i >= n-len(s.Gate.Tried())
}

// stepTooltip is everything about a step a node has no room for.
func stepTooltip(s *lang.Step) string {
	lines := []string{s.String()}
	if s.Description != "" {
		lines = append(lines, s.Description)
	}
	if a, ok := s.Action.(*lang.SubPlaybook); ok && a.Playbook != nil {
		lines = append(lines, fmt.Sprintf("runs playbook %s (%s): %s", a.Playbook.Name, a.Source, stepCount(len(a.Playbook.Steps))))
	}
	if s.Gate != nil {
		for _, r := range s.Gate.Rules {
			lines = append(lines, r.Name+": "+oneLine(r.When.Source))
		}
	}
	for _, c := range s.Checks {
		lines = append(lines, "check "+c.Name+": "+oneLine(c.Condition.Source))
	}
	return strings.Join(lines, "\n")
}

func (v *Graph) dotEdgeAttrs(e *vedge) []string {
	var a []string
	if l := e.label(); len(l) > 0 {
		a = append(a, "label="+dotString(strings.Join(l, "\n")))
	}
	if tip := e.tooltip(); tip != "" {
		a = append(a, "tooltip="+dotString(tip), "labeltooltip="+dotString(tip))
	}
	switch {
	case e.only(routeSkip), e.only(routeEach), e.only(routeOnFailure), e.only(routeFinally):
		a = append(a, "style=dashed", "color="+dotString(colorMuted), "fontcolor="+dotString(colorMuted))
	case e.only(routeStart):
		a = append(a, "color="+dotString(colorMuted))
	case e.to.kind == nodeEnd && e.to.failed:
		a = append(a, "color="+dotString(colorFail), "fontcolor="+dotString(colorFail))
	case e.only(routeExhausted):
		a = append(a, "color="+dotString(colorExhausted), "fontcolor="+dotString(colorExhausted))
	case e.capped():
		a = append(a, "color="+dotString(colorLoop), "fontcolor="+dotString(colorLoop))
	}
	// A capped goto back up does not push its target down a rank: the
	// steps keep their declared order from top to bottom.
	if e.to.kind == nodeStep && e.from.kind == nodeStep && e.to.step.Index <= e.from.step.Index && e.to.cluster == e.from.cluster {
		a = append(a, "constraint=false")
	}
	return mergeAttrs(a, v.path.dotEdgeAttrs(e))
}

// mergeAttrs returns the DOT attributes a ("name=value") with those of
// over added, an attribute of over replacing one of a of the same name.
func mergeAttrs(a, over []string) []string {
	name := func(s string) string { n, _, _ := strings.Cut(s, "="); return n }
	for _, o := range over {
		i := slices.IndexFunc(a, func(s string) bool { return name(s) == name(o) })
		if i >= 0 {
			a[i] = o
		} else {
			a = append(a, o)
		}
	}
	return a
}

// dotString quotes s as a DOT string. DOT is not Go: it knows only \" and
// \\ (and, in labels, \n for a line break), so %q's escapes would be drawn
// as they are.
func dotString(s string) string {
	return `"` + dotEscaper.Replace(s) + `"`
}

var dotEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "")

// htmlText escapes s for a Graphviz HTML-like label.
func htmlText(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// wrap breaks s into lines of at most width runes at spaces, and at most
// max lines, the last ending in "…" when s is longer.
func wrap(s string, width, max int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	// A word or two of a few letters alone on a line ("when", "0", "''")
	// reads as a stray: it joins its neighbour, a little past the width.
	short := func(l string) bool { return len([]rune(l)) <= 4 }
	if len(lines) > 1 && short(lines[0]) {
		lines = append([]string{lines[0] + " " + lines[1]}, lines[2:]...)
	}
	if n := len(lines); n > 1 && short(lines[n-1]) {
		lines = append(lines[:n-2], lines[n-2]+" "+lines[n-1])
	}
	if len(lines) > max {
		lines = lines[:max]
		lines[max-1] += " …"
	}
	return lines
}

// WriteMermaid writes the graph as a Mermaid flowchart, as DOT draws it.
func (v *Graph) WriteMermaid(w io.Writer) {
	fmt.Fprintf(w, "flowchart TD\n")
	for _, c := range v.clusters {
		indent := "  "
		if c.id != "" {
			fmt.Fprintf(w, "  subgraph %s[\"%s\"]\n", safeID(c.id), mermaidText(c.title))
			indent = "    "
		}
		for _, n := range c.nodes {
			fmt.Fprintf(w, "%s%s\n", indent, mermaidNode(n))
		}
		if c.id != "" {
			fmt.Fprintf(w, "  end\n")
		}
	}
	var failed, completed []string
	for _, n := range v.nodes {
		if n.kind == nodeEnd && n.failed {
			failed = append(failed, mermaidID(n))
		} else if n.kind == nodeEnd {
			completed = append(completed, mermaidID(n))
		}
	}
	var taken []string
	for i, e := range v.edges {
		arrow := "-->"
		switch {
		case e.only(routeSkip), e.only(routeEach), e.only(routeOnFailure), e.only(routeFinally):
			arrow = "-.->"
		case e.capped():
			arrow = "==>"
		}
		l := e.label()
		if v.path != nil && v.path.edges[e] > 0 {
			l = v.path.edgeLabel(e)
			taken = append(taken, fmt.Sprint(i))
		}
		for i := range l {
			l[i] = mermaidText(l[i])
		}
		if len(l) > 0 {
			fmt.Fprintf(w, "  %s %s|\"%s\"| %s\n", mermaidID(e.from), arrow, strings.Join(l, "<br/>"), mermaidID(e.to))
		} else {
			fmt.Fprintf(w, "  %s %s %s\n", mermaidID(e.from), arrow, mermaidID(e.to))
		}
	}
	var gates []string
	for _, n := range v.nodes {
		if n.kind == nodeStep && n.step.Gate != nil {
			gates = append(gates, mermaidID(n))
		}
	}
	writeClasses(w, []mermaidClass{
		{"decision", "fill:" + colorDecision + ",stroke:#b59b00", gates},
		{"completed", "fill:" + colorCompleted + ",stroke:#2e7d32", completed},
		{"failed", "fill:" + colorFailed + ",stroke:" + colorFail, failed},
	})
	if len(taken) > 0 {
		fmt.Fprintf(w, "  linkStyle %s stroke:%s,stroke-width:3px\n", strings.Join(taken, ","), colorVisited)
	}
	if p := v.path; p != nil {
		var visited, failedSteps, unseen []string
		for _, n := range v.nodes {
			m := p.nodes[n]
			switch {
			case n.kind != nodeStep:
			case m == nil:
				unseen = append(unseen, mermaidID(n))
			case m.failed > 0 && m.completed == 0, m.stopped:
				failedSteps = append(failedSteps, mermaidID(n))
			case m.runs > 0:
				visited = append(visited, mermaidID(n))
			}
		}
		writeClasses(w, []mermaidClass{
			{"visited", "stroke:" + colorVisited + ",stroke-width:3px", visited},
			{"stopped", "stroke:" + colorFail + ",stroke-width:3px", failedSteps},
			{"unseen", "stroke:" + colorUnseen + ",color:" + colorUnseen, unseen},
		})
	}
}

// mermaidClass is a Mermaid class: its name, its style and the nodes it
// styles.
type mermaidClass struct {
	name, style string
	ids         []string
}

// writeClasses declares each class that styles a node, and its nodes.
func writeClasses(w io.Writer, classes []mermaidClass) {
	for _, cl := range classes {
		if len(cl.ids) > 0 {
			fmt.Fprintf(w, "  classDef %s %s\n  class %s %s\n", cl.name, cl.style, strings.Join(cl.ids, ","), cl.name)
		}
	}
}

// mermaidNode declares a node: a step as a box (a gate as a hexagon
// listing its rules), the start and the ends as stadiums.
func mermaidNode(n *vnode) string {
	id := mermaidID(n)
	switch n.kind {
	case nodeStart:
		return id + `(["start"])`
	case nodeEnd:
		return id + `(["` + mermaidText(n.label) + `"])`
	}
	s := n.step
	lines := []string{mermaidText(s.Name)}
	if a := actionText(s); a != "" {
		lines = append(lines, "<i>"+mermaidText(a)+"</i>")
	}
	if s.Template != "" {
		lines = append(lines, "<i>"+mermaidText("template."+s.Template)+"</i>")
	}
	if s.When != nil {
		lines = append(lines, "<i>"+mermaidText(strings.Join(wrap("when "+oneLine(s.When.Source), 60, 1), ""))+"</i>")
	}
	if s.Gate != nil {
		var rules []string
		for i, r := range s.Gate.Rules {
			rules = append(rules, fmt.Sprintf("%d. %s", i+1, mermaidText(r.Name)))
		}
		if s.Gate.Otherwise != nil {
			rules = append(rules, "otherwise")
		}
		lines = append(lines, rules...)
	}
	label := `"` + strings.Join(lines, "<br/>") + `"`
	switch {
	case s.Gate != nil && s.Action == nil && s.ForEach == nil:
		return id + "{{" + label + "}}"
	case isSub(s):
		return id + "[[" + label + "]]"
	}
	return id + "[" + label + "]"
}

func isSub(s *lang.Step) bool {
	_, ok := s.Action.(*lang.SubPlaybook)
	return ok
}

// mermaidID is a node's id in Mermaid, which takes letters, digits and
// underscores; "end" is a keyword there.
func mermaidID(n *vnode) string {
	id := safeID(n.id)
	if strings.EqualFold(id, "end") || strings.EqualFold(id, "subgraph") {
		id += "_"
	}
	return id
}

// mermaidText escapes s inside a quoted Mermaid label, where # starts an
// entity and quotes, pipes and angle brackets end or confuse it.
func mermaidText(s string) string {
	return strings.NewReplacer("#", "#35;", `"`, "#quot;", "|", "#124;", "<", "#lt;", ">", "#gt;").Replace(s)
}

// stepCount is "1 step" or "N steps".
func stepCount(n int) string {
	if n == 1 {
		return "1 step"
	}
	return fmt.Sprint(n, " steps")
}
