package ui

import (
	"bytes"
	"html/template"
	"net/http"
	"strings"

	"github.com/apl-lang/apl/interp/draw"
)

// playbookPage shows a playbook before any run: its graph, with the path
// a dry run takes for the inputs and mocks given, and plan's worst case
// per step. Hovering a node shows its step's contract and rules (the
// graph's tooltips); hovering an edge, its rules' full conditions.
func (s *Server) playbookPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ref := strings.TrimSpace(q.Get("ref"))
	data := map[string]any{"Ref": ref, "Inputs": q.Get("inputs"), "Mocks": q.Get("mocks"), "Dry": q.Has("dry")}
	if ref == "" {
		s.render(w, "playbook.html", data)
		return
	}
	pb, err := s.load(ref)
	if err != nil {
		data["Error"] = s.redact(err.Error())
		s.render(w, "playbook.html", data)
		return
	}
	data["Name"], data["Description"] = pb.Name, pb.Description
	g := draw.New(pb)
	if q.Has("dry") && s.opts.DryRun != nil {
		var inputs []string
		for _, l := range strings.Split(q.Get("inputs"), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				inputs = append(inputs, l)
			}
		}
		run, err := s.opts.DryRun(pb, ref, inputs, strings.TrimSpace(q.Get("mocks")))
		if err != nil {
			data["DryError"] = s.redact(err.Error())
		} else {
			g.Overlay(run)
			data["DryStatus"] = run.Status
		}
	}
	var dot bytes.Buffer
	g.WriteDotIDs(&dot)
	if svg, err := s.opts.Render(dot.String(), "svg"); err != nil {
		var text strings.Builder
		g.WriteText(&text)
		data["Text"], data["GraphError"] = text.String(), err.Error()
	} else {
		data["SVG"] = template.HTML(stripProlog(svg))
	}
	if s.opts.Plan != nil {
		type row struct{ Step, Worst string }
		plan := s.opts.Plan(pb)
		var rows []row
		for _, st := range pb.AllSteps() {
			if w, ok := plan[st.Name]; ok {
				rows = append(rows, row{st.Name, w})
			}
		}
		data["Plan"] = rows
	}
	s.render(w, "playbook.html", data)
}
