package temporal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

var (
	workflowOptions = workflow.RegisterOptions{Name: WorkflowName}
	activityOptions = activity.RegisterOptions{Name: activityPrefix}
)

// DefaultTaskQueue is the task queue apl run and apl worker use unless
// told otherwise.
const DefaultTaskQueue = "apl"

// NewWorker makes a worker that runs apl's workflow and activities from
// queue; Start or Run it. Run more workers, on as many machines, to run
// more steps at once.
func NewWorker(c client.Client, queue string, cfg Config, opts worker.Options) (worker.Worker, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if cfg.Loader == nil {
		return nil, fmt.Errorf("temporal worker: no playbook loader")
	}
	if opts.DeadlockDetectionTimeout == 0 {
		// The walk between two steps can take a while on a loaded
		// machine (loading a playbook, a thousand items).
		opts.DeadlockDetectionTimeout = time.Minute
	}
	opts.WorkflowPanicPolicy = worker.FailWorkflow
	acts := &activities{workdir: cfg.Workdir, blobs: blobs(cfg.BlobDir), shell: cfg.Shell,
		funcs: cfg.Funcs, drivers: map[string]agent.Driver{}, guard: cfg.Guard,
		home: Home{Worker: cfg.Name, Queue: HomeQueue(queue, cfg.Name), Workdir: cfg.Workdir}}
	w := worker.New(c, queue, opts)
	w.RegisterWorkflowWithOptions((&runner{cfg: cfg}).Run, workflowOptions)
	w.RegisterActivityWithOptions(acts, activityOptions)
	// The home queue takes only steps; the workflow's tasks, which touch
	// no file, go to any worker.
	hopts := opts
	hopts.DisableWorkflowWorker = true
	h := worker.New(c, acts.home.Queue, hopts)
	h.RegisterActivityWithOptions(acts, activityOptions)
	return &homeWorker{Worker: w, home: h, acts: acts, logf: cfg.Logf, stopTimeout: opts.WorkerStopTimeout}, nil
}

// homeWorker serves the shared queue and its own (home.go).
type homeWorker struct {
	worker.Worker
	home        worker.Worker
	acts        *activities
	logf        func(string, ...any)
	stopTimeout time.Duration
}

func (w *homeWorker) Start() error {
	if err := w.home.Start(); err != nil {
		return err
	}
	if err := w.Worker.Start(); err != nil {
		w.home.Stop()
		return err
	}
	return nil
}

// Run serves until interruptCh receives; then it stops taking steps,
// lets the steps in flight finish for the worker's WorkerStopTimeout,
// stops the others and hands them back to the server (they run again
// when a worker of this name serves again), and logs what it did.
func (w *homeWorker) Run(interruptCh <-chan any) error {
	if err := w.home.Start(); err != nil {
		return err
	}
	relay := make(chan any)
	go func() {
		<-interruptCh
		w.acts.stopping.Store(true)
		if n := w.acts.inFlight.Load(); n > 0 && w.logf != nil {
			them := "them"
			if n == 1 {
				them = "it"
			}
			w.logf("stopping: %s in flight; waiting up to %s for %s to finish", steps(n), w.stopTimeout, them)
		}
		close(relay)
	}()
	err := w.Worker.Run(relay)
	w.home.Stop()
	if w.acts.stopping.Load() && w.logf != nil {
		w.logf("stopped: %s in flight finished, %d handed back to run again when worker %s serves again",
			steps(w.acts.finished.Load()), w.acts.handedBack.Load(), w.acts.home.Worker)
	}
	return err
}

// steps is "1 step", "2 steps".
func steps(n int64) string {
	if n == 1 {
		return "1 step"
	}
	return fmt.Sprintf("%d steps", n)
}

func (w *homeWorker) Stop() {
	w.Worker.Stop()
	w.home.Stop()
}

// Run runs pb on the workers of queue and follows it (Watch from its
// first event, giving them to opts.Observer) until it ends or waits for a
// person. Of opts it reads RunID, Inputs, Mode, AgentCommand, Answers and
// Observer; the workers have their own project directory, shell and
// drivers.
func Run(ctx context.Context, c client.Client, queue string, pb *lang.Playbook, ref string, opts interp.Options, with ...StartOption) (*interp.Result, []string, error) {
	id, err := Start(ctx, c, queue, pb, ref, opts, with...)
	if err != nil {
		return nil, nil, err
	}
	return Watch(ctx, c, id, 0, opts.Observer)
}

// A StartOption sets how a run starts beyond interp.Options.
type StartOption func(*RunInput)

// Replay answers every agent call of the run, and of its sub-runs, from
// a cassette (data: the file's contents, as apl run --record writes it;
// name: the file, for messages). The workflow replays it itself: no agent
// runs, on any worker. Calls are numbered per run, so a call that a
// sub-run repeats with its parent's exact request numbers from 0 again.
func Replay(name string, data []byte) StartOption {
	return func(in *RunInput) { in.Cassette, in.CassetteName = data, name }
}

// WithEnv sends environment variables with the run: its commands and
// agents, and its sub-runs', get them on top of their worker's
// environment (a step's or a driver's own env wins). They are written in
// the workflow's history, which whoever reads the namespace reads:
// credentials belong in the workers' environment.
func WithEnv(env map[string]string) StartOption {
	return func(in *RunInput) {
		if len(env) > 0 {
			in.Env = env
		}
	}
}

// Start starts a run of pb on the workers of queue and returns its id,
// the workflow's.
func Start(ctx context.Context, c client.Client, queue string, pb *lang.Playbook, ref string, opts interp.Options, with ...StartOption) (string, error) {
	in, err := Input(pb, ref, opts, with...)
	if err != nil {
		return "", err
	}
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: in.RunID, TaskQueue: queue, WorkflowTaskTimeout: time.Minute,
		// A run id names one run, as a local run's directory does: not a
		// run going on, nor one that ended.
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		Memo:                     map[string]any{memoPlaybook: ref, memoName: pb.Name},
		// Else the SDK hands back the run going on under that id.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}, WorkflowName, in)
	if err != nil {
		return "", fmt.Errorf("starting run %s on Temporal: %w", in.RunID, err)
	}
	return in.RunID, nil
}

// Input is the workflow's input for a run of pb: its sources as loaded,
// so that the run keeps the playbook it started with.
func Input(pb *lang.Playbook, ref string, opts interp.Options, with ...StartOption) (RunInput, error) {
	var err error
	in := RunInput{Ref: ref, Hash: pb.Hash, RunID: opts.RunID, Mode: opts.Mode, AgentCommand: opts.AgentCommand,
		Inputs: map[string]value{}, Answers: opts.Answers}
	for _, o := range with {
		o(&in)
	}
	if len(in.Cassette) > 0 {
		// Refused here rather than by the first agent call on a worker.
		if _, err := agent.ReadCassette(in.CassetteName, in.Cassette); err != nil {
			return in, err
		}
	}
	if in.RunID == "" {
		in.RunID = interp.NewRunID(time.Now())
	}
	if in.Inputs, err = encodeInputs(opts.Inputs); err != nil {
		return in, err
	}
	if strings.HasPrefix(ref, lang.StdlibPrefix) {
		// The worker's binary embeds the stdlib.
		in.Dir = ref
		in.Files, err = inputFiles(pb, nil)
		return in, err
	}
	fi, err := os.Stat(ref)
	if err != nil {
		return in, err
	}
	in.Sources = map[string][]byte{}
	files := []string{ref}
	in.Dir = filepath.Dir(ref)
	if fi.IsDir() {
		in.Dir = ref
		entries, err := os.ReadDir(ref)
		if err != nil {
			return in, err
		}
		files = files[:0]
		for _, e := range entries {
			if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".hcl") && !strings.HasSuffix(n, "_test.hcl") {
				files = append(files, filepath.Join(ref, n))
			}
		}
	}
	for _, f := range files {
		src, ok := pb.Sources[f]
		if !ok {
			if src, err = os.ReadFile(f); err != nil {
				return in, err
			}
		}
		in.Sources[f] = src
	}
	if in.Dir, err = filepath.Abs(in.Dir); err != nil {
		return in, err
	}
	in.Files, err = inputFiles(pb, in.Sources)
	return in, err
}
