package interp

import (
	"context"
	"errors"
	"fmt"
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
	Range string // file:line:col of the step block
	Err   error
}

func (e *StepError) Error() string {
	return fmt.Sprintf("step %q (%s): %v", e.Step, e.Range, e.Err)
}

func (e *StepError) Unwrap() error { return e.Err }

// step runs one step and returns the name of the step to run next ("" to
// end the run).
func (r *run) step(ctx context.Context, s *lang.Step) (string, error) {
	rec := r.st.Steps[s.Name]
	next := ""
	if s.Next != nil {
		next = s.Next.Name
	}
	if s.When != nil {
		ok, err := s.When.Eval(r.exprEnv(cty.NilVal))
		if err != nil {
			r.failRun(s, fmt.Errorf("evaluating when %q: %w", s.When.Source, err))
			return "", nil
		}
		if !ok {
			r.skip(s, rec)
			return next, nil
		}
	}

	rec.Attempts++
	rec.Status = StepRunning
	rec.Error = ""
	start := r.now()
	rec.StartedAt = &start
	rec.CompletedAt = nil
	r.changed(s.Name)
	r.event(r.progressEvent(s, Event{Type: EventStepStarted, Step: s.Name, Attempt: rec.Attempts}))
	// Losing this transition to a power cut costs nothing that resume
	// would not redo, so it is written but not synced.
	if err := r.commit(false); err != nil {
		return "", err
	}

	actx, cancel := ctx, context.CancelFunc(func() {})
	if s.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, s.Timeout)
	}
	out, err := r.act(actx, s, rec)
	cancel()
	end := r.now()
	if ctx.Err() != nil {
		// Interrupted: the attempt did not finish and does not count.
		rec.Attempts--
		rec.Status = StepPending
		rec.StartedAt = nil
		r.changed(s.Name)
		return "", ErrInterrupted
	}
	rec.CompletedAt = &end
	rec.DurationS = end.Sub(start).Seconds()
	r.st.Metrics.StepsRun++
	if out != cty.NilVal && err == nil && s.Returns != cty.NilType {
		if _, isAgent := s.Action.(*lang.AgentCall); !isAgent {
			// Agent answers were checked already; shell and call outputs
			// are held to the declared type here.
			cv, cerr := convert.Convert(out, s.Returns)
			if cerr != nil {
				err = fmt.Errorf("output does not match returns %s: %v", typeName(s.Returns), cerr)
			}
			out = cv
		}
	}
	if out != cty.NilVal {
		if oerr := r.setOutput(s, out); oerr != nil && err == nil {
			err = oerr
		}
	}
	r.changed(s.Name)
	if err != nil {
		if s.Timeout > 0 && errors.Is(actx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("timed out after %s: %w", s.Timeout, err)
		}
		rec.Status = StepFailed
		rec.Error = err.Error()
		r.st.Metrics.StepsFailed++
		r.event(r.progressEvent(s, Event{Type: EventStepFailed, Step: s.Name, Attempt: rec.Attempts, Message: err.Error()}))
		if !s.ContinueOnError {
			r.failRun(s, err)
			return "", nil
		}
	} else {
		rec.Status = StepCompleted
		r.event(r.progressEvent(s, Event{Type: EventStepCompleted, Step: s.Name, Attempt: rec.Attempts}))
	}
	if s.Gate != nil {
		return r.route(s, next)
	}
	return next, nil
}

// setOutput records a step's output in memory and in the state.
func (r *run) setOutput(s *lang.Step, out cty.Value) error {
	r.outputs[s.Name] = out
	b, err := builtins.CtyToJSON(out)
	if err != nil {
		return fmt.Errorf("step %q output: %w", s.Name, err)
	}
	r.st.Steps[s.Name].Output = b
	return nil
}

func (r *run) skip(s *lang.Step, rec *StepRecord) {
	reason := fmt.Sprintf("condition %q is false", s.When.Source)
	if s.SkipReason != nil {
		if v, err := evalString(s.SkipReason, r.evalCtx(nil, s.SkipReason)); err == nil {
			reason = v
		}
	}
	rec.Status = StepSkipped
	rec.SkipReason = reason
	r.changed(s.Name)
	r.event(r.progressEvent(s, Event{Type: EventStepSkipped, Step: s.Name, Message: reason}))
}

// failRun marks the run failed because of step s.
func (r *run) failRun(s *lang.Step, err error) {
	se := &StepError{Step: s.Name, Range: s.DeclRange.String(), Err: err}
	r.st.Meta.Status = StatusFailed
	r.st.Meta.Reason = se.Error()
	r.failedInStep = true
}

// progressEvent fills in a step's progress position.
func (r *run) progressEvent(s *lang.Step, e Event) Event {
	if s.Progress == "" {
		return e
	}
	e.Progress = s.Progress
	ps := r.pb.ProgressSteps()
	e.ProgressTotal = len(ps)
	for i, p := range ps {
		if p == s {
			e.ProgressIndex = i + 1
		}
	}
	return e
}

// act performs the step's action. The set of actions is closed; an
// unknown one is a bug in lang or here.
func (r *run) act(ctx context.Context, s *lang.Step, rec *StepRecord) (cty.Value, error) {
	switch a := s.Action.(type) {
	case nil:
		return cty.NilVal, nil
	case *lang.Shell:
		return r.shellAction(ctx, s, a, rec)
	case *lang.AgentCall:
		return r.agentAction(ctx, s, a, rec)
	case *lang.Call:
		return r.callAction(ctx, s, a, rec)
	default:
		return cty.NilVal, fmt.Errorf("internal error: unknown action %T", a)
	}
}

func (r *run) callAction(ctx context.Context, s *lang.Step, a *lang.Call, rec *StepRecord) (cty.Value, error) {
	exprs := make([]hcl.Expression, len(a.Args))
	for i, arg := range a.Args {
		exprs[i] = arg.Expr
	}
	ectx := r.evalCtx(nil, exprs...)
	args := map[string]cty.Value{}
	for _, arg := range a.Args {
		v, diags := arg.Expr.Value(ectx)
		if diags.HasErrors() {
			return cty.NilVal, diagsError(diags)
		}
		args[arg.Name] = v
	}
	start := r.now()
	out, err := r.funcs.Call(ctx, a.Builtin, builtins.Env{Workdir: r.workdir, RunID: r.st.Meta.RunID, Step: s.Name}, cty.ObjectVal(args))
	r.trace(Span{Step: s.Name, Action: "tool_call", Attempt: rec.Attempts,
		InputSummary: a.Builtin + " " + string(mustJSON(cty.ObjectVal(args))), OutputSummary: summaryOf(out, err)}, start, err)
	return out, err
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
