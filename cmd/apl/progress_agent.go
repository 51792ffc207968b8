package main

import (
	"fmt"
	"os"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
)

// agentProgress shows that an agent call is alive: its backend's retries,
// and every heartbeat how long it has run. On a terminal it is one line
// that each event rewrites and the next other line replaces; elsewhere
// (a log, a pipe) each event is a line of its own. The session a call
// runs in is not shown.
//
//	Step: REVIEW: agent retrying: attempt 2 of 10 after HTTP 529 (overloaded) [1m30s]
func (p *progress) agentProgress(prefix, name string, e interp.Event) {
	kind, _ := e.Details["kind"].(string)
	if kind == agent.ProgressSession {
		return
	}
	secs, _ := e.Details["elapsed_s"].(float64)
	elapsed := time.Duration(secs * float64(time.Second)).Round(time.Second)
	line := fmt.Sprintf("%sStep: %s: agent %s", prefix, name, firstLine(e.Message))
	if kind != "elapsed" {
		line += fmt.Sprintf(" [%s]", elapsed)
	}
	if f, ok := p.w.(*os.File); ok && isTerminal(f) {
		fmt.Fprintf(p.w, "\r%s\033[K", line)
		p.live = true
		return
	}
	fmt.Fprintln(p.w, line)
}
