package interp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// step runs one step of frame f and says what it came to. It writes the
// step's own record; what the outcome means for the frame (the run's or
// the item's status, where to go on) is for the frame's walk to apply.
func (r *run) step(ctx context.Context, f *frame, s *lang.Step) outcome {
	rec := f.recs[s.Name]
	next := ""
	if s.Next != nil {
		next = s.Next.Name
	}
	if s.When != nil {
		ok, err := s.When.Eval(r.exprEnv(f, s.When))
		if err != nil {
			return r.failed(f, s, fmt.Errorf("evaluating when %q: %w", s.When.Source, err))
		}
		if !ok {
			r.skip(f, s, rec)
			return goTo(next)
		}
	}
	// The step's locals are evaluated once the step is sure to run, and
	// hold for the whole attempt: its retries, checks and gate.
	f.locals, f.step = cty.NilVal, s
	if len(s.Locals) > 0 {
		v, err := r.stepLocals(f, s)
		if err != nil {
			return r.failed(f, s, err)
		}
		f.locals = v
	}
	if s.Serial {
		// One item at a time: wait for the step's turn without holding up
		// the other coroutines.
		turn := r.serialTurn(s)
		r.host.block(func() { turn.Send(struct{}{}) })
		defer turn.Receive()
	}

	release, ok := r.mayStart(ctx, f)
	if !ok {
		return interrupted
	}
	// A new attempt starts a new agent session; one that was cut off
	// (undoAttempt) or failed, and is resumed, continues its own.
	rec.newSession = rec.Status != StepPending
	rec.Attempts++
	rec.Status = StepRunning
	rec.Error, rec.ErrorKind = "", ""
	start := r.now()
	rec.StartedAt = &start
	rec.CompletedAt = nil
	r.event(r.stepEvent(f, s, Event{Type: EventStepStarted, Attempt: rec.Attempts, Message: r.progressNote(f, s.ProgressStart)}))
	release()
	// Losing this transition to a power cut costs nothing that resume
	// would not redo, so it is written but not synced. A step without an
	// action does nothing in flight: its start and end are one transition.
	var startErr error
	stopStart := func() {}
	switch {
	case r.startLate(s):
		// A quick command or call ends before anyone could see it run:
		// its start goes to the journal with its end, one line, unless it
		// lasts startWindow. Until then the journal shows the step still
		// to run, which is what resume makes of a started step anyway
		// (the process it started, procs.log records at once).
		r.touch(f, s)
		stopStart = r.host.after(startWindow, func() { startErr = r.commit(f, s, false) })
	case s.Action != nil || s.ForEach != nil:
		// The documents are current when an action starts: what it reads
		// of them shows its own step running.
		r.docs.current = s.Action != nil
		err := r.commit(f, s, false)
		r.docs.current = false
		if err != nil {
			return abort(err)
		}
	}

	o := r.attempt(ctx, f, s, rec)
	stopStart()
	if startErr != nil {
		return abort(startErr)
	}
	if o.kind == outWait || o.kind == outInterrupt || ctx.Err() != nil {
		// Interrupted or paused: the attempt did not finish and does not
		// count.
		undoAttempt(rec)
		if o.kind == outWait {
			return o
		}
		return interrupted
	}
	switch o.kind {
	case outAbort:
		return o
	case outNext, outFail, outTrip:
	default:
		return abort(fmt.Errorf("internal error: step %q: its action came to %s", s.Name, o.kind))
	}
	end := r.now()
	rec.CompletedAt = &end
	rec.DurationS = end.Sub(start).Seconds()
	r.st.Metrics.StepsRun++
	if o.kind == outTrip {
		// A cap tripped in the step's action, or in an item of it (whose
		// step located it: the reason names the item). The step failed:
		// resume runs it again.
		if o.reason == "" {
			o = r.tripped(f, s, o.trip, s.Name)
		}
		r.relayTrip()
		o.next = s.Name
		rec.Status = StepFailed
		rec.Error, rec.ErrorKind = o.reason, o.errorKind
		r.st.Metrics.StepsFailed++
		r.event(r.stepEvent(f, s, Event{Type: EventStepFailed, Attempt: rec.Attempts, Message: o.reason,
			Details: r.stepDetails(f, s, rec, true)}))
		return o
	}
	err := o.err
	if err != nil {
		rec.Status = StepFailed
		rec.Error, rec.ErrorKind = err.Error(), errorKind(err)
		r.st.Metrics.StepsFailed++
		r.event(r.stepEvent(f, s, Event{Type: EventStepFailed, Attempt: rec.Attempts, Message: err.Error(),
			Details: r.stepDetails(f, s, rec, true)}))
	} else {
		rec.Status = StepCompleted
		r.event(r.stepEvent(f, s, Event{Type: EventStepCompleted, Attempt: rec.Attempts,
			Message: r.progressNote(f, s.ProgressDone), Details: r.stepDetails(f, s, rec, false)}))
	}
	br := r.breaker(f, s, err)
	if err != nil && (!s.ContinueOnError || br != nil) {
		if br != nil {
			// The step failed: resume runs it again.
			return r.tripped(f, s, br, s.Name)
		}
		return r.failed(f, s, err)
	}
	o = goTo(next)
	if s.Gate != nil {
		o = r.route(f, s, next)
	}
	if br != nil && o.kind == outNext {
		// The step completed: resume goes on from where its gate led. A
		// gate that ended the frame has the last word on the frame; for
		// an item, the scheduler stops the run all the same (run.stopped).
		return r.tripped(f, s, br, o.next)
	}
	return o
}

// startWindow is how long a shell command or a builtin call runs before
// its step's start is written to the journal on its own; one that ends
// sooner has its start and end written as one line. A variable only so
// that a test can widen it: whether a command is quick must not depend
// on how loaded the machine running the test is.
var startWindow = 50 * time.Millisecond

// startLate says whether step s's start may wait for startWindow: a
// shell command or a builtin call, in a playbook without documents
// (which show an action's own step running while it runs). Agents,
// questions, sub-playbooks and for_each steps last, and write their
// start at once.
func (r *run) startLate(s *lang.Step) bool {
	if len(r.pb.Documents) > 0 {
		return false
	}
	switch s.Action.(type) {
	case *lang.Shell, *lang.Call:
		return s.ForEach == nil
	}
	return false
}

// undoAttempt takes back the start of an attempt that did not finish: a
// run interrupted or paused in it, or killed while it ran.
func undoAttempt(rec *StepRecord) {
	if rec.Attempts > 0 {
		rec.Attempts--
		rec.Runs = max(rec.Runs-1, 0)
	}
	rec.Status = StepPending
	rec.StartedAt = nil
}

// attempt performs the step's action, retrying it after errors as its
// retry block allows and running it again when a check rejects its
// output (for agents, with the check's message as feedback).
func (r *run) attempt(ctx context.Context, f *frame, s *lang.Step, rec *StepRecord) outcome {
	retries, rechecks := 0, map[string]int{}
	feedback := ""
	for {
		actx, cancel := ctx, context.CancelFunc(func() {})
		limit := r.limit(s)
		if limit.d > 0 {
			actx, cancel = r.host.withTimeout(ctx, limit.d)
		}
		// A new run of the action: nothing of the last one stays visible.
		rec.Runs++
		rec.Output, rec.OutputFile, rec.OutputText, rec.ExitCode = nil, "", "", nil
		rec.Model, rec.RawFile = "", ""
		delete(f.outputs, s.Name)
		delete(r.raws, rec)
		o := r.act(actx, f, s, rec, feedback)
		timedOut := limit.d > 0 && errors.Is(actx.Err(), context.DeadlineExceeded)
		cancel()
		switch o.kind {
		case outWait, outInterrupt, outAbort:
			return o
		}
		if ctx.Err() != nil {
			return interrupted
		}
		err := timeoutError(s, limit, o.err, timedOut)
		out := o.out
		if err == nil && o.kind == outNext {
			out, err = r.conform(s, out)
		}
		if out != cty.NilVal {
			if oerr := r.setOutput(f, s, out); oerr != nil && err == nil {
				err = oerr
			}
		}
		if o.kind == outTrip {
			return o
		}
		if err != nil {
			if s.Retry == nil || retries >= s.Retry.Max {
				return failWith(err)
			}
			retries++
			if t := r.countRetry(f, s, fmt.Sprintf("retry %d/%d after: %v", retries, s.Retry.Max, err)); t != nil {
				return tripWith(t)
			}
			wait := s.Retry.Backoff << (retries - 1)
			r.flushSpans(nil) // the failed attempt's span, before the wait
			if werr := r.host.sleep(ctx, wait); werr != nil {
				return interrupted
			}
			continue
		}
		check, msg, cerr := r.runChecks(f, s)
		if cerr != nil {
			return failWith(cerr)
		}
		if check == nil {
			return goTo("")
		}
		if check.OnFail != lang.OnFailRetry || rechecks[check.Name] >= check.Max {
			return failWith(fmt.Errorf("check %q failed: %s", check.Name, msg))
		}
		rechecks[check.Name]++
		if t := r.countRetry(f, s, fmt.Sprintf("check %q failed (%d/%d): %s", check.Name, rechecks[check.Name], check.Max, msg)); t != nil {
			return tripWith(t)
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
	conds := make([]*lang.Condition, len(s.Checks))
	for i, c := range s.Checks {
		conds[i] = c.Condition
	}
	env := r.exprEnv(f, conds...)
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

// largeOutput is the size from which an output is kept in an artifact
// rather than in the state, which is rewritten as the run goes.
const largeOutput = 256 << 10

// setOutput records a step's output in memory and in the state: in the
// record itself, or, when it is large, in an artifact the record names.
func (r *run) setOutput(f *frame, s *lang.Step, out cty.Value) error {
	f.outputs[s.Name] = out
	rec := f.recs[s.Name]
	if out.Type() == cty.String && out.IsKnown() && !out.IsNull() && !out.IsMarked() && len(out.AsString()) >= largeOutput {
		if raw, ok := r.raws[rec]; ok && rec.RawFile != "" && raw == out.AsString() {
			// The agent's answer as it came, which its artifact holds
			// already (redacted as it would be here).
			rec.OutputText = rec.RawFile
			return nil
		}
		// A large text answer is encoded straight into its file.
		p, err := r.dir.artifactJSONString(artifactBase(f, s, rec.Runs)+".output.json", out.AsString())
		if err != nil {
			return fmt.Errorf("step %q output: %w", s.Name, err)
		}
		rec.OutputFile = p
		return nil
	}
	b, err := builtins.CtyToJSON(out)
	if err != nil {
		return fmt.Errorf("step %q output: %w", s.Name, err)
	}
	if len(b) < largeOutput {
		rec.Output = b
		return nil
	}
	p, err := r.dir.artifact(artifactBase(f, s, rec.Runs)+".output.json", b)
	if err != nil {
		return fmt.Errorf("step %q output: %w", s.Name, err)
	}
	rec.OutputFile = p
	return nil
}

// recordedOutput is a record's output as JSON, wherever it is kept.
func recordedOutput(dir string, rec *StepRecord) ([]byte, error) {
	name := rec.OutputFile
	if name == "" {
		name = rec.OutputText
	}
	if name == "" {
		return rec.Output, nil
	}
	if filepath.IsAbs(name) || strings.HasPrefix(filepath.Clean(name), "..") {
		return nil, fmt.Errorf("output file %q is not in the run directory", name)
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || rec.OutputFile != "" {
		return b, err
	}
	return builtins.AppendJSONString(make([]byte, 0, len(b)+len(b)/16+2), unsafeString(b)), nil
}

// progressNote is a step's progress_start or progress_done template as
// text, "" without one. A template that fails to evaluate (a field the
// output lacks this time) leaves the line as it would be without it: a
// progress line never fails a step.
func (r *run) progressNote(f *frame, tmpl hcl.Expression) string {
	if tmpl == nil {
		return ""
	}
	v, err := evalString(tmpl, r.evalCtx(f, nil, tmpl))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(v)
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
	r.event(r.stepEvent(f, s, Event{Type: EventStepSkipped, Message: reason}))
}

// failed is the outcome of step s failing: its frame fails, and resume
// runs the step again.
func (r *run) failed(f *frame, s *lang.Step, err error) outcome {
	se := &StepError{Step: s.Name, Item: f.key(), Range: s.DeclRange.String(), Err: err}
	return outcome{kind: outFail, next: s.Name, reason: se.Error(), errorKind: errorKind(err)}
}

// tripped is the outcome of a cap or the circuit breaker tripping in
// step s: the whole run stops, and resume goes on from next.
func (r *run) tripped(f *frame, s *lang.Step, t *trip, next string) outcome {
	se := &StepError{Step: s.Name, Item: f.key(), Range: s.DeclRange.String(), Err: errors.New(t.msg)}
	return outcome{kind: outTrip, next: next, recommendation: "halt", reason: se.Error(), errorKind: t.kind}
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
func (r *run) act(ctx context.Context, f *frame, s *lang.Step, rec *StepRecord, feedback string) outcome {
	if s.ForEach != nil {
		return r.forEach(ctx, f, s)
	}
	var out cty.Value
	var err error
	switch a := s.Action.(type) {
	case nil:
	case *lang.Shell:
		out, err = r.shellAction(ctx, f, s, a, rec)
	case *lang.AgentCall:
		return r.agentAction(ctx, f, s, a, rec, feedback)
	case *lang.Call:
		out, err = r.callAction(ctx, f, s, a, rec)
	case *lang.Ask:
		return r.askAction(ctx, f, s, a)
	case *lang.SubPlaybook:
		return r.subPlaybookAction(ctx, f, s, a, rec)
	default:
		err = fmt.Errorf("internal error: unknown action %T", a)
	}
	return done(out, err)
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
	r.host.block(func() { out, err = r.funcs.Call(ctx, a.Builtin, env, cty.ObjectVal(args)) })
	r.trace(Span{Step: s.Name, Item: f.key(), Action: "tool_call", Attempt: rec.Runs,
		InputSummary: a.Builtin + " " + string(mustJSON(cty.ObjectVal(args))), OutputSummary: summaryOf(out, err)}, start, err)
	return out, err
}

// serialTurn is the channel a serial step's items take turns through:
// an item holds the turn while its value is in the channel.
func (r *run) serialTurn(s *lang.Step) Channel {
	if r.serial == nil {
		r.serial = map[string]Channel{}
	}
	turn, ok := r.serial[s.Name]
	if !ok {
		turn = r.host.channel(1)
		r.serial[s.Name] = turn
	}
	return turn
}

// trace records a span; trace failures never stop a run (a trace failure
// must not block execution), but they are logged.
func (r *run) trace(sp Span, start time.Time, err error) {
	r.spanOf(&sp, start, err)
	r.traceFailed(sp.Step, r.dir.span(sp))
}

// traceLater is trace for step s's command: its span is held back until
// the next span, the next process's start, a commit other than s's own
// end, or the run directory's close.
func (r *run) traceLater(s *lang.Step, sp Span, start time.Time, err error) {
	r.spanOf(&sp, start, err)
	r.dir.holdSpan(sp)
	r.spanHeld = s
}

// flushSpans writes the spans held back, unless the commit they wait for
// is that of s, the step whose command they trace.
func (r *run) flushSpans(s *lang.Step) {
	if r.spanHeld == nil || r.spanHeld == s {
		return
	}
	r.spanHeld = nil
	r.traceFailed("", r.dir.flushSpans())
}

func (r *run) spanOf(sp *Span, start time.Time, err error) {
	sp.Timestamp = start
	sp.RunID = r.st.Meta.RunID
	sp.DurationMS = r.now().Sub(start).Milliseconds()
	sp.Status = "success"
	if err != nil {
		sp.Status = "failure"
	}
}

// traceFailed logs err, and a failure to write held spans outside the
// walk's turn.
func (r *run) traceFailed(step string, err error) {
	r.dir.mu.Lock()
	late := r.dir.spanErr
	r.dir.spanErr = nil
	r.dir.mu.Unlock()
	for _, e := range []error{late, err} {
		if e != nil {
			r.event(Event{Type: EventLog, Step: step, Message: "trace not written: " + e.Error()})
		}
	}
}

// artifact writes one of step s's artifacts and returns its path in the
// run directory. Like a trace, an artifact that cannot be written never
// stops a run, but it is logged.
func (r *run) artifact(s *lang.Step, name string, data []byte) string {
	return r.artifactText(s, name, unsafeString(data))
}

// artifactText is artifact for text.
func (r *run) artifactText(s *lang.Step, name, data string) string {
	p, err := r.dir.artifactString(name, data)
	if err != nil {
		r.event(Event{Type: EventLog, Step: s.Name, Message: "artifact not written: " + err.Error()})
	}
	return p
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
