package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// live streams a run's page state as server-sent events: one "update"
// event at once, then one each time the run's recorded state changes, so
// the page follows a run without reloading. The token is checked like any
// request's (the cookie goes with an EventSource of the same origin).
func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := s.opts.Runs.Stamp(id); err != nil {
		http.Error(w, "apl ui: no run "+id, http.StatusNotFound)
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "apl ui: streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	ctx := r.Context()
	tick := time.NewTicker(s.opts.Poll)
	defer tick.Stop()
	last, quiet := "", 0
	// prev is the view the page shows: none at first, unless the page
	// says which state it was drawn from and that is still the run's.
	var prev *runView
	page := r.URL.Query().Get("stamp")
	for {
		stamp, err := s.opts.Runs.Stamp(id)
		switch {
		case err != nil:
			fmt.Fprintf(w, "event: gone\ndata: {}\n\n")
			fl.Flush()
			return
		case stamp != last:
			run, err := s.opts.Runs.Open(id)
			if err != nil {
				break // being written: the next tick reads it
			}
			last = stamp
			v := s.view(run)
			if prev == nil && page != "" && stamp == page {
				prev = v
			}
			if prev == nil && page == "" {
				// Not the run's page, which has its graph: the graph
				// goes with the first update, drawn once.
				s.drawGraph(run, v)
			}
			b, err := json.Marshal(v.since(prev))
			prev = v
			if err != nil {
				return
			}
			fmt.Fprintf(w, "event: update\ndata: %s\n\n", b)
			fl.Flush()
			quiet = 0
		default:
			// A comment now and then finds a closed connection.
			if quiet++; quiet*int(s.opts.Poll) >= int(15*time.Second) {
				fmt.Fprintf(w, ": still here\n\n")
				fl.Flush()
				quiet = 0
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// since is the update that brings a page showing prev to v: the item
// rows that changed (all of them when prev is nil or a row went away). A
// run of 1,000 items changes a few at a time; sending them all each time
// made every update as big as the page. The states of the graph's nodes
// and edges go whole: there are as many as the playbook has steps.
func (v *runView) since(prev *runView) *runView {
	d := *v
	if prev == nil {
		d.ItemsFull = true
		return &d
	}
	before := make(map[[2]string]*itemRow, len(prev.Items))
	for i := range prev.Items {
		before[[2]string{prev.Items[i].Step, prev.Items[i].Key}] = &prev.Items[i]
	}
	d.Items = nil
	for _, row := range v.Items {
		k := [2]string{row.Step, row.Key}
		old := before[k]
		delete(before, k)
		if old == nil || !old.same(row) {
			d.Items = append(d.Items, row)
		}
	}
	if len(before) > 0 {
		d.Items, d.ItemsFull = v.Items, true
	}
	return &d
}

// same says whether a row shows the same as o. Its place may differ: a
// row inserted before it moves it on the page as well.
func (r *itemRow) same(o itemRow) bool {
	return r.Status == o.Status && r.Current == o.Current && r.Error == o.Error && slices.Equal(r.Path, o.Path)
}
