package ui

import (
	"encoding/json"
	"fmt"
	"net/http"
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
			b, err := json.Marshal(s.view(run))
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
