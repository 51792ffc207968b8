package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/apl-lang/apl/lang"
)

type graphCmd struct {
	Path   string `arg:"" help:"A playbook file, directory, or stdlib:NAME."`
	Format string `enum:"text,dot,mermaid" default:"text" help:"text, dot (Graphviz) or mermaid."`
}

func (c *graphCmd) Run(e *env) error {
	pb, _, err := e.load(c.Path)
	if err != nil {
		return err
	}
	switch c.Format {
	case "dot":
		writeDot(e.stdout, pb)
	case "mermaid":
		writeMermaid(e.stdout, pb)
	default:
		writeText(e.stdout, pb)
	}
	return nil
}

// edgeLabel is an edge's condition and cap, for drawing.
func edgeLabel(e *lang.Edge) string {
	l := e.Label()
	if e.Kind == lang.EdgeNext && l == "" {
		return ""
	}
	return strings.Join(strings.Fields(l), " ")
}

// endings lists how a step can end the run: finish and fail outcomes.
func endings(s *lang.Step) []string {
	var out []string
	if s.Gate == nil {
		if s.Next == nil {
			out = append(out, "end")
		}
		return out
	}
	rules := append([]*lang.Rule(nil), s.Gate.Rules...)
	if s.Gate.Otherwise != nil {
		rules = append(rules, s.Gate.Otherwise)
	}
	for _, r := range rules {
		for _, o := range []*lang.Outcome{r.Outcome, r.Outcome.Exhausted} {
			if o == nil {
				continue
			}
			switch {
			case o.Finish != nil:
				out = append(out, "finish ("+r.Name+")")
			case o.Fail != nil:
				out = append(out, "fail ("+r.Name+")")
			}
		}
	}
	return out
}

func writeText(w io.Writer, pb *lang.Playbook) {
	fmt.Fprintf(w, "playbook %s: %s\n", pb.Name, plural(len(pb.Steps), "step"))
	writeTextSteps(w, pb.Steps, "")
	if len(pb.OnFailure) > 0 {
		fmt.Fprintf(w, "on_failure:\n")
		writeTextSteps(w, pb.OnFailure, "  ")
	}
}

// writeTextSteps lists steps with their edges; a for_each step's body
// follows it, indented.
func writeTextSteps(w io.Writer, steps []*lang.Step, indent string) {
	for _, s := range steps {
		fmt.Fprintf(w, "%s%s\n", indent, s)
		if fe := s.ForEach; fe != nil {
			fmt.Fprintf(w, "%s  for each item of %q, %d at a time", indent, fe.List.Source, fe.Concurrency)
			if fe.DependsOn != nil {
				fmt.Fprintf(w, ", after %q", fe.DependsOn.Source)
			}
			for _, l := range fe.Limits {
				fmt.Fprintf(w, ", limit %s by %q", l.Name, l.Key.Source)
			}
			fmt.Fprintln(w, ":")
			writeTextSteps(w, fe.Steps, indent+"    ")
		}
		for _, e := range s.Edges {
			l := edgeLabel(e)
			if l != "" {
				l = "  [" + l + "]"
			}
			fmt.Fprintf(w, "%s  -> %s%s\n", indent, e.To.Name, l)
		}
		for _, end := range endings(s) {
			fmt.Fprintf(w, "%s  -> (%s)\n", indent, end)
		}
	}
}

func writeDot(w io.Writer, pb *lang.Playbook) {
	fmt.Fprintf(w, "digraph %s {\n  rankdir=TB;\n  node [shape=box];\n", dotString(pb.Name))
	writeDotSteps(w, pb.Steps, "  ")
	fmt.Fprintf(w, "}\n")
}

// writeDotSteps draws steps and their edges; a for_each body is a cluster
// that its step points into.
func writeDotSteps(w io.Writer, steps []*lang.Step, indent string) {
	for _, s := range steps {
		label := s.Name
		if s.Action != nil {
			label += "\n" + s.Action.String()
		}
		if s.ForEach != nil {
			label += "\nfor each " + s.ForEach.List.Source
		}
		fmt.Fprintf(w, "%s%s [label=%s];\n", indent, dotString(s.Name), dotString(label))
		if fe := s.ForEach; fe != nil {
			fmt.Fprintf(w, "%ssubgraph %s {\n%s  label=%s;\n", indent, dotString("cluster_"+s.Name), indent, dotString("per item of "+s.Name))
			writeDotSteps(w, fe.Steps, indent+"  ")
			fmt.Fprintf(w, "%s}\n", indent)
			fmt.Fprintf(w, "%s%s -> %s [style=dotted, label=\"each item\"];\n", indent, dotString(s.Name), dotString(fe.Steps[0].Name))
		}
	}
	for _, s := range steps {
		for _, e := range s.Edges {
			attrs := "label=" + dotString(edgeLabel(e))
			if e.Max > 0 {
				attrs += ", style=dashed"
			}
			fmt.Fprintf(w, "%s%s -> %s [%s];\n", indent, dotString(s.Name), dotString(e.To.Name), attrs)
		}
	}
}

// dotString quotes s as a DOT string. DOT is not Go: it knows only \" and
// \\ (and, in labels, \n for a line break), so %q's escapes would be drawn
// as they are.
func dotString(s string) string {
	return `"` + dotEscaper.Replace(s) + `"`
}

var dotEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", "")

func writeMermaid(w io.Writer, pb *lang.Playbook) {
	fmt.Fprintf(w, "flowchart TD\n")
	writeMermaidSteps(w, pb.Steps, "  ")
}

func writeMermaidSteps(w io.Writer, steps []*lang.Step, indent string) {
	for _, s := range steps {
		fmt.Fprintf(w, "%s%s[\"%s\"]\n", indent, s.Name, mermaidText(s.Name))
		if fe := s.ForEach; fe != nil {
			fmt.Fprintf(w, "%ssubgraph %s_items[\"per item of %s\"]\n", indent, s.Name, mermaidText(s.Name))
			writeMermaidSteps(w, fe.Steps, indent+"  ")
			fmt.Fprintf(w, "%send\n", indent)
			fmt.Fprintf(w, "%s%s -.->|\"each item\"| %s\n", indent, s.Name, fe.Steps[0].Name)
		}
	}
	for _, s := range steps {
		for _, e := range s.Edges {
			arrow := "-->"
			if e.Max > 0 {
				arrow = "-.->"
			}
			if l := edgeLabel(e); l != "" {
				fmt.Fprintf(w, "%s%s %s|\"%s\"| %s\n", indent, s.Name, arrow, mermaidText(l), e.To.Name)
			} else {
				fmt.Fprintf(w, "%s%s %s %s\n", indent, s.Name, arrow, e.To.Name)
			}
		}
	}
}

func mermaidText(s string) string {
	return strings.NewReplacer(`"`, "#quot;", "|", "#124;", "<", "#lt;", ">", "#gt;").Replace(s)
}
