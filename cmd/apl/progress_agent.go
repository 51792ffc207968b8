package main

import (
	"fmt"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
)

// An agent call in flight says it is alive with EventAgentProgress: its
// backend's retries as the driver hears of them, and every heartbeat how
// long it has run. On a terminal the status block shows the retry beside
// the step's running time (liveView, agentNote); elsewhere (a log, a pipe)
// each event is a line of its own (agentProgressLine). The session a call
// runs in is not shown.

// agentProgressLine is the progress line of an EventAgentProgress, "" for
// none:
//
//	Step: REVIEW: agent retrying: attempt 2 of 10 after HTTP 529 (overloaded) [1m30s]
//	Step: REVIEW: agent still running after 2m0s
func agentProgressLine(name string, e interp.Event) string {
	kind, _ := e.Details["kind"].(string)
	if kind == agent.ProgressSession {
		return ""
	}
	line := fmt.Sprintf("Step: %s: agent %s", name, firstLine(e.Message))
	if kind != "elapsed" {
		secs, _ := e.Details["elapsed_s"].(float64)
		line += fmt.Sprintf(" [%s]", time.Duration(secs*float64(time.Second)).Round(time.Second))
	}
	return line
}

// agentNote is what the status block shows beside a running step after
// an EventAgentProgress, given what it showed: the backend's last retry
// (the block shows the time itself).
func agentNote(e interp.Event, was string) string {
	if kind, _ := e.Details["kind"].(string); kind == agent.ProgressRetrying {
		return "agent " + firstLine(e.Message)
	}
	return was
}
