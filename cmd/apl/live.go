package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apl-lang/apl/interp"
	"golang.org/x/term"
)

// liveView is the status block progress keeps under its lines on a
// terminal: the steps running and for how long, each for_each step's
// items, and the run's time, agent calls, tokens and cost so far. Lines
// are printed above it; it is redrawn as events come and every
// liveTick. Its owner's mutex guards it; the ticker takes that mutex.
type liveView struct {
	f     *os.File
	mu    *sync.Mutex
	start time.Time

	running []*liveStep
	items   map[string]*itemCounts
	order   []string // for_each steps in the order their items began
	totals  map[string]any

	drawn   int  // lines of the block on screen
	hidden  bool // a question is being asked under the lines
	stopped bool
	quit    chan struct{}
}

type liveStep struct {
	key, name string
	start     time.Time
	// note is what the step's agent call last said of itself: its
	// backend retrying (progress_agent.go).
	note string
}

type itemCounts struct{ running, done, failed, blocked int }

const liveTick = 250 * time.Millisecond

func newLiveView(f *os.File) *liveView {
	return &liveView{f: f, start: time.Now(), items: map[string]*itemCounts{}, totals: map[string]any{}, quit: make(chan struct{})}
}

// attach gives the view its owner's mutex and starts the ticker.
func (v *liveView) attach(mu *sync.Mutex) {
	v.mu = mu
	go func() {
		t := time.NewTicker(liveTick)
		defer t.Stop()
		for {
			select {
			case <-v.quit:
				return
			case <-t.C:
				v.mu.Lock()
				v.redraw(nil)
				v.mu.Unlock()
			}
		}
	}()
}

// event updates the block from a run's event; name is the step's name in
// progress lines.
func (v *liveView) event(e interp.Event, name string) {
	key := e.Step + "\x00" + e.Item
	if e.Item != "" {
		name += " [" + e.Item + "]"
	}
	switch e.Type {
	case interp.EventStepStarted:
		v.running = append(v.running, &liveStep{key: key, name: name, start: time.Now()})
	case interp.EventStepCompleted, interp.EventStepFailed, interp.EventStepSkipped:
		v.running = slices.DeleteFunc(v.running, func(s *liveStep) bool { return s.key == key })
		for _, k := range []string{interp.DetailAgentCalls, interp.DetailRunTokens, interp.DetailRunCost} {
			if x, ok := e.Details[k]; ok {
				v.totals[k] = x
			}
		}
	case interp.EventAgentProgress:
		for _, s := range v.running {
			if s.key == key {
				s.note = agentNote(e, s.note)
			}
		}
	case interp.EventItemStarted, interp.EventItemCompleted, interp.EventItemFailed, interp.EventItemBlocked:
		c := v.items[e.Step]
		if c == nil {
			c = &itemCounts{}
			v.items[e.Step] = c
			v.order = append(v.order, e.Step)
		}
		switch e.Type {
		case interp.EventItemStarted:
			c.running++
		case interp.EventItemCompleted:
			c.running, c.done = max(c.running-1, 0), c.done+1
		case interp.EventItemFailed:
			c.running, c.failed = max(c.running-1, 0), c.failed+1
		case interp.EventItemBlocked:
			c.blocked++
		}
	}
	v.redraw(nil)
}

// print writes a line above the block.
func (v *liveView) print(line string) { v.redraw([]byte(line + "\n")) }

// redraw takes the block off the screen, writes above (lines that stay)
// and draws the block again, in one write so that it does not flicker.
func (v *liveView) redraw(above []byte) {
	var b bytes.Buffer
	if v.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\r\x1b[J", v.drawn)
		v.drawn = 0
	}
	b.Write(above)
	if !v.hidden && !v.stopped {
		lines := v.lines()
		width := 80
		if w, _, err := term.GetSize(int(v.f.Fd())); err == nil && w > 0 {
			width = w
		}
		for _, l := range lines {
			b.WriteString(clip(l, width-1) + "\n")
		}
		v.drawn = len(lines)
	}
	v.f.Write(b.Bytes())
}

// lines is the block's text.
func (v *liveView) lines() []string {
	now := time.Now()
	var out []string
	for _, s := range v.running {
		line := fmt.Sprintf("  > %s  %s", s.name, formatSeconds(now.Sub(s.start).Seconds()))
		if s.note != "" {
			line += " · " + s.note
		}
		out = append(out, line)
	}
	for _, step := range v.order {
		c := v.items[step]
		parts := []string{fmt.Sprintf("%d running", c.running), fmt.Sprintf("%d done", c.done)}
		if c.failed > 0 {
			parts = append(parts, fmt.Sprintf("%d failed", c.failed))
		}
		if c.blocked > 0 {
			parts = append(parts, fmt.Sprintf("%d blocked", c.blocked))
		}
		out = append(out, fmt.Sprintf("  %s items: %s", step, strings.Join(parts, ", ")))
	}
	status := "  elapsed " + formatSeconds(now.Sub(v.start).Seconds())
	if c := costLine(v.totals, interp.DetailRunTokens, interp.DetailRunCost, true); c != "" {
		status += " · " + c
	}
	return append(out, status)
}

func (v *liveView) hide() { v.hidden = true; v.redraw(nil) }
func (v *liveView) show() { v.hidden = false; v.redraw(nil) }

// stop takes the block off the screen for good.
func (v *liveView) stop() {
	if v.stopped {
		return
	}
	v.stopped = true
	close(v.quit)
	v.redraw(nil)
}
