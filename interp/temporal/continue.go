package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/workflow"
)

// A run's workflow continues as new before its history grows past what
// Temporal keeps (it ends a workflow at 51,200 events or 50 MB): once
// the history holds Config.ContinueAfter events, the walk starts nothing
// more (an action or sub-run it asks for waits), lets what is under way
// land, then is interrupted as Ctrl-C interrupts a local run, when
// nothing is left to stop. The run's state (interp.StateKeeper) goes to
// the blob store with the path so far, and the workflow continues as new
// with the state's name: the new execution resumes the run from it
// (interp.ResumeState), as apl resume does a local run's, so completed
// steps and finished for_each items are reused, and the actions that
// waited run there, for the first time. The interruption and the
// resumption are not the run's events: a client following the run sees
// one run.
//
// The state of a run of many items is large: it goes to the blob store
// the workers share (--blob-dir), which the new execution reads on
// whichever worker walks it. Each execution removes the state the one
// before it read; the last one's stays, for the replays that answer
// queries of the run once it ended.

// continueVersion marks the workflows that continue as new;
// continueAfterVersion those that keep, in their history, how many events
// their worker let them hold (Config.ContinueAfter, apl worker
// --continue-after): a replay on a worker set otherwise takes the same
// path.
const (
	continueVersion      = "apl.continue"
	continueAfterVersion = "apl.continue-after"
)

// continueAfter is how many events this execution's history may hold
// before it continues as new; 0: it never does.
func continueAfter(ctx workflow.Context, cfg Config) int {
	after := max(cfg.ContinueAfter, 0)
	if workflow.GetVersion(ctx, continueAfterVersion, workflow.DefaultVersion, 1) == 1 {
		workflow.SideEffect(ctx, func(workflow.Context) any { return after }).Get(&after)
	}
	return after
}

// defaultMaxPending is Config.MaxPending's default: Temporal refuses a
// workflow more than 2,000 pending activities, and as many child
// workflows.
const defaultMaxPending = 1000

// defaultContinueAfter is Config.ContinueAfter's default: below
// Temporal's first warning (10,240 events).
const defaultContinueAfter = 10_000

// continueSize is the history size, in bytes, from which a workflow
// continues as new whatever its events (Temporal warns from 10 MB).
const continueSize = 8 << 20

// Continued is what a workflow that continued as new hands the next
// execution: its state's name in the blob store (a continuation) and the
// index its event log had reached.
type Continued struct {
	State  payload
	Events int
	// Read is the continuation the execution before read, which no
	// execution reads again: the next one removes it from the blob store.
	Read payload `json:",omitempty"`
}

// continuation is a run's state as its workflow continued as new.
type continuation struct {
	State json.RawMessage
	// Path is the run's path so far (RunOutput.Path).
	Path []string
	// Outputs are the run directory's files the state names
	// (interp.OutputFiles), and its artifacts.
	Outputs map[string][]byte
	// Current is the main step under way when the run was interrupted
	// (a continuation of an apl before Open).
	Current string `json:",omitempty"`
	// Open are the steps and items whose start the run's client was told
	// and whose end not (openKey): the new execution starts them again,
	// and does not report those starts.
	Open []string `json:",omitempty"`
	// Events are the last events of the run's event log (eventsKept at
	// most), which a client may not have read yet: the new execution's
	// log goes on from them.
	Events []interp.Event `json:",omitempty"`
}

// continuing is a workflow's way to its next execution.
type continuing struct {
	after int // events; 0: never
	// pending is how many actions and sub-runs may be under way at once
	// (Config.MaxPending).
	pending int
	// draining: the history is long enough; nothing new starts.
	// stopping: nothing is under way any more, and the walk is being
	// interrupted (interrupted: it was).
	draining, stopping, interrupted bool
	inflight                        int
	st                              *interp.State
	interrupt                       func()
	// await is the engine's (hub.go).
	await func(workflow.Context, func() bool) error
	// resumed: this execution resumes a run that continued as new.
	resumed bool
	// open are the steps and items started and not ended (openKey);
	// restarted those of the execution before, which this one starts
	// again without reporting it.
	open, restarted map[string]bool
}

// openKey names the start of a step (or of an item, with kind
// EventItemStarted), as continuing.open holds it.
func openKey(kind, step, item string) string { return kind + "\x00" + step + "\x00" + item }

// admit waits, before an action or sub-run starts, while the workflow
// drains or Config.MaxPending others are under way, and counts it under
// way. ctx is the action's: once the walk is interrupted, an action of
// the walk's sees its context cancelled, and one outside it (a
// document's write) goes on.
func (k *continuing) admit(c workflow.Context, ctx context.Context) error {
	if k == nil {
		return nil
	}
	free := func() bool { return (!k.draining || k.interrupted) && k.inflight < k.pending }
	if !free() {
		k.await(c, func() bool { return free() || ctx.Err() != nil })
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	k.inflight++
	return nil
}

// landed counts an action or sub-run as done and decides, from the
// history's length, whether the workflow drains, and when it has, stops
// the walk.
func (k *continuing) landed(c workflow.Context) {
	if k == nil {
		return
	}
	k.inflight--
	if !k.draining && k.after > 0 {
		info := workflow.GetInfo(c)
		k.draining = info.GetCurrentHistoryLength() >= k.after || info.GetCurrentHistorySize() >= continueSize
	}
	if k.draining && !k.stopping && k.inflight == 0 {
		// Once the coroutine that landed it has taken the result and
		// waits (at its next action, or its item's end): the walk sees
		// its context cancelled after a step that completed, not in it.
		k.stopping = true
		workflow.Go(c, func(workflow.Context) {
			k.interrupted = true
			k.interrupt()
		})
	}
}

// KeepState implements interp.StateKeeper.
func (e *runEngine) KeepState(st *interp.State) {
	e.state.st = st
	if e.cont != nil {
		e.cont.st = st
	}
}

// continueAsNew is the error that ends this execution and starts the
// next with in, the run's state in the blob store.
func (w *runner) continueAsNew(ctx workflow.Context, in RunInput, k *continuing, path []string, log *eventLog, rundir string) error {
	if k.st == nil {
		return errors.New("internal error: continuing a run whose state was not kept")
	}
	st := *k.st
	// The events are the workflow's to keep (its event log): the state
	// carries none.
	st.Events = nil
	data, err := interp.EncodeState(&st)
	if err != nil {
		return err
	}
	cn := continuation{State: data, Path: path}
	// Those this execution was to start again and did not are open
	// still.
	for key := range k.open {
		cn.Open = append(cn.Open, key)
	}
	for key := range k.restarted {
		if !k.open[key] {
			cn.Open = append(cn.Open, key)
		}
	}
	slices.Sort(cn.Open)
	cn.Events = log.events
	for _, name := range interp.OutputFiles(&st) {
		b, err := os.ReadFile(filepath.Join(rundir, name))
		if err != nil {
			return fmt.Errorf("continuing run %s: %w", in.RunID, err)
		}
		if cn.Outputs == nil {
			cn.Outputs = map[string][]byte{}
		}
		cn.Outputs[name] = b
	}
	// The artifacts of the executions so far go on with the run, up to
	// runDirMax in all: apl logs finds them in the last one's directory.
	if rd, err := readRunDir(rundir, true); err == nil {
		for name, b := range rd.Files {
			if isArtifact(name) && b != nil && cn.Outputs[name] == nil {
				if cn.Outputs == nil {
					cn.Outputs = map[string][]byte{}
				}
				cn.Outputs[name] = b
			}
		}
	}
	// The blob's name is its content's hash: writing it again on a
	// replay writes the same file.
	p, err := blobs(w.cfg.BlobDir).wrap(cn)
	if err != nil {
		return err
	}
	next := &Continued{State: p, Events: log.first + len(log.events)}
	if in.Continued != nil {
		next.Read = in.Continued.State
	}
	in.Continued = next
	if w.cfg.Logf != nil && !workflow.IsReplaying(ctx) {
		w.cfg.Logf("run %s continues as new: its history holds %d events (--continue-after %d)", in.RunID, workflow.GetInfo(ctx).GetCurrentHistoryLength(), k.after)
	}
	return workflow.NewContinueAsNewError(ctx, WorkflowName, in)
}

// resumed reads the continuation a workflow continued as new with.
func (w *runner) resumed(c *Continued) (continuation, *interp.State, error) {
	var cn continuation
	if err := blobs(w.cfg.BlobDir).unwrap(c.State, &cn); err != nil {
		return cn, nil, fmt.Errorf("%w (the run continued as new on a worker with another --blob-dir: give the workers a shared one)", err)
	}
	st, err := interp.DecodeState(cn.State)
	if err == nil && c.Read.Blob != "" {
		// Only a replay of the execution before this one's would read
		// it, and a replay of a closed execution that continued is
		// asked for by no client. Removing it again on a replay of this
		// one removes nothing.
		os.Remove(filepath.Join(w.cfg.BlobDir, filepath.Base(c.Read.Blob)))
	}
	return cn, st, err
}

// quiet says whether the run's event e is one of its continuation's,
// which a client does not see, and keeps the steps and items open.
func (k *continuing) quiet(e interp.Event) bool {
	if k == nil {
		return false
	}
	switch e.Type {
	case interp.EventRunInterrupted:
		return k.interrupted
	case interp.EventRunResumed, interp.EventStepReused:
		return k.resumed
	case interp.EventStepStarted, interp.EventItemStarted:
		key := openKey(e.Type, e.Step, e.Item)
		if k.open == nil {
			k.open = map[string]bool{}
		}
		k.open[key] = true
		if k.restarted[key] {
			delete(k.restarted, key)
			return true
		}
	case interp.EventStepCompleted, interp.EventStepFailed, interp.EventStepSkipped:
		delete(k.open, openKey(interp.EventStepStarted, e.Step, e.Item))
	case interp.EventItemCompleted, interp.EventItemFailed, interp.EventItemBlocked, interp.EventItemRequeued:
		delete(k.open, openKey(interp.EventItemStarted, e.Step, e.Item))
	}
	return false
}

// pathKept is how many of a run's path entries its result holds: a run
// of many items would pass Temporal's 2 MB limit on a workflow's result
// (two entries of 20-odd bytes per one-step item).
const pathKept = 20_000

// keptPath is path, or, when it is longer than pathKept, its first and
// last pathKept/2 entries around one that says how many are left out.
func keptPath(path []string) []string {
	if len(path) <= pathKept {
		return path
	}
	out := slices.Clip(path[:pathKept/2])
	out = append(out, fmt.Sprintf("(%d more steps and items not kept)", len(path)-pathKept))
	return append(out, path[len(path)-pathKept/2:]...)
}
