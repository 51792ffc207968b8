package interp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// StepError is a step's failure, located at the step's declaration.
type StepError struct {
	Step  string
	Item  string // the for_each item's key, when the step ran for one
	Range string // file:line:col of the step block
	Err   error
}

func (e *StepError) Error() string {
	if e.Item != "" {
		return fmt.Sprintf("step %q, item %q (%s): %v", e.Step, e.Item, e.Range, e.Err)
	}
	return fmt.Sprintf("step %q (%s): %v", e.Step, e.Range, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// errWaiting stops a run that waits for a human decision.
var errWaiting = errors.New("waiting for a decision")

// capError is a run-level cap or circuit breaker tripping: it fails the
// run even where a step's failure would not.
type capError struct{ msg string }

func (e *capError) Error() string { return e.msg }

// step runs one step of frame f and returns the name of the step to run
// next ("" to end the frame).
func (r *run) step(ctx context.Context, f *frame, s *lang.Step) (string, error) {
	rec := f.recs[s.Name]
	next := ""
	if s.Next != nil {
		next = s.Next.Name
	}
	if s.When != nil {
		ok, err := s.When.Eval(r.exprEnv(f))
		if err != nil {
			r.fail(f, s, fmt.Errorf("evaluating when %q: %w", s.When.Source, err))
			return "", nil
		}
		if !ok {
			r.skip(f, s, rec)
			return next, nil
		}
	}
	if s.Serial {
		// One item at a time: wait for the step's lock without holding the
		// run's.
		mu := r.serialLock(s)
		r.unlocked(mu.Lock)
		defer mu.Unlock()
	}

	rec.Attempts++
	rec.Status = StepRunning
	rec.Error = ""
	start := r.now()
	rec.StartedAt = &start
	rec.CompletedAt = nil
	r.frameChanged(f, s.Name)
	r.event(r.stepEvent(f, s, Event{Type: EventStepStarted, Attempt: rec.Attempts}))
	// Losing this transition to a power cut costs nothing that resume
	// would not redo, so it is written but not synced. A step without an
	// action does nothing in flight: its start and end are one transition.
	if s.Action != nil || s.ForEach != nil {
		if err := r.commit(false); err != nil {
			return "", err
		}
	}

	_, err := r.attempt(ctx, f, s, rec)
	end := r.now()
	if ctx.Err() != nil || errors.Is(err, errWaiting) {
		// Interrupted or paused: the attempt did not finish and does not
		// count.
		rec.Attempts--
		rec.Runs--
		rec.Status = StepPending
		rec.StartedAt = nil
		r.frameChanged(f, s.Name)
		if errors.Is(err, errWaiting) {
			return "", errWaiting
		}
		return "", ErrInterrupted
	}
	rec.CompletedAt = &end
	rec.DurationS = end.Sub(start).Seconds()
	r.st.Metrics.StepsRun++
	r.frameChanged(f, s.Name)
	var ce *capError
	if errors.As(err, &ce) {
		rec.Status = StepFailed
		rec.Error = err.Error()
		r.st.Metrics.StepsFailed++
		r.event(r.stepEvent(f, s, Event{Type: EventStepFailed, Attempt: rec.Attempts, Message: err.Error()}))
		r.tripRun(f, s, ce)
		return "", nil
	}
	if err != nil {
		rec.Status = StepFailed
		rec.Error = err.Error()
		r.st.Metrics.StepsFailed++
		r.event(r.stepEvent(f, s, Event{Type: EventStepFailed, Attempt: rec.Attempts, Message: err.Error()}))
	} else {
		rec.Status = StepCompleted
		r.event(r.stepEvent(f, s, Event{Type: EventStepCompleted, Attempt: rec.Attempts}))
	}
	tripped := r.breaker(f, s, err)
	if err != nil && (!s.ContinueOnError || tripped != nil) {
		if tripped != nil {
			r.tripRun(f, s, tripped)
		} else {
			r.fail(f, s, err)
		}
		return "", nil
	}
	to := next
	if s.Gate != nil {
		if to, err = r.route(f, s, next); err != nil {
			return "", err
		}
	}
	if tripped != nil {
		// The step itself completed: resume goes on from where it led.
		r.tripRun(f, s, tripped)
		r.failedInStep = false
	}
	return to, nil
}

// attempt performs the step's action, retrying it after errors as its
// retry block allows and running it again when a check rejects its
// output (for agents, with the check's message as feedback).
func (r *run) attempt(ctx context.Context, f *frame, s *lang.Step, rec *StepRecord) (cty.Value, error) {
	retries, rechecks := 0, map[string]int{}
	feedback := ""
	for {
		actx, cancel := ctx, context.CancelFunc(func() {})
		if s.Timeout > 0 {
			actx, cancel = context.WithTimeout(ctx, s.Timeout)
		}
		// A new run of the action: nothing of the last one stays visible.
		rec.Runs++
		rec.Output, rec.ExitCode = nil, nil
		delete(f.outputs, s.Name)
		r.frameChanged(f, s.Name)
		out, err := r.act(actx, f, s, rec, feedback)
		timedOut := s.Timeout > 0 && errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		if ctx.Err() != nil || errors.Is(err, errWaiting) {
			return cty.NilVal, err
		}
		if err != nil && timedOut {
			err = fmt.Errorf("timed out after %s: %w", s.Timeout, err)
		}
		if err == nil {
			out, err = r.conform(s, out)
		}
		if out != cty.NilVal {
			if oerr := r.setOutput(f, s, out); oerr != nil && err == nil {
				err = oerr
			}
		}
		var ce *capError
		if errors.As(err, &ce) {
			return out, err
		}
		if err != nil {
			if s.Retry == nil || retries >= s.Retry.Max {
				return out, err
			}
			retries++
			if cerr := r.countRetry(f, s, fmt.Sprintf("retry %d/%d after: %v", retries, s.Retry.Max, err)); cerr != nil {
				return out, cerr
			}
			wait := s.Retry.Backoff << (retries - 1)
			if werr := r.sleep(ctx, wait); werr != nil {
				return cty.NilVal, werr
			}
			continue
		}
		check, msg, cerr := r.runChecks(f, s)
		if cerr != nil {
			return out, cerr
		}
		if check == nil {
			return out, nil
		}
		if check.OnFail != "retry" || rechecks[check.Name] >= check.Max {
			return out, fmt.Errorf("check %q failed: %s", check.Name, msg)
		}
		rechecks[check.Name]++
		if cerr := r.countRetry(f, s, fmt.Sprintf("check %q failed (%d/%d): %s", check.Name, rechecks[check.Name], check.Max, msg)); cerr != nil {
			return out, cerr
		}
		feedback = fmt.Sprintf("Your previous answer was rejected by check %q: %s", check.Name, msg)
	}
}

// conform holds shell and call outputs to the step's returns type; agent
// answers were checked against it already.
func (r *run) conform(s *lang.Step, out cty.Value) (cty.Value, error) {
	if out == cty.NilVal || s.Returns == cty.NilType || s.ForEach != nil {
		return out, nil
	}
	if _, isAgent := s.Action.(*lang.AgentCall); isAgent {
		return out, nil
	}
	cv, err := convert.Convert(out, s.Returns)
	if err != nil {
		return out, fmt.Errorf("output does not match returns %s: %v", s.Returns.FriendlyName(), err)
	}
	return cv, nil
}

// runChecks evaluates the step's checks against its output and returns
// the first that fails, with its message.
func (r *run) runChecks(f *frame, s *lang.Step) (*lang.Check, string, error) {
	if len(s.Checks) == 0 {
		return nil, "", nil
	}
	env := r.exprEnv(f)
	for _, c := range s.Checks {
		ok, err := c.Condition.Eval(env)
		if err != nil {
			return nil, "", fmt.Errorf("check %q (%s): %w", c.Name, c.Condition.Range, err)
		}
		if ok {
			continue
		}
		msg := fmt.Sprintf("condition %q is false", c.Condition.Source)
		if c.Message != nil {
			if m, err := evalString(c.Message, r.evalCtx(f, nil, c.Message)); err == nil {
				msg = m
			}
		}
		r.event(r.stepEvent(f, s, Event{Type: EventCheckFailed, Message: fmt.Sprintf("check %q: %s", c.Name, msg),
			Details: map[string]any{"check": c.Name}}))
		return c, msg, nil
	}
	return nil, "", nil
}

// sleep waits d without holding the run, or until ctx is done.
func (r *run) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	var err error
	r.unlocked(func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-t.C:
		}
	})
	return err
}

// setOutput records a step's output in memory and in the state.
func (r *run) setOutput(f *frame, s *lang.Step, out cty.Value) error {
	f.outputs[s.Name] = out
	b, err := builtins.CtyToJSON(out)
	if err != nil {
		return fmt.Errorf("step %q output: %w", s.Name, err)
	}
	f.recs[s.Name].Output = b
	r.frameChanged(f, s.Name)
	return nil
}

func (r *run) skip(f *frame, s *lang.Step, rec *StepRecord) {
	reason := fmt.Sprintf("condition %q is false", s.When.Source)
	if s.SkipReason != nil {
		if v, err := evalString(s.SkipReason, r.evalCtx(f, nil, s.SkipReason)); err == nil {
			reason = v
		}
	}
	rec.Status = StepSkipped
	rec.SkipReason = reason
	r.frameChanged(f, s.Name)
	r.event(r.stepEvent(f, s, Event{Type: EventStepSkipped, Message: reason}))
}

// fail ends frame f because of step s: the run, or just the item.
func (r *run) fail(f *frame, s *lang.Step, err error) {
	se := &StepError{Step: s.Name, Item: f.key(), Range: s.DeclRange.String(), Err: err}
	if f.item != nil {
		f.item.rec.Status = StepFailed
		f.item.rec.Error = se.Error()
		r.frameChanged(f, s.Name)
		return
	}
	r.st.Meta.Status = StatusFailed
	r.st.Meta.Reason = se.Error()
	r.failedInStep = true
}

// tripRun fails the whole run because a cap or the circuit breaker
// tripped in step s, wherever the step ran.
func (r *run) tripRun(f *frame, s *lang.Step, ce *capError) {
	if r.st.Meta.Status == StatusRunning {
		r.st.Meta.Status = StatusFailed
		r.st.Meta.Recommendation = "halt"
		r.st.Meta.Reason = (&StepError{Step: s.Name, Item: f.key(), Range: s.DeclRange.String(), Err: ce}).Error()
		r.failedInStep = true
	}
	r.tripped = ce
}

// stepEvent fills in a step's name, item and progress position.
func (r *run) stepEvent(f *frame, s *lang.Step, e Event) Event {
	e.Step = s.Name
	e.Item = f.key()
	if s.Progress == "" {
		return e
	}
	e.Progress = s.Progress
	e.ProgressIndex, e.ProgressTotal = s.ProgressIndex, r.pb.ProgressTotal
	return e
}

// act performs the step's action. The set of actions is closed; an
// unknown one is a bug in lang or here.
func (r *run) act(ctx context.Context, f *frame, s *lang.Step, rec *StepRecord, feedback string) (cty.Value, error) {
	if s.ForEach != nil {
		return r.forEach(ctx, s)
	}
	switch a := s.Action.(type) {
	case nil:
		return cty.NilVal, nil
	case *lang.Shell:
		return r.shellAction(ctx, f, s, a, rec)
	case *lang.AgentCall:
		return r.agentAction(ctx, f, s, a, rec, feedback)
	case *lang.Call:
		return r.callAction(ctx, f, s, a, rec)
	case *lang.Ask:
		return r.askAction(ctx, f, s, a)
	case *lang.SubPlaybook:
		return r.subPlaybookAction(ctx, f, s, a, rec)
	default:
		return cty.NilVal, fmt.Errorf("internal error: unknown action %T", a)
	}
}

func (r *run) callAction(ctx context.Context, f *frame, s *lang.Step, a *lang.Call, rec *StepRecord) (cty.Value, error) {
	exprs := make([]hcl.Expression, len(a.Args))
	for i, arg := range a.Args {
		exprs[i] = arg.Expr
	}
	ectx := r.evalCtx(f, nil, exprs...)
	args := map[string]cty.Value{}
	for _, arg := range a.Args {
		v, diags := arg.Expr.Value(ectx)
		if diags.HasErrors() {
			return cty.NilVal, diagsError(diags)
		}
		args[arg.Name] = v
	}
	start := r.now()
	env := builtins.Env{Workdir: r.workdir, RunID: r.st.Meta.RunID, Step: s.Name}
	var out cty.Value
	var err error
	r.unlocked(func() { out, err = r.funcs.Call(ctx, a.Builtin, env, cty.ObjectVal(args)) })
	r.trace(Span{Step: s.Name, Item: f.key(), Action: "tool_call", Attempt: rec.Runs,
		InputSummary: a.Builtin + " " + string(mustJSON(cty.ObjectVal(args))), OutputSummary: summaryOf(out, err)}, start, err)
	return out, err
}

// unlocked runs fn without holding the run's lock, so that other items
// can go on while fn waits on a process, a backend or a person.
func (r *run) unlocked(fn func()) {
	r.mu.Unlock()
	defer r.mu.Lock()
	fn()
}

func (r *run) serialLock(s *lang.Step) *sync.Mutex {
	if r.serial == nil {
		r.serial = map[string]*sync.Mutex{}
	}
	mu, ok := r.serial[s.Name]
	if !ok {
		mu = &sync.Mutex{}
		r.serial[s.Name] = mu
	}
	return mu
}

// trace records a span; trace failures never stop a run (seed 000: trace
// failures must not block execution), but they are logged.
func (r *run) trace(sp Span, start time.Time, err error) {
	sp.Timestamp = start
	sp.RunID = r.st.Meta.RunID
	sp.DurationMS = r.now().Sub(start).Milliseconds()
	sp.Status = "success"
	if err != nil {
		sp.Status = "failure"
	}
	if terr := r.dir.span(sp); terr != nil {
		r.event(Event{Type: EventLog, Step: sp.Step, Message: "trace not written: " + terr.Error()})
	}
}

func mustJSON(v cty.Value) []byte {
	if v == cty.NilVal {
		return nil
	}
	b, err := builtins.CtyToJSON(v)
	if err != nil {
		return []byte(v.GoString())
	}
	return b
}

func summaryOf(v cty.Value, err error) string {
	if err != nil {
		return err.Error()
	}
	return string(mustJSON(v))
}

// normalizeError reduces an error to what makes two failures "the same"
// for the circuit breaker: its text without digits.
func normalizeError(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return -1
		}
		return r
	}, s)
}
