package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// ErrInterrupted is returned when the run's context was cancelled (SIGINT,
// SIGTERM): the step in flight was stopped and the state checkpointed, so
// the run can be resumed.
var ErrInterrupted = errors.New("run interrupted")

// Result is how a run ended.
type Result struct {
	RunID          string
	Dir            string // the run directory
	Status         string // completed, failed, interrupted, or a playbook's finish status
	Recommendation string
	Reason         string
	// Output is the playbook's output object; cty.NilVal when the playbook
	// has no output block.
	Output cty.Value
	// OutputJSON is Output encoded as JSON ("{}" without an output block).
	OutputJSON json.RawMessage
}

// run is one execution of a playbook: all the mutable data lives here.
type run struct {
	pb      *lang.Playbook
	opts    Options
	dir     *runDir
	store   *store
	st      *State
	workdir string
	now     func() time.Time
	shell   ShellRunner
	funcs   builtins.Registry
	drivers DriverFactory

	inputs        cty.Value
	inputsGoCache any
	outputs       map[string]cty.Value
	vars          map[string]cty.Value
	stepsCache    cty.Value
	stepCty       map[string]cty.Value // steps.NAME for HCL, until the step changes
	stepGo        map[string]any       // steps for conditions; nil until first used
	stepGoStale   []string             // steps changed since stepGo was brought up to date
	label         string
	started       time.Time // this process's start, for elapsed time
	elapsed0      time.Duration
	// failedInStep is set when a step (not a gate) failed the run, which
	// keeps that step current so resume can retry it.
	failedInStep bool
	// tripped is the cap or circuit breaker that failed the run, if any.
	tripped *capError

	// mu serializes state changes between the items of for_each steps; it
	// is released only while an action waits (see unlocked).
	mu          sync.Mutex
	serial      map[string]*sync.Mutex
	itemOutputs map[string]map[string]map[string]cty.Value // for_each step → key → step → output
}

// Start begins a new run of pb.
func Start(ctx context.Context, pb *lang.Playbook, ref string, opts Options) (*Result, error) {
	r, err := newRun(pb, opts)
	if err != nil {
		return nil, err
	}
	inputs, err := resolveInputs(pb, opts.Mode, opts.Inputs)
	if err != nil {
		return nil, err
	}
	r.inputs = inputs
	now := r.now()
	id := opts.RunID
	if id == "" {
		id = newRunID(now)
	}
	dir, err := createRunDir(r.runsDir(), id)
	if err != nil {
		return nil, err
	}
	r.dir = dir
	sf := filesFor(filepath.Join(dir.path, stateFile))
	if pb.StatePath != "" {
		// The playbook keeps its state where its protocol says (seed 001:
		// .autopilot/state.json); the run directory points at it.
		p := pb.StatePath
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.workdir, p)
		}
		if _, err := os.Stat(filepath.Dir(p)); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return nil, fmt.Errorf("state directory: %w", err)
			}
			// In a directory apl made for it, the state stays out of git
			// (seed 001, "Git considerations"); a directory the project
			// already had is the project's to manage.
			ignoreStateFiles(filesFor(p))
		}
		if err := os.WriteFile(filepath.Join(dir.path, statePointer), []byte(p+"\n"), 0o644); err != nil {
			return nil, fmt.Errorf("state pointer: %w", err)
		}
		sf = filesFor(p)
	}
	r.store = newStore(sf, !opts.NoSync)
	r.st = &State{
		Meta: Meta{
			Version: stateVersion, RunID: id, Playbook: pb.Name, PlaybookRef: ref,
			PlaybookHash: pb.Hash, Mode: opts.Mode, Workdir: r.workdir, Status: StatusRunning,
			StartedAt: now, Inputs: map[string]json.RawMessage{}, AgentCommand: opts.AgentCommand,
		},
		Steps: map[string]*StepRecord{},
		Caps:  map[string]int{},
		Vars:  map[string]json.RawMessage{},
	}
	for name, v := range inputs.AsValueMap() {
		b, err := builtins.CtyToJSON(v)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", name, err)
		}
		r.st.Meta.Inputs[name] = b
	}
	for _, s := range r.topSteps() {
		r.st.Steps[s.Name] = &StepRecord{Status: StepPending}
	}
	r.st.Breaker.State = BreakerClosed
	if len(pb.Steps) > 0 {
		r.st.Meta.CurrentStep = pb.Steps[0].Name
	}
	r.label = r.renderLabel()
	r.event(Event{Type: EventRunStarted, Message: fmt.Sprintf("run %s of %s", id, pb.Name)})
	if err := r.checkpoint(); err != nil {
		return nil, err
	}
	return r.execute(ctx)
}

func newRun(pb *lang.Playbook, opts Options) (*run, error) {
	r := &run{pb: pb, opts: opts, outputs: map[string]cty.Value{}, vars: map[string]cty.Value{},
		stepCty:     map[string]cty.Value{},
		itemOutputs: map[string]map[string]map[string]cty.Value{}}
	r.now = opts.Clock
	if r.now == nil {
		r.now = time.Now
	}
	r.workdir = opts.Workdir
	if r.workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		r.workdir = wd
	}
	abs, err := filepath.Abs(r.workdir)
	if err != nil {
		return nil, err
	}
	r.workdir = abs
	r.shell = opts.Shell
	if r.shell == nil {
		r.shell = &builtins.Shell{Workdir: r.workdir, Policy: builtins.DefaultPolicy}
	}
	r.funcs = opts.Funcs
	if r.funcs == nil {
		r.funcs = builtins.Funcs()
	}
	if opts.Observer != nil {
		if _, ok := opts.Observer.(*syncObserver); !ok {
			// Sub-runs report from other goroutines; calls stay one at a
			// time, as Observer promises.
			r.opts.Observer = &syncObserver{inner: opts.Observer}
		}
	}
	r.drivers = opts.Drivers
	if r.drivers == nil {
		r.drivers = defaultDrivers(pb, opts.AgentCommand)
	}
	r.started = r.now()
	return r, nil
}

func (r *run) runsDir() string {
	if r.opts.RunsDir != "" {
		return r.opts.RunsDir
	}
	return filepath.Join(r.workdir, ".apl", "runs")
}

// topSteps are the steps with one record in the run: main and
// on_failure steps, not the bodies of for_each steps.
func (r *run) topSteps() []*lang.Step {
	return append(append([]*lang.Step(nil), r.pb.Steps...), r.pb.OnFailure...)
}

func (r *run) elapsed() time.Duration { return r.elapsed0 + r.now().Sub(r.started) }

// execute walks the graph from the current step until the run ends, then
// runs on_failure steps if it failed and evaluates the output.
func (r *run) execute(ctx context.Context) (*Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer r.dir.close()
	defer r.store.close()
	// The run's wall-clock cap counts time already spent before a resume.
	runCtx := ctx
	if l := r.pb.Limits; l != nil && l.Timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, l.Timeout-r.elapsed())
		defer cancel()
	}
	top := r.top()
	for r.st.Meta.Status == StatusRunning && r.st.Meta.CurrentStep != "" {
		s := r.pb.Step(r.st.Meta.CurrentStep)
		if s == nil {
			return nil, fmt.Errorf("state names step %q, which the playbook does not have", r.st.Meta.CurrentStep)
		}
		next, err := r.step(runCtx, top, s)
		if err != nil && ctx.Err() == nil && runCtx.Err() != nil {
			// The wall clock ran out, not the user's patience.
			r.tripRun(top, s, &capError{fmt.Sprintf("limits.timeout: the run took longer than %s", r.pb.Limits.Timeout)})
			r.st.Meta.CurrentStep = s.Name
			break
		}
		if errors.Is(err, errWaiting) {
			return r.wait()
		}
		if err != nil {
			if errors.Is(err, ErrInterrupted) {
				return r.interrupted()
			}
			return nil, err
		}
		// A step that failed stays current, so that resume retries it.
		if r.st.Meta.Status == StatusRunning || !r.failedInStep {
			r.st.Meta.CurrentStep = next
		}
		if err := r.checkpoint(); err != nil {
			return nil, err
		}
	}
	if r.st.Meta.Status == StatusRunning {
		r.st.Meta.Status = StatusCompleted
	}
	if r.st.Meta.Status == StatusFailed {
		if err := r.runOnFailure(ctx); err != nil {
			if errors.Is(err, errWaiting) {
				return r.wait()
			}
			if errors.Is(err, ErrInterrupted) {
				return r.interrupted()
			}
			return nil, err
		}
	}
	return r.finish()
}

// wait checkpoints a run paused for a human decision.
func (r *run) wait() (*Result, error) {
	// A run that failed and waits in its on_failure steps stays failed;
	// resume continues them.
	if !r.st.Meta.OnFailure {
		r.st.Meta.Status = StatusWaiting
	}
	w := r.st.Waiting
	msg := "waiting for a decision"
	if w != nil {
		step := w.Step
		if w.Item != "" {
			step += "[" + w.Item + "]"
		}
		msg = fmt.Sprintf("waiting for a decision at step %s: %s (options: %s); continue with apl resume --answer %s=CHOICE",
			step, w.Question, strings.Join(w.Options, ", "), step)
	}
	r.event(Event{Type: EventRunWaiting, Step: r.st.Meta.CurrentStep, Message: msg})
	r.st.Meta.LastCheckpoint = r.now()
	if err := r.store.snapshot(r.st); err != nil {
		return nil, fmt.Errorf("checkpoint run %s: %w", r.st.Meta.RunID, err)
	}
	return &Result{RunID: r.st.Meta.RunID, Dir: r.dir.path, Status: StatusWaiting, Reason: msg, OutputJSON: json.RawMessage("{}")}, nil
}

// interrupted checkpoints a run stopped by its context.
func (r *run) interrupted() (*Result, error) {
	// A run interrupted in its on_failure steps has already failed; it
	// stays failed, and resume continues those steps.
	if !r.st.Meta.OnFailure {
		r.st.Meta.Status = StatusInterrupted
	}
	r.event(Event{Type: EventRunInterrupted, Step: r.st.Meta.CurrentStep, Message: "interrupted; continue with apl resume"})
	// Whenever a run is not running, state.json alone tells where it is.
	r.st.Meta.LastCheckpoint = r.now()
	r.st.Metrics.DurationS = r.elapsed().Seconds()
	if err := r.store.snapshot(r.st); err != nil {
		return nil, fmt.Errorf("checkpoint run %s: %w", r.st.Meta.RunID, err)
	}
	return &Result{RunID: r.st.Meta.RunID, Dir: r.dir.path, Status: StatusInterrupted, OutputJSON: json.RawMessage("{}")}, ErrInterrupted
}

// runOnFailure runs the on_failure steps once, in order. They see the
// failure as run.status, run.recommendation and run.reason; their own
// failures are recorded but do not change the run's outcome.
func (r *run) runOnFailure(ctx context.Context) error {
	if len(r.pb.OnFailure) == 0 {
		return nil
	}
	if !r.st.Meta.OnFailure {
		r.st.Meta.OnFailure = true
		r.st.Meta.OnFailureStep = r.pb.OnFailure[0].Name
		// On disk before the first of them runs, so that a crash here
		// leaves a run that resume continues in on_failure.
		if err := r.checkpoint(); err != nil {
			return err
		}
	}
	// A cap that stopped the main steps does not stop the clean-up.
	r.tripped = nil
	saved := r.st.Meta
	for r.st.Meta.OnFailureStep != "" {
		s := r.pb.Step(r.st.Meta.OnFailureStep)
		if s == nil {
			return fmt.Errorf("state names step %q, which the playbook does not have", r.st.Meta.OnFailureStep)
		}
		next, err := r.step(ctx, r.top(), s)
		r.st.Meta.Status, r.st.Meta.Recommendation, r.st.Meta.Reason = saved.Status, saved.Recommendation, saved.Reason
		if err != nil {
			return err
		}
		r.st.Meta.OnFailureStep = next
		if err := r.checkpoint(); err != nil {
			return err
		}
	}
	return nil
}

// finish evaluates the output block and writes the final state and
// output.json.
func (r *run) finish() (*Result, error) {
	res := &Result{
		RunID: r.st.Meta.RunID, Dir: r.dir.path, Status: r.st.Meta.Status,
		Recommendation: r.st.Meta.Recommendation, Reason: r.st.Meta.Reason,
		OutputJSON: json.RawMessage("{}"),
	}
	if r.pb.Output != nil {
		ctx := r.evalCtx(nil, nil)
		vals := map[string]cty.Value{}
		var errs []error
		for _, a := range r.pb.Output.Attrs {
			v, diags := a.Expr.Value(ctx)
			if diags.HasErrors() {
				errs = append(errs, fmt.Errorf("output %q: %w", a.Name, diagsError(diags)))
				v = cty.NullVal(cty.DynamicPseudoType)
			}
			vals[a.Name] = v
		}
		res.Output = cty.ObjectVal(vals)
		b, err := builtins.CtyToJSON(res.Output)
		if err != nil {
			errs = append(errs, fmt.Errorf("output: %w", err))
		} else {
			res.OutputJSON = b
		}
		if err := errors.Join(errs...); err != nil {
			r.event(Event{Type: EventLog, Message: "output incomplete: " + err.Error()})
		}
	}
	r.st.Output = res.OutputJSON
	switch r.st.Meta.Status {
	case StatusCompleted:
		r.event(Event{Type: EventRunCompleted, Message: "run completed"})
	case StatusFailed:
		r.event(Event{Type: EventRunFailed, Message: failMessage(r.st.Meta)})
	default:
		r.event(Event{Type: EventRunCompleted, Message: "run finished: " + r.st.Meta.Status})
	}
	r.st.Metrics.DurationS = r.elapsed().Seconds()
	// The final state is written whole, so state.json alone tells how the
	// run ended.
	r.st.Meta.LastCheckpoint = r.now()
	if err := r.store.snapshot(r.st); err != nil {
		return nil, fmt.Errorf("checkpoint run %s: %w", r.st.Meta.RunID, err)
	}
	out := append(append([]byte(nil), res.OutputJSON...), '\n')
	if err := os.WriteFile(filepath.Join(r.dir.path, "output.json"), out, 0o644); err != nil {
		return nil, fmt.Errorf("write output: %w", err)
	}
	return res, nil
}

func failMessage(m Meta) string {
	msg := "run failed"
	if m.Recommendation != "" {
		msg += " (recommendation: " + m.Recommendation + ")"
	}
	if m.Reason != "" {
		msg += ": " + m.Reason
	}
	return msg
}

// checkpoint persists the state after a transition, durably.
func (r *run) checkpoint() error { return r.commit(true) }

// commit persists the state; durable asks for an fsync.
func (r *run) commit(durable bool) error {
	r.st.Meta.LastCheckpoint = r.now()
	r.st.Metrics.DurationS = r.elapsed().Seconds()
	if err := r.store.commit(r.st, durable); err != nil {
		return fmt.Errorf("checkpoint run %s: %w", r.st.Meta.RunID, err)
	}
	return nil
}

// event appends to the event log and tells the observer.
func (r *run) event(e Event) {
	e.Time = r.now()
	if e.Label == "" {
		e.Label = r.label
	}
	r.st.Events = append(r.st.Events, e)
	if r.opts.Observer != nil {
		r.opts.Observer.Event(e)
	}
}

func (r *run) renderLabel() string {
	if r.pb.Label == nil {
		return ""
	}
	s, err := evalString(r.pb.Label, r.evalCtx(nil, nil, r.pb.Label))
	if err != nil {
		return ""
	}
	return s
}
