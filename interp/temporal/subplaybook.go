package temporal

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// runEngine is the engine of one run's workflow (interp.Engine): the
// workflow's clock and coroutines (engine), and the run's ways to the
// world, every one reaching a worker or the engine: its actions are
// activities (acts, funcs, drivers), its sub-playbook steps are child
// workflows and its documents are written by a worker.
type runEngine struct {
	*engine
	acts *actions
	// funcs are the worker's builtins as activities; drivers serve the
	// agent profiles (activities, or the run's cassette).
	funcs   builtins.Registry
	drivers interp.DriverFactory
	// events is the run's event log, which names its running sub-runs.
	events *eventLog
	// in is the run's input: a sub-run's input inherits its files, agent
	// command and task queue.
	in   RunInput
	path *interp.Path
	docs docWriter
	// state is the run's state, for QueryOutputs.
	state *runState
	// tripBelow is the first cap of this run a sub-run tripped and
	// signalled (captrip.go).
	tripBelow string
	// lend serves the sub-runs' reservations from this run's budget; up
	// reserves this run's calls from its parent's (budgetrelay.go).
	lend lending
	up   *aboveBudget
	// name is the run's playbook; relayLimit the worker's
	// Config.RelayLimit (budgetrelay.go).
	name       string
	relayLimit int
}

var _ interp.Engine = (*runEngine)(nil)

func (e *runEngine) Shell() interp.ShellRunner     { return e.acts }
func (e *runEngine) Funcs() builtins.Registry      { return e.funcs }
func (e *runEngine) Drivers() interp.DriverFactory { return e.drivers }

// SubRun runs a sub-playbook step's run as a child workflow of this one:
// the same workflow, with the sub-playbook's ref (its files are in the
// run's Files, the stdlib's in the worker's binary) and the step's
// inputs. Its workflow ID is this workflow's and the sub-run's id
// (STEP-ATTEMPT, STEP-ITEMKEY-ATTEMPT), so each run of the step is a
// workflow of its own, named the same on every replay. The steps it took
// join this run's path under the step's name, as a local sub-run's
// events do. Its calls and retries reserve from this run's budget as
// they go (sub.Budget, budgetrelay.go), or, when this run lends none, it
// is held to what this run leaves it of its caps (sub.Caps); and to this
// run's time limit, as its execution timeout.
func (e *runEngine) SubRun(ctx context.Context, sub interp.SubRun) (*interp.Result, error) {
	c, back := e.hold()
	defer back()
	in := RunInput{Ref: sub.Playbook.Ref, Dir: sub.Playbook.Playbook.Dir, Files: childFiles(sub.Playbook.Playbook, e.in.Files), Hash: sub.Playbook.Playbook.Hash,
		RunID: sub.ID, Mode: sub.Playbook.Mode, AgentCommand: e.in.AgentCommand,
		Cassette: e.in.Cassette, CassetteName: e.in.CassetteName, Answers: sub.Answers, Caps: sub.Caps, Home: e.in.Home, Env: e.in.Env,
		Relay: e.lend.on && sub.Budget != nil}
	var err error
	if in.Inputs, err = encodeInputs(sub.Inputs); err != nil {
		return nil, err
	}
	childID := workflow.GetInfo(c).WorkflowExecution.ID + "/" + sub.ID
	if e.events.children == nil {
		e.events.children = map[string]bool{}
	}
	e.events.children[childID] = true
	defer delete(e.events.children, childID)
	opts := workflow.ChildWorkflowOptions{
		WorkflowID:          childID,
		WorkflowTaskTimeout: time.Minute,
	}
	if d, ok := ctx.Deadline(); ok {
		// The step's time limit is the sub-run's.
		opts.WorkflowExecutionTimeout = max(d.Sub(workflow.Now(c)), time.Second)
	}
	if err := e.cont.admit(c, ctx); err != nil {
		return nil, err
	}
	defer e.cont.landed(c)
	var out RunOutput
	cc, done := e.stoppable(c)
	defer done()
	k := e.serving(c, childID, sub.Step, sub.Budget)
	err = e.getChild(c, k, workflow.ExecuteChildWorkflow(workflow.WithChildOptions(cc, opts), WorkflowName, in), sub, &out)
	if err != nil {
		var te *temporal.TimeoutError
		if errors.As(err, &te) {
			return nil, &agent.KindError{Kind: agent.KindTimeout, Err: fmt.Errorf("timed out")}
		}
		return nil, err
	}
	for _, p := range out.Path {
		e.path.Ends = append(e.path.Ends, sub.Step+"/"+p)
	}
	return out.result()
}

// inputFiles are the files a run of pb reads besides its own sources
// (Sources): prompt files, upstreams and its sub-playbooks' files, so
// that a worker without a copy of the project loads the playbook and
// every playbook it runs.
func inputFiles(pb *lang.Playbook, sources map[string][]byte) (map[string][]byte, error) {
	files, err := lang.Files(pb)
	if err != nil {
		return nil, err
	}
	for name := range sources {
		if abs, err := filepath.Abs(name); err == nil {
			delete(files, abs)
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	return files, nil
}

// childFiles are the files of the run's (files) that a sub-run of pb
// reads: its own and its sub-playbooks', not the parent's, which the
// child workflow's input would repeat for every sub-run (a for_each's
// items each start one).
func childFiles(pb *lang.Playbook, files map[string][]byte) map[string][]byte {
	need, err := lang.Files(pb)
	if err != nil {
		return files
	}
	out := map[string][]byte{}
	for name := range need {
		if b, ok := files[name]; ok {
			out[name] = b
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// LoadRun loads the playbook of the run that in started, as it was when
// it started: from the sources and files in its input, with ld's other
// ways (the stdlib, the cache) for the rest. The workflow loads it so on
// whichever worker walks it, and a client away from the run's checkout
// (apl ui, apl resume) loads the same playbook.
func LoadRun(ld *lang.Loader, in RunInput) (*lang.Playbook, hcl.Diagnostics) {
	ld = loaderFor(ld, in)
	if len(in.Sources) == 0 {
		return ld.Load(in.Ref)
	}
	return ld.LoadRef(in.Ref, in.Sources, in.Dir)
}

// loaderFor is ld with the run's files (prompt files, upstreams,
// sub-playbooks) in place of the file system's.
func loaderFor(ld *lang.Loader, in RunInput) *lang.Loader {
	if len(in.Files) == 0 {
		return ld
	}
	l := *ld
	l.Cache, l.Files = nil, in.Files
	return &l
}
