package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
)

// progress prints a run's events on stderr in seed 000's format:
//
//	[Phase 6.3] Step: PLAN (4/9)
//	[Phase 6.3] Step: PLAN complete.
//	[Phase 6.3] Step: RESEARCH skipped (existing_plan is set).
//
// When the playbook labels some steps with progress, only those are
// announced; otherwise every step is.
type progress struct {
	w        io.Writer
	quiet    bool
	labelled bool
	// live is set while an agent's progress line shows on a terminal, for
	// the next line to replace (progress_agent.go).
	live bool
}

func newProgress(w io.Writer, quiet bool, pb *lang.Playbook) interp.Observer {
	return &progress{w: w, quiet: quiet, labelled: len(pb.ProgressSteps()) > 0}
}

func (p *progress) Event(e interp.Event) {
	if p.quiet {
		return
	}
	prefix := ""
	if e.Label != "" {
		prefix = "[" + e.Label + "] "
	}
	name := e.Progress
	if name == "" {
		name = e.Step
	}
	if e.Item != "" {
		name += " [" + e.Item + "]"
	}
	var line string
	quietStep := p.labelled && e.Progress == ""
	switch e.Type {
	case interp.EventStepStarted:
		if quietStep {
			return
		}
		if e.Progress != "" {
			line = fmt.Sprintf("Step: %s (%d/%d)", name, e.ProgressIndex, e.ProgressTotal)
		} else {
			line = "Step: " + name
		}
		if e.Attempt > 1 {
			line += fmt.Sprintf(" attempt %d", e.Attempt)
		}
	case interp.EventStepCompleted:
		if quietStep {
			return
		}
		line = fmt.Sprintf("Step: %s complete.", name)
	case interp.EventStepSkipped:
		line = fmt.Sprintf("Step: %s skipped (%s).", name, e.Message)
	case interp.EventStepFailed:
		line = fmt.Sprintf("Step: %s failed: %s", name, firstLine(e.Message))
	case interp.EventStepReused:
		line = fmt.Sprintf("Step: %s reused (%s).", name, e.Message)
	case interp.EventGateDecision, interp.EventRunWaiting:
		return
	case interp.EventAgentProgress:
		if !quietStep {
			p.agentProgress(prefix, name, e)
		}
		return
	case interp.EventHumanDecision:
		line = "Decision: " + e.Message
	case interp.EventItemStarted:
		line = fmt.Sprintf("Item %s: started", e.Item)
	case interp.EventItemCompleted, interp.EventItemFailed, interp.EventItemBlocked:
		line = fmt.Sprintf("Item %s: %s", e.Item, strings.TrimPrefix(e.Type, "item_"))
		if e.Message != "" {
			line += ": " + firstLine(e.Message)
		}
	case interp.EventStepRetried, interp.EventCheckFailed, interp.EventBreakerOpened, interp.EventBreakerClosed, interp.EventDeadlock:
		line = fmt.Sprintf("Step: %s: %s", name, firstLine(e.Message))
	case interp.EventRunStarted, interp.EventRunCompleted, interp.EventRunFailed, interp.EventRunResumed,
		interp.EventRunInterrupted, interp.EventLog, interp.EventCapExhausted, interp.EventBudgetEnforced:
		line = e.Message
	default:
		line = e.Type
		if e.Message != "" {
			line += ": " + e.Message
		}
	}
	if p.live {
		fmt.Fprint(p.w, "\r\033[K")
		p.live = false
	}
	fmt.Fprintf(p.w, "%s%s\n", prefix, line)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
