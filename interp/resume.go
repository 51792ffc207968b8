package interp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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
	return fmt.Sprintf("the playbook changed since the run began (hash %.12s, now %.12s); resume with --force to run the new version", e.Was, e.Now)
}

// ReadRun reads a run's state without running anything; it says which
// file it used (the state file, or its backup when that was corrupt).
func ReadRun(dir string) (*State, string, error) { return readState(dir) }

// Resume continues the run in dir: completed steps are not run again and
// their outputs are restored; the step that was in flight, or that failed,
// runs again.
func Resume(ctx context.Context, pb *lang.Playbook, dir string, opts Options) (*Result, error) {
	d, err := openRunDir(dir)
	// A process that was just killed may have left a child between fork
	// and exec that still holds the lock for a moment: wait a little
	// before calling the run busy.
	for i := 0; i < 50 && errors.Is(err, ErrRunInUse); i++ {
		time.Sleep(20 * time.Millisecond)
		d, err = openRunDir(dir)
	}
	if errors.Is(err, ErrRunInUse) {
		return nil, &InputError{Msg: fmt.Sprintf("%v: it is still running; wait for it, or stop it first", err)}
	}
	if err != nil {
		return nil, err
	}
	keep := false
	defer func() {
		if !keep {
			d.close()
		}
	}()
	st, used, err := readState(dir)
	if err != nil {
		return nil, err
	}
	inOnFailure := st.Meta.OnFailure && st.Meta.OnFailureStep != ""
	switch {
	case opts.From != "":
		// Any run may go again from a chosen step.
	default:
		switch st.Meta.Status {
		case StatusRunning, StatusInterrupted, StatusWaiting:
		case StatusFailed:
			if st.Meta.CurrentStep == "" && !inOnFailure {
				return nil, fmt.Errorf("run %s failed by its own decision (%s); there is nothing to resume", st.Meta.RunID, failMessage(st.Meta))
			}
		default:
			return nil, fmt.Errorf("run %s already ended with status %q; there is nothing to resume", st.Meta.RunID, st.Meta.Status)
		}
	}
	if st.Waiting != nil && !opts.Force {
		w := st.Waiting
		key := w.Step
		if w.Item != "" {
			key += "[" + w.Item + "]"
		}
		answer, ok := opts.Answers[key]
		if v, plain := opts.Answers[w.Step]; plain && !ok {
			answer, ok = v, true
		}
		if ok && !contains(w.Options, answer) {
			return nil, &InputError{Msg: fmt.Sprintf("--answer %s=%s: step %s takes one of: %s; the run is still waiting",
				key, answer, key, strings.Join(w.Options, ", "))}
		}
		if !ok && opts.Asker == nil {
			return nil, &InputError{Msg: fmt.Sprintf("run %s is waiting for a decision at step %s: %s; answer with --answer %s=CHOICE (one of: %s)",
				st.Meta.RunID, key, w.Question, key, strings.Join(w.Options, ", "))}
		}
	}
	now := time.Now
	if opts.Clock != nil {
		now = opts.Clock
	}
	if b := st.Breaker; b.State == BreakerOpen && b.CooldownUntil != nil && now().Before(*b.CooldownUntil) && !opts.Force {
		return nil, &InputError{Msg: fmt.Sprintf("the circuit breaker of run %s is open until %s (%s); resume after that, or with --force",
			st.Meta.RunID, b.CooldownUntil.Format(time.RFC3339), b.Reason)}
	}
	changed := st.Meta.PlaybookHash != pb.Hash
	if changed && !opts.Force {
		return nil, &ChangedError{Was: st.Meta.PlaybookHash, Now: pb.Hash}
	}
	if opts.Workdir == "" {
		opts.Workdir = st.Meta.Workdir
	}
	opts.Mode = st.Meta.Mode
	r, err := newRun(pb, opts)
	if err != nil {
		return nil, err
	}
	r.st = st
	// Time spent stopped between runs does not count against limits.
	r.elapsed0 = time.Duration(st.Metrics.DurationS * float64(time.Second))
	if err := r.restore(); err != nil {
		return nil, err
	}
	r.dir = d
	r.store = newStore(stateFiles(dir), !opts.NoSync)
	if used != filepath.Base(stateFiles(dir).state) {
		r.event(Event{Type: EventLog, Message: "state file unreadable; resumed from " + used})
	}
	if changed {
		r.event(Event{Type: EventLog, Message: fmt.Sprintf("the playbook changed since the run began; resuming with the new version (--force), hash %.12s", pb.Hash)})
		r.st.Meta.PlaybookHash = pb.Hash
	}
	r.label = r.renderLabel()
	r.st.Waiting = nil
	if r.st.Breaker.State == BreakerOpen {
		r.st.Breaker.State = BreakerHalfOpen
		r.st.Breaker.ConsecutiveNoProgress, r.st.Breaker.ConsecutiveSameError = 0, 0
		r.event(Event{Type: EventLog, Message: "circuit breaker half-open: the next step decides whether it closes"})
	}
	if opts.From != "" {
		s := pb.Step(opts.From)
		if s == nil || s.Parent != nil || s.OnFailure {
			return nil, &InputError{Msg: fmt.Sprintf("--from %s: playbook %q has no main step of that name", opts.From, pb.Name)}
		}
		st.Meta.CurrentStep = s.Name
		inOnFailure = false
		for _, later := range pb.Steps[s.Index:] {
			if later.ForEach != nil {
				delete(st.Items, later.Name)
			}
		}
	}
	if inOnFailure {
		// The run failed and was stopped in its on_failure steps: it stays
		// failed and those steps go on.
		r.event(Event{Type: EventRunResumed, Step: st.Meta.OnFailureStep, Message: "resuming on_failure at step " + st.Meta.OnFailureStep})
	} else {
		r.st.Meta.Status = StatusRunning
		r.st.Meta.Reason, r.st.Meta.Recommendation = "", ""
		r.st.Meta.OnFailure, r.st.Meta.OnFailureStep = false, ""
		r.event(Event{Type: EventRunResumed, Step: st.Meta.CurrentStep, Message: "resuming at step " + st.Meta.CurrentStep})
	}
	steps := pb.Steps
	if inOnFailure {
		// The main steps are over; the failed one stays failed. Only an
		// on_failure step in flight goes back to pending.
		steps = pb.OnFailure
	}
	from := len(pb.Steps)
	if s := pb.Step(opts.From); s != nil && s.Parent == nil && !s.OnFailure {
		from = s.Index
	}
	for _, s := range steps {
		rec := st.Steps[s.Name]
		if rec == nil {
			continue
		}
		if !inOnFailure && (s.Index >= from || s.Name == st.Meta.CurrentStep) && rec.Status != StepRunning && rec.Status != StepFailed {
			// It runs again: not reused.
			continue
		}
		switch rec.Status {
		case StepCompleted, StepSkipped:
			r.event(Event{Type: EventStepReused, Step: s.Name, Message: fmt.Sprintf("%s earlier; not run again", rec.Status)})
		case StepRunning:
			// The attempt in flight when the run stopped did not finish.
			if rec.Attempts > 0 {
				rec.Attempts--
				rec.Runs = max(rec.Runs-1, 0)
			}
			rec.Status = StepPending
		case StepFailed:
			if !inOnFailure {
				rec.Status = StepPending // it runs again
			}
		}
	}
	// Records changed above: start from a full snapshot.
	r.st.Meta.LastCheckpoint = r.now()
	if err := r.store.snapshot(r.st); err != nil {
		return nil, fmt.Errorf("checkpoint run %s: %w", r.st.Meta.RunID, err)
	}
	keep = true // execute closes it
	return r.execute(ctx)
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
		if len(rec.Output) == 0 {
			continue
		}
		v, err := decodeOutput(s, rec.Output)
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
		r.vars[name] = v
	}
	return nil
}
