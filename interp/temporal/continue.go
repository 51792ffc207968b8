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

// continueVersion marks the workflows that continue as new.
const continueVersion = "apl.continue"

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
	// (interp.OutputFiles).
	Outputs map[string][]byte
	// Current is the main step under way when the run was interrupted:
	// the new execution does not report its start again.
	Current string
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
	// resumed: this execution resumes a run that continued as new;
	// restarted is the main step it restarts, whose start its client saw
	// already.
	resumed   bool
	restarted string
}

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
		workflow.Await(c, func() bool { return free() || ctx.Err() != nil })
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
func (w *runner) continueAsNew(ctx workflow.Context, in RunInput, k *continuing, path []string, events int, rundir string) error {
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
	if rec := st.Steps[st.Meta.CurrentStep]; rec != nil && rec.Status == interp.StepRunning {
		cn.Current = st.Meta.CurrentStep
	}
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
	// The blob's name is its content's hash: writing it again on a
	// replay writes the same file.
	p, err := blobs(w.cfg.BlobDir).wrap(cn)
	if err != nil {
		return err
	}
	next := &Continued{State: p, Events: events}
	if in.Continued != nil {
		next.Read = in.Continued.State
	}
	in.Continued = next
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
// which a client does not see.
func (k *continuing) quiet(e interp.Event) bool {
	if k == nil {
		return false
	}
	switch e.Type {
	case interp.EventRunInterrupted:
		return k.interrupted
	case interp.EventRunResumed, interp.EventStepReused:
		return k.resumed
	case interp.EventStepStarted:
		if k.restarted != "" && e.Step == k.restarted && e.Item == "" {
			k.restarted = ""
			return true
		}
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
