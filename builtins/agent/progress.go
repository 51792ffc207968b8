package agent

import (
	"bytes"
	"fmt"
	"sync"
	"time"
)

// Progress kinds.
const (
	// ProgressRetrying: the backend failed and the call is trying again
	// (claude's api_retry, an HTTP driver's retry, codex reconnecting).
	ProgressRetrying = "retrying"
	// ProgressSession: the session the call runs in is known.
	ProgressSession = "session"
)

// Progress is something a driver learned while a call runs, for a person
// watching a long call: that the backend is retrying, or the session the
// call runs in. It changes nothing about the call.
type Progress struct {
	Kind string `json:"kind"`
	// Attempt is the retry's number, 1 for the first; Max is the most
	// retries the backend makes, 0 when unknown.
	Attempt int `json:"attempt,omitempty"`
	Max     int `json:"max,omitempty"`
	// Status is the HTTP status that caused the retry, 0 when unknown.
	Status int `json:"status,omitempty"`
	// Wait is the pause before the retry, when known.
	Wait time.Duration `json:"wait,omitempty"`
	// Message is the backend's own words.
	Message   string `json:"message,omitempty"`
	SessionID string `json:"session_id,omitempty"`
}

// String words p in a clause: "retrying: attempt 2 of 10 after HTTP 500
// (overloaded)".
func (p Progress) String() string {
	switch p.Kind {
	case ProgressRetrying:
		s := "retrying"
		if p.Attempt > 0 {
			s += fmt.Sprintf(": attempt %d", p.Attempt)
			if p.Max > 0 {
				s += fmt.Sprintf(" of %d", p.Max)
			}
		}
		if p.Status != 0 {
			s += fmt.Sprintf(" after HTTP %d", p.Status)
		}
		if p.Wait > 0 {
			s += fmt.Sprintf(", in %s", p.Wait.Round(100*time.Millisecond))
		}
		if p.Message != "" {
			s += " (" + excerpt(p.Message, 200) + ")"
		}
		return s
	case ProgressSession:
		return "session " + p.SessionID
	}
	s := p.Kind
	if p.Message != "" {
		s += ": " + excerpt(p.Message, 200)
	}
	return s
}

// progress tells req's Progress callback about p, if it has one.
func (req Request) progress(p Progress) {
	if req.Progress != nil {
		req.Progress(p)
	}
}

// maxWatchedLine bounds the line a lineWatcher keeps; the rest of a longer
// line (a result object with a long answer) is dropped, since progress
// lines are short.
const maxWatchedLine = 64 << 10

// lineWatcher is an io.Writer that hands each complete line written to it
// to fn, as a CLI prints it. It never fails a write: what it is given is
// also kept elsewhere, and a failed write would stop the copy.
type lineWatcher struct {
	fn   func(line []byte)
	mu   sync.Mutex
	buf  []byte
	skip bool // the current line outgrew maxWatchedLine
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		if !w.skip {
			w.fn(bytes.TrimSpace(w.buf))
		}
		w.buf, w.skip = w.buf[:0], false
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWatcher) add(p []byte) {
	if w.skip {
		return
	}
	if len(w.buf)+len(p) > maxWatchedLine {
		w.buf, w.skip = w.buf[:0], true
		return
	}
	w.buf = append(w.buf, p...)
}
