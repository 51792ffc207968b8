package interp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// ChangedError is returned by Resume when the playbook's source differs
// from the one the run started with; Options.Force overrides it.
type ChangedError struct{ Was, Now string }

func (e *ChangedError) Error() string {
	return fmt.Sprintf("the playbook changed since the run began (hash %.12s, now %.12s)", e.Was, e.Now)
}

// BreakerOpenError is returned by Resume while the run's circuit breaker
// cools down; Options.Force overrides it.
type BreakerOpenError struct {
	RunID  string
	Until  time.Time
	Reason string
}

func (e *BreakerOpenError) Error() string {
	return fmt.Sprintf("the circuit breaker of run %s is open until %s (%s)", e.RunID, e.Until.Format(time.RFC3339), e.Reason)
}

// WaitingError is returned by Resume for a run that waits for a decision
// it was not given, or was given one that is not an option.
type WaitingError struct {
	RunID string
	// Key names the decision: STEP, or STEP[ITEM] inside a for_each.
	Key     string
	Waiting Waiting
	// Given is the answer given, when it is not one of the options.
	Given string
}

func (e *WaitingError) Error() string {
	if e.Given != "" {
		return fmt.Sprintf("step %s takes one of: %s, not %q; run %s is still waiting", e.Key, strings.Join(e.Waiting.Options, ", "), e.Given, e.RunID)
	}
	choices := "one of: " + strings.Join(e.Waiting.Options, ", ")
	if e.Waiting.Text {
		choices = "a typed answer"
	}
	return fmt.Sprintf("run %s is waiting for a decision at step %s: %s (%s)", e.RunID, e.Key, e.Waiting.Question, choices)
}

// NoStepError is returned by Resume when
// Options.From names no main step of the playbook.
type NoStepError struct{ Step, Playbook string }

func (e *NoStepError) Error() string {
	return fmt.Sprintf("playbook %q has no main step %q", e.Playbook, e.Step)
}

// ReadRun reads a run's state without running anything; it says which
// file it used (the state file, or its backup when that was corrupt).
func ReadRun(dir string) (*State, string, error) {
	st, rep, err := readState(dir)
	return st, rep.Used, err
}

// Resume continues the run in dir: completed steps are not run again and
// their outputs are restored; the step that was in flight, or that failed,
// runs again.
func Resume(ctx context.Context, pb *lang.Playbook, dir string, opts Options) (*Result, error) {
	d, err := lockRun(dir)
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if !keep {
			d.close()
		}
	}()
	st, rep, err := readState(dir)
	if err != nil {
		return nil, err
	}
	if id := filepath.Base(dir); st.Meta.RunID != id {
		// A playbook's state block shares one state file between its runs:
		// a later run replaced this one's.
		return nil, fmt.Errorf("run %s cannot be resumed: its state file %s now holds run %s", id, stateFiles(dir).state, st.Meta.RunID)
	}
	if err := resumable(st, pb, opts); err != nil {
		return nil, err
	}
	if opts.Workdir == "" {
		opts.Workdir = st.Meta.Workdir
	}
	opts.Mode = st.Meta.Mode
	if opts.Timeouts, opts.AgentTimeout, err = st.Meta.keptTimeouts(opts); err != nil {
		return nil, err
	}
	st.Meta.recordTimeouts(opts)
	r, h, err := newRun(pb, opts)
	if err != nil {
		return nil, err
	}
	r.st = st
	// Time spent stopped between runs does not count against limits.
	r.elapsed0 = time.Duration(st.Metrics.DurationS * float64(time.Second))
	r.dir = d
	if err := r.restore(); err != nil {
		return nil, err
	}
	if err := r.fixSettings(); err != nil {
		return nil, err
	}
	h.store = newStoreFor(stateFiles(dir), opts)
	h.store.redact, d.redact = r.redact, r.redact
	d.attrs = r.redact.Bytes(st.Meta.TraceAttributes)
	if _, err := os.Stat(filepath.Join(dir, statePointer)); err == nil {
		if err := h.store.lock(st.Meta.RunID); err != nil {
			return nil, err
		}
	}
	if rep.Used != filepath.Base(stateFiles(dir).state) {
		r.event(Event{Type: EventLog, Message: "state file unreadable; resumed from " + rep.Used})
	}
	for _, l := range rep.Lost {
		r.event(Event{Type: EventLog, Message: "state journal damaged: " + l + "; what they recorded runs again"})
	}
	if st.Meta.PlaybookHash != pb.Hash {
		r.event(Event{Type: EventLog, Message: fmt.Sprintf("the playbook changed since the run began; resuming with the new version, hash %.12s", pb.Hash)})
		r.st.Meta.PlaybookHash = pb.Hash
	}
	r.label = r.renderLabel()
	r.st.Waiting = nil
	if r.st.Breaker.State == BreakerOpen {
		r.st.Breaker.State = BreakerHalfOpen
		r.st.Breaker.ConsecutiveNoProgress, r.st.Breaker.ConsecutiveSameError = 0, 0
		r.event(Event{Type: EventLog, Message: "circuit breaker half-open: the next step decides whether it closes"})
	}
	for _, msg := range d.stopSurvivors() {
		r.event(Event{Type: EventLog, Message: msg})
	}
	if err := r.rewind(opts.From); err != nil {
		return nil, err
	}
	// Records changed above: start from a full snapshot.
	if err := r.snapshot(); err != nil {
		return nil, err
	}
	keep = true // execute closes it
	return r.execute(ctx)
}

// lockRun takes the run's lock. A process that was just killed may have
// left a child between fork and exec that still holds the lock for a
// moment: wait a little before calling the run busy.
func lockRun(dir string) (*runDir, error) {
	var d *runDir
	var err error
	retry(50, 20*time.Millisecond, func() bool {
		d, err = openRunDir(dir)
		return !errors.Is(err, ErrRunInUse)
	})
	if errors.Is(err, ErrRunInUse) {
		return nil, fmt.Errorf("%w: it is still running; wait for it, or stop it first", err)
	}
	return d, err
}

// resumable says why the run in st cannot be resumed with pb and opts, if
// it cannot.
func resumable(st *State, pb *lang.Playbook, opts Options) error {
	inOnFailure := st.Meta.OnFailure && st.Meta.OnFailureStep != ""
	inFinally := st.Meta.Finally && st.Meta.FinallyStep != ""
	if opts.From == "" {
		// Any run may go again from a chosen step; otherwise only one that
		// did not end, or whose finally steps did not.
		switch {
		case inFinally:
		case st.Meta.Status == StatusRunning, st.Meta.Status == StatusInterrupted, st.Meta.Status == StatusWaiting:
		case st.Meta.Status == StatusFailed:
			if st.Meta.CurrentStep == "" && !inOnFailure {
				return fmt.Errorf("run %s failed by its own decision (%s); there is nothing to resume", st.Meta.RunID, failMessage(st.Meta))
			}
		default:
			return fmt.Errorf("run %s already ended with status %q; there is nothing to resume", st.Meta.RunID, st.Meta.Status)
		}
	}
	if st.Waiting != nil && !opts.Force {
		if err := answered(st, opts); err != nil {
			return err
		}
	}
	if b := st.Breaker; b.State == BreakerOpen && b.CooldownUntil != nil && clock(opts)().Before(*b.CooldownUntil) && !opts.Force {
		return &BreakerOpenError{RunID: st.Meta.RunID, Until: *b.CooldownUntil, Reason: b.Reason}
	}
	if st.Meta.PlaybookHash != pb.Hash && !opts.Force {
		return &ChangedError{Was: st.Meta.PlaybookHash, Now: pb.Hash}
	}
	if opts.From != "" {
		if s := pb.Step(opts.From); s == nil || s.Parent != nil || s.OnFailure || s.Finally {
			return &NoStepError{Step: opts.From, Playbook: pb.Name}
		}
	}
	return nil
}

// answered checks that a waiting run has its answer, or a person to ask.
func answered(st *State, opts Options) error {
	w := st.Waiting
	key := w.Key()
	answer, ok := opts.Answers[key]
	if v, plain := opts.Answers[w.Step]; plain && !ok {
		answer, ok = v, true
	}
	if ok && !w.Text && !slices.Contains(w.Options, answer) {
		return &WaitingError{RunID: st.Meta.RunID, Key: key, Waiting: *w, Given: answer}
	}
	if !ok && opts.Asker == nil {
		return &WaitingError{RunID: st.Meta.RunID, Key: key, Waiting: *w}
	}
	return nil
}

// rewind sets the run up to go on: from the step from when given, else
// where it stopped. Steps that ended are reused and say so; the attempt
// in flight when the run stopped, and a step that failed, run again.
func (r *run) rewind(from string) error {
	pb, st := r.pb, r.st
	inOnFailure := st.Meta.OnFailure && st.Meta.OnFailureStep != ""
	inFinally := st.Meta.Finally && st.Meta.FinallyStep != ""
	first := len(pb.Steps) // main steps from here on run again
	if from != "" {
		s := pb.Step(from)
		st.Meta.CurrentStep = s.Name
		first = s.Index
		inOnFailure, inFinally = false, false
		for _, later := range pb.Steps[s.Index:] {
			if later.ForEach != nil {
				delete(st.Items, later.Name)
			}
		}
	}
	steps := pb.Steps
	ending := inOnFailure || inFinally
	switch {
	case inFinally:
		// The run ended and was stopped in its finally steps: it keeps its
		// status and those steps go on; only one in flight goes back to
		// pending.
		r.event(Event{Type: EventRunResumed, Step: st.Meta.FinallyStep, Message: "resuming finally at step " + st.Meta.FinallyStep})
		steps = pb.Finally
	case inOnFailure:
		// The run failed and was stopped in its on_failure steps: it stays
		// failed and those steps go on. The main steps are over; the
		// failed one stays failed. Only an on_failure step in flight goes
		// back to pending.
		r.event(Event{Type: EventRunResumed, Step: st.Meta.OnFailureStep, Message: "resuming on_failure at step " + st.Meta.OnFailureStep})
		steps = pb.OnFailure
	default:
		st.Meta.Status = StatusRunning
		st.Meta.Reason, st.Meta.Recommendation = "", ""
		st.Meta.OnFailure, st.Meta.OnFailureStep = false, ""
		st.Meta.Finally, st.Meta.FinallyStep = false, ""
		r.event(Event{Type: EventRunResumed, Step: st.Meta.CurrentStep, Message: "resuming at step " + st.Meta.CurrentStep})
	}
	for _, s := range steps {
		rec := st.Steps[s.Name]
		if rec == nil {
			continue
		}
		if !ending && (s.Index >= first || s.Name == st.Meta.CurrentStep) && rec.Status != StepRunning && rec.Status != StepFailed {
			continue // it runs again: not reused
		}
		switch rec.Status {
		case StepCompleted, StepSkipped:
			r.event(Event{Type: EventStepReused, Step: s.Name, Message: fmt.Sprintf("%s earlier; not run again", rec.Status)})
		case StepRunning:
			undoAttempt(rec)
		case StepFailed:
			if !ending {
				rec.Status = StepPending // it runs again
				if s.ForEach != nil {
					r.retryItems(s)
				}
			}
		}
	}
	return nil
}

// restore rebuilds in-memory values from the state file: inputs, step
// outputs (decoded with their returns types) and vars.
func (r *run) restore() error {
	vals := map[string]cty.Value{}
	for _, in := range r.pb.Inputs {
		raw, ok := r.st.Meta.Inputs[in.Name]
		if !ok {
			if in.Required() {
				return fmt.Errorf("the run has no value for input %q", in.Name)
			}
			vals[in.Name] = in.Default
			continue
		}
		v, err := agent.Decode(raw, in.Type)
		if err != nil {
			return fmt.Errorf("input %q in the state: %w", in.Name, err)
		}
		vals[in.Name] = v
	}
	r.inputs = cty.ObjectVal(vals)
	for _, s := range r.topSteps() {
		rec := r.st.Steps[s.Name]
		if rec == nil {
			rec = &StepRecord{Status: StepPending}
			r.st.Steps[s.Name] = rec
		}
		js, err := recordedOutput(r.dir.path, rec)
		if err != nil {
			return fmt.Errorf("output of step %q in the state: %w", s.Name, err)
		}
		if len(js) == 0 {
			continue
		}
		v, err := decodeOutput(s, js)
		if err != nil {
			return fmt.Errorf("output of step %q in the state: %w", s.Name, err)
		}
		r.outputs[s.Name] = v
	}
	for name, raw := range r.st.Vars {
		v, err := builtins.JSONToCty(raw)
		if err != nil {
			return fmt.Errorf("var %q in the state: %w", name, err)
		}
		if v, err = r.varValue(name, v); err != nil {
			return fmt.Errorf("var %q in the state: %w", name, err)
		}
		r.vars[name] = v
	}
	return nil
}
