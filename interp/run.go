package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
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
	// ErrorKind is the error kind of what failed the run ("" when it did
	// not fail): a cap, a timeout, a step's own failure.
	ErrorKind string
	// Output is the playbook's output object; cty.NilVal when the playbook
	// has no output block.
	Output cty.Value
	// OutputJSON is Output encoded as JSON ("{}" without an output block).
	OutputJSON json.RawMessage
	// Waiting is the decision a waiting run needs.
	Waiting *Waiting
	// Metrics are the run's totals as it stopped (a sub-run's count
	// toward the caps of the run that ran it).
	Metrics Metrics
	// CapTrip is, for a sub-run stopped by a cap of the run that runs it
	// (Options.OuterCaps), that cap's trip, as that run says it: the
	// parent stops for it too.
	CapTrip string
	// Spent is the most one agent call of each step spent in the run and
	// its sub-runs, by step (Caps.Spent): what the parent's next calls
	// of those steps reserve.
	Spent map[string]CallSpend
}

// run is one execution of a playbook: all the mutable data lives here.
type run struct {
	// spanHeld is the step whose command's span the run directory holds
	// back (traceLater), nil when none is.
	spanHeld *lang.Step
	pb       *lang.Playbook
	opts     Options
	host     host
	dir      *runDir
	st       *State
	workdir  string
	shell    ShellRunner
	funcs    builtins.Registry
	drivers  DriverFactory
	// playbooks, when set, may answer playbook steps (Options.Playbooks).
	playbooks PlaybookStub

	// redact removes secrets from everything the run writes.
	redact *builtins.Redactor

	inputs        cty.Value
	inputsGoCache any
	// fixed are the playbook's settings as the run fixed them when it
	// started (settings.go).
	fixed   lang.FixedSettings
	outputs map[string]cty.Value
	vars    map[string]cty.Value
	// raws are the whole texts of the agent answers this process saw, by
	// record (StepRecord.RawFile has them on disk).
	raws map[*StepRecord]string
	// hclFuncs are the functions HCL expressions call (functions).
	hclFuncs map[string]function.Function
	// changes are the records changed since the last checkpoint.
	changes  changes
	label    string
	started  time.Time // this process's start, for elapsed time
	elapsed0 time.Duration

	// docs are the playbook's documents as last written.
	docs docs

	// caps is the run's budget, under its parent's (budget.go).
	caps *budget

	serial      map[string]Channel
	itemOutputs map[string]map[string]map[string]cty.Value // for_each step → key → step → output
}

// Start begins a new run of pb.
func Start(ctx context.Context, pb *lang.Playbook, ref string, opts Options) (res *Result, err error) {
	r, h, err := newRun(pb, opts)
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
		id = NewRunID(now)
	}
	var warnings []error
	shared := ""
	if opts.DryRun != nil && opts.RunsDir == "" {
		// A dry run writes nothing in the project: its state goes to a
		// throwaway directory, removed when the run ends.
		tmp, err := os.MkdirTemp("", "apl-dry-run-*")
		if err != nil {
			return nil, fmt.Errorf("dry run: %w", err)
		}
		defer os.RemoveAll(tmp)
		r.opts.RunsDir = tmp
		defer func() {
			if res != nil {
				res.Dir = ""
			}
		}()
	}
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
	r.st.Meta.recordTimeouts(opts)
	for name, v := range inputs.AsValueMap() {
		b, err := builtins.CtyToJSON(v)
		if err != nil {
			return nil, fmt.Errorf("input %q: %w", name, err)
		}
		r.st.Meta.Inputs[name] = b
	}
	if err := r.fixSettings(); err != nil {
		return nil, err
	}
	for _, s := range r.topSteps() {
		r.st.Steps[s.Name] = &StepRecord{Status: StepPending}
	}
	r.st.Breaker.State = BreakerClosed
	if err := r.openDocuments(); err != nil {
		return nil, err
	}
	r.traceAttributes(&warnings)
	if pb.StatePath != "" && opts.DryRun == nil {
		// The playbook keeps its state where its protocol says (the
		// orchestrator's .autopilot/state.json); the run directory points at it.
		if shared, err = r.statePath(&warnings); err != nil {
			return nil, err
		}
		h.store = newStoreFor(filesFor(shared), opts)
		if err := h.store.lock(id); err != nil {
			return nil, err
		}
	}
	runsDir, err := r.runsDir()
	if err != nil {
		h.close()
		return nil, err
	}
	dir, warning, err := createRunDir(runsDir, id)
	if err != nil {
		h.close()
		return nil, err
	}
	if warning != nil {
		warnings = append(warnings, warning)
	}
	if err := dir.writeSources(pb.Sources); err != nil {
		warnings = append(warnings, fmt.Errorf("recording the playbook's sources: %w", err))
	}
	r.dir = dir
	if shared != "" {
		if err := os.WriteFile(filepath.Join(dir.path, statePointer), []byte(shared+"\n"), 0o644); err != nil {
			h.close()
			dir.close()
			return nil, fmt.Errorf("state pointer: %w", err)
		}
	} else {
		h.store = newStoreFor(filesFor(filepath.Join(dir.path, stateFile)), opts)
	}
	h.store.redact, dir.redact = r.redact, r.redact
	dir.attrs = r.redact.Bytes(r.st.Meta.TraceAttributes)
	if len(pb.Steps) > 0 {
		r.st.Meta.CurrentStep = pb.Steps[0].Name
	}
	r.label = r.renderLabel()
	r.event(Event{Type: EventRunStarted, Message: fmt.Sprintf("run %s of %s", id, pb.Name)})
	for _, w := range warnings {
		r.event(Event{Type: EventLog, Message: w.Error()})
	}
	if err := r.commit(nil, nil, true); err != nil {
		return nil, err
	}
	return r.execute(ctx)
}

// newRun prepares a run of pb on a local host; Start and Resume give it
// its state and store.
func newRun(pb *lang.Playbook, opts Options) (*run, *localHost, error) {
	r := &run{pb: pb, opts: opts, outputs: map[string]cty.Value{}, vars: map[string]cty.Value{}, raws: map[*StepRecord]string{},
		itemOutputs: map[string]map[string]map[string]cty.Value{}}
	for _, v := range pb.Vars {
		// A declared var starts at its default; a set, or the state a
		// resume reads, replaces it.
		r.vars[v.Name] = v.Default
	}
	r.workdir = opts.Workdir
	if r.workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, err
		}
		r.workdir = wd
	}
	abs, err := filepath.Abs(r.workdir)
	if err != nil {
		return nil, nil, err
	}
	r.workdir = abs
	if opts.Engine != nil {
		// The engine supplies the actions' ways to the world, all of
		// them: one left to a local default would run in the workflow.
		if err := engineParts(opts); err != nil {
			return nil, nil, err
		}
		r.shell, r.funcs, r.drivers = opts.Engine.Shell(), opts.Engine.Funcs(), opts.Engine.Drivers()
	} else {
		r.shell, r.funcs, r.drivers = opts.Shell, opts.Funcs, opts.Drivers
		if r.shell == nil {
			r.shell = &builtins.Shell{Workdir: r.workdir, Policy: builtins.DefaultPolicy}
		}
		if r.funcs == nil {
			r.funcs = builtins.Funcs()
		}
		if r.drivers == nil {
			r.drivers = defaultDrivers(opts.AgentCommand)
		}
	}
	r.playbooks = opts.Playbooks
	if opts.DryRun != nil {
		r.dryActions(r.funcs)
	}
	if opts.Observer != nil {
		if _, ok := opts.Observer.(*syncObserver); !ok {
			// Sub-runs report from other goroutines; calls stay one at a
			// time, as Observer promises.
			r.opts.Observer = &syncObserver{inner: opts.Observer}
		}
	}
	r.redact = builtins.EnvRedactor(keyVars(pb)...)
	h := newLocalHost(r.opts)
	r.host = h
	if opts.Engine != nil {
		r.host = &engineHost{e: opts.Engine, local: h}
	}
	if opts.host != nil {
		r.host = opts.host(h)
	}
	r.started = r.now()
	return r, h, nil
}

func (r *run) now() time.Time { return r.host.now() }

// RunsDir is where the runs of a project at workdir go unless
// Options.RunsDir says otherwise: WORKDIR/.apl/runs.
func RunsDir(workdir string) string { return filepath.Join(workdir, ".apl", "runs") }

// runsDir is where the run's directory goes. The default, .apl in the
// project, must really lie in the project: a checkout could plant .apl as
// a symlink to elsewhere. A directory given in Options is the caller's
// choice.
func (r *run) runsDir() (string, error) {
	if r.opts.RunsDir != "" {
		return r.opts.RunsDir, nil
	}
	apl, err := builtins.ConfinedDir(r.workdir, filepath.Dir(RunsDir("")))
	if err != nil {
		return "", fmt.Errorf("run directory: %w", err)
	}
	return filepath.Join(apl, filepath.Base(RunsDir(""))), nil
}

// statePath is the state file a playbook's state block names, made ready:
// its directory exists (made with a .gitignore when apl makes it) and, for
// a path in the project, really lies in the project.
func (r *run) statePath(warnings *[]error) (string, error) {
	p := r.pb.StatePath
	if !filepath.IsAbs(p) {
		d, err := builtins.ConfinedDir(r.workdir, filepath.Dir(p))
		if err != nil {
			return "", fmt.Errorf("state path %s: %w", p, err)
		}
		p = filepath.Join(d, filepath.Base(p))
	}
	if _, err := os.Stat(filepath.Dir(p)); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("state directory: %w", err)
		}
		// In a directory apl made for it, the state stays out of git
		// (state files are not committed); a directory the project
		// already had is the project's to manage.
		if err := ignoreStateFiles(filesFor(p)); err != nil {
			*warnings = append(*warnings, err)
		}
	}
	return p, nil
}

// topSteps are the steps with one record in the run: main, on_failure
// and finally steps, not the bodies of for_each steps.
func (r *run) topSteps() []*lang.Step {
	return slices.Concat(r.pb.Steps, r.pb.OnFailure, r.pb.Finally)
}

func (r *run) elapsed() time.Duration { return r.elapsed0 + r.now().Sub(r.started) }

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

// commit persists the state after a transition of step s in frame f
// (nil for the run's own), which the caller names: whatever else changed
// in between is run-wide and always written. durable asks for an fsync.
func (r *run) commit(f *frame, s *lang.Step, durable bool) error {
	r.flushSpans(s)
	r.touch(f, s)
	r.st.Meta.LastCheckpoint = r.now()
	r.st.Metrics.DurationS = r.elapsed().Seconds()
	r.writeDocuments()
	if err := r.host.checkpoint(r.st, &r.changes, durable); err != nil {
		return fmt.Errorf("checkpoint run %s: %w", r.st.Meta.RunID, err)
	}
	return nil
}

// snapshot writes the whole state: whenever a run stops, state.json alone
// tells where it is.
func (r *run) snapshot() error {
	r.st.Meta.LastCheckpoint = r.now()
	r.st.Metrics.DurationS = r.elapsed().Seconds()
	r.writeDocuments()
	if err := r.host.snapshot(r.st, &r.changes); err != nil {
		return fmt.Errorf("checkpoint run %s: %w", r.st.Meta.RunID, err)
	}
	return nil
}

// touch marks step s of frame f as changed, for the journal: a step's
// record changes only while the step runs, so the step a frame commits
// for is the one that changed.
func (r *run) touch(f *frame, s *lang.Step) {
	switch {
	case s == nil:
	case f == nil || f.item == nil:
		r.changes.step(s.Name)
	default:
		r.changes.item(f.item.parent.Name, f.item.rec.Key)
	}
}

// event appends to the event log and tells the observer.
func (r *run) event(e Event) {
	e.Time = r.now()
	e.Message = r.redact.String(e.Message)
	if e.Label == "" {
		e.Label = r.label
	}
	r.st.Events = append(r.st.Events, e)
	r.host.emit(e)
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
