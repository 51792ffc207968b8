package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
)

// progress prints a run's events on stderr in the phase runner's format:
//
//	[Phase 6.3] Step: PLAN (4/9)
//	[Phase 6.3] Step: PLAN complete. (2.1s · 1,234 tokens · $0.0123)
//	[Phase 6.3] Step: RESEARCH skipped (existing_plan is set).
//	[Phase 6.3] completed in 12.3s · 3 agent calls · 4,210 tokens · $0.0123
//
// When the playbook labels some steps with progress, only those are
// announced; otherwise every step is. A failed step is followed by the
// end of its output and where the whole of it is. With verbose, shell
// steps' output is streamed as it comes, each line prefixed with its step.
// On a terminal, a status block under the lines shows the steps running
// and the run's time, tokens and cost so far (see live.go).
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	quiet    bool
	pb       *lang.Playbook
	labelled bool
	// failures are the step failures shown, so that the run's reason is
	// not printed again.
	failures []string
	live     *liveView // nil when stderr is not a terminal
	// asking counts the questions on the screen (hold). The lines that
	// come meanwhile wait in held, and print once the question is
	// answered, so that the question and its prompt stay whole; past
	// maxHeld of them only their count is kept (dropped).
	asking  int
	held    []string
	dropped int
}

// maxHeld is how many progress lines wait while a question is on the
// screen; the rest are counted.
const maxHeld = 1000

// progressOptions are apl run's and apl resume's flags for progress.
type progressOptions struct {
	Quiet   bool `short:"q" help:"No progress lines on stderr."`
	Verbose bool `short:"v" help:"Stream shell steps' output on stderr as it comes, each line prefixed with its step."`
}

func newProgress(w io.Writer, o progressOptions, pb *lang.Playbook) *progress {
	p := &progress{w: w, quiet: o.Quiet, pb: pb, labelled: len(pb.ProgressSteps()) > 0}
	if f, ok := w.(*os.File); ok && !o.Quiet && isTerminal(f) && os.Getenv("TERM") != "dumb" {
		p.live = newLiveView(f)
		p.live.attach(&p.mu)
	}
	return p
}

// output is interp.Options.Output for --verbose: each line of a shell
// step's output, prefixed with the step.
func (p *progress) output(step, item string, stderr bool, line string) {
	p.println(interp.StepKey(p.stepName(step, ""), item) + " | " + line)
}

// close stops the status block, leaving the lines above it.
func (p *progress) close() {
	if p.live != nil {
		p.mu.Lock()
		p.live.stop()
		p.mu.Unlock()
	}
}

// hold takes the status block off the screen while a question is asked,
// and keeps the progress lines that come meanwhile off it too: they
// would land on the prompt. It returns what prints them and puts the
// block back.
func (p *progress) hold() (release func()) {
	p.mu.Lock()
	p.asking++
	if p.live != nil {
		p.live.hide()
	}
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.asking--; p.asking > 0 {
			return
		}
		held, dropped := p.held, p.dropped
		p.held, p.dropped = nil, 0
		for _, l := range held {
			p.printLocked(l)
		}
		if dropped > 0 {
			p.printLocked(fmt.Sprintf("(%d more progress lines came while the question waited)", dropped))
		}
		if p.live != nil {
			p.live.show()
		}
	}
}

func (p *progress) println(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.printLocked(line)
}

func (p *progress) printLocked(line string) {
	if p.asking > 0 {
		if len(p.held) < maxHeld {
			p.held = append(p.held, line)
		} else {
			p.dropped++
		}
		return
	}
	if p.live != nil {
		p.live.print(line)
		return
	}
	fmt.Fprintln(p.w, line)
}

// stepName is a step's name in progress lines: its progress label when it
// has one.
func (p *progress) stepName(step, progress string) string {
	if progress != "" {
		return progress
	}
	if s := p.pb.Step(step); s != nil && s.Progress != "" {
		return s.Progress
	}
	return step
}

func (p *progress) Event(e interp.Event) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.live != nil {
		p.live.event(e, p.stepName(e.Step, e.Progress))
	}
	prefix := ""
	if e.Label != "" {
		prefix = "[" + e.Label + "] "
	}
	name := p.stepName(e.Step, e.Progress)
	if e.Item != "" {
		name += " [" + e.Item + "]"
	}
	var line string
	quietStep := p.labelled && e.Progress == "" && (p.pb.Step(e.Step) == nil || p.pb.Step(e.Step).Progress == "")
	var tail []string
	switch e.Type {
	case interp.EventStepStarted:
		if quietStep || p.live != nil {
			// On a terminal, the status block shows the steps running.
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
		if e.Message != "" {
			// The step's progress_start.
			line += " " + e.Message
		}
	case interp.EventStepCompleted:
		if quietStep {
			return
		}
		line = fmt.Sprintf("Step: %s complete.", name)
		if e.Message != "" {
			// The step's progress_done.
			line += " " + e.Message
		}
		if c := costLine(e.Details, interp.DetailTokens, interp.DetailCost, false); c != "" {
			line += " (" + c + ")"
		}
	case interp.EventStepSkipped:
		line = fmt.Sprintf("Step: %s skipped (%s).", name, e.Message)
	case interp.EventStepFailed:
		line = fmt.Sprintf("Step: %s failed: %s", name, firstLine(e.Message))
		p.failures = append(p.failures, e.Message)
		if paths, ok := e.Details[interp.DetailArtifacts].([]string); ok {
			tail = outputTail(paths)
		}
	case interp.EventStepReused:
		if quietStep {
			return
		}
		line = fmt.Sprintf("Step: %s reused (%s).", name, e.Message)
	case interp.EventGateDecision, interp.EventRunWaiting:
		return
	case interp.EventAgentProgress:
		// On a terminal, the status block shows it (live.go).
		if quietStep || p.live != nil {
			return
		}
		if line = agentProgressLine(name, e); line == "" {
			return
		}
	case interp.EventHumanDecision:
		line = "Decision: " + e.Message
	case interp.EventItemStarted:
		if p.live != nil {
			return
		}
		line = fmt.Sprintf("Item %s: started", e.Item)
	case interp.EventItemCompleted, interp.EventItemFailed, interp.EventItemBlocked:
		line = fmt.Sprintf("Item %s: %s", e.Item, strings.TrimPrefix(e.Type, "item_"))
		if e.Message != "" {
			line += ": " + firstLine(e.Message)
		}
	case interp.EventStepRetried, interp.EventCheckFailed, interp.EventBreakerOpened, interp.EventBreakerClosed, interp.EventDeadlock:
		line = fmt.Sprintf("Step: %s: %s", name, firstLine(e.Message))
	case interp.EventRunCompleted, interp.EventRunFailed, interp.EventRunInterrupted:
		if sub := e.Step != "" && (e.Type != interp.EventRunInterrupted || strings.Contains(e.Step, "/")); sub || e.Details == nil {
			// A sub-playbook's end (interp names its step): that step's
			// own line says how it went.
			line = e.Message
			break
		}
		line = p.summary(e)
	case interp.EventRunStarted, interp.EventRunResumed, interp.EventLog, interp.EventCapExhausted, interp.EventBudgetEnforced:
		line = e.Message
	default:
		line = e.Type
		if e.Message != "" {
			line += ": " + e.Message
		}
	}
	p.printLocked(prefix + line)
	for _, l := range tail {
		p.printLocked(l)
	}
}

// summary is the line that ends a run: how it ended, in how long, and
// what its agents cost. A failure's reason is left to the report on
// stdout, and to the step's line above when a step failed.
func (p *progress) summary(e interp.Event) string {
	status, _ := e.Details[interp.DetailStatus].(string)
	if e.Type == interp.EventRunInterrupted {
		status = interp.StatusInterrupted
	}
	d, _ := e.Details[interp.DetailDuration].(float64)
	word := " in "
	if status == interp.StatusInterrupted {
		word = " after "
	}
	line := status + word + formatSeconds(d)
	if c := costLine(e.Details, interp.DetailTokens, interp.DetailCost, true); c != "" {
		line += " · " + c
	}
	if reason, _ := e.Details[interp.DetailReason].(string); reason != "" && !p.shown(reason) {
		line += ": " + firstLine(reason)
	}
	return line
}

// shown reports whether a run's reason repeats a step failure already
// printed.
func (p *progress) shown(reason string) bool {
	for _, f := range p.failures {
		if strings.Contains(reason, f) {
			return true
		}
	}
	return false
}

// costLine puts an event's duration, agent calls, tokens and cost into
// words: "2.1s · 1,234 tokens · $0.0123". With calls, the agent calls are
// counted and the duration left out (the caller says it).
func costLine(d map[string]any, tokensKey, costKey string, calls bool) string {
	var parts []string
	if !calls {
		if s, ok := d[interp.DetailDuration].(float64); ok {
			parts = append(parts, formatSeconds(s))
		}
	}
	if n, _ := d[interp.DetailAgentCalls].(int); calls && n > 0 {
		parts = append(parts, plural(n, "agent call"))
	}
	if n, _ := d[tokensKey].(int); n > 0 {
		parts = append(parts, formatInt(n)+" tokens")
	}
	if c, ok := d[costKey].(float64); ok {
		parts = append(parts, formatCost(c))
	}
	return strings.Join(parts, " · ")
}

// formatSeconds says a duration the way people read it: 0.4s, 12.3s,
// 2m5s.
func formatSeconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// formatInt writes n with thousands separators: 4,210.
func formatInt(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + formatInt(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// formatCost writes a cost in USD: cents for a dollar and more, four
// decimals below.
func formatCost(c float64) string {
	if c >= 1 {
		return fmt.Sprintf("$%.2f", c)
	}
	return fmt.Sprintf("$%.4f", c)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}
