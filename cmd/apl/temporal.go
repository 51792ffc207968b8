//go:build !notemporal

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/temporal"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	temporalsdk "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
)

// dialTemporal connects to the cluster at address, logging only
// warnings, to stderr.
func dialTemporal(address, namespace string) (client.Client, error) {
	c, err := client.Dial(client.Options{HostPort: address, Namespace: namespace, Logger: quietLogger()})
	if err != nil {
		return nil, exitWith(exitUsage, fmt.Errorf("no Temporal server answers at %s (--temporal-address, APL_TEMPORAL_ADDRESS; temporal server start-dev serves localhost:7233): %w", address, err))
	}
	return c, nil
}

// temporalAsker asks a question a run on the cluster waits on, as
// asker asks a local run's: nil when there is no terminal to ask at.
var temporalAsker = asker

// quietLogger logs the Temporal SDK's warnings and errors only, to
// stderr.
func quietLogger() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}

// temporalRuns is what apl run and apl resume do with runs on a Temporal
// cluster (package temporal's client functions); tests put a fake in its
// place (dialRuns).
type temporalRuns interface {
	Start(ctx context.Context, pb *lang.Playbook, ref string, opts interp.Options, with ...temporal.StartOption) (string, error)
	// Follow follows run id from its event from on (temporal.FromNow:
	// from the next).
	Follow(id string, from int) runFollower
	// Answer answers run id's question at key with choice; how says how
	// it was given when not with apl resume --answer
	// (interp.AnsweredAtTerminal), for the run's event log.
	Answer(ctx context.Context, id, key, choice, how string) (from int, err error)
	StartedWith(ctx context.Context, id string) (temporal.RunInput, error)
	// Status is the workflow's status (temporal.WorkflowStatus).
	Status(ctx context.Context, id string) (string, error)
	Close()
}

// openRuns connects to the cluster f names.
func openRuns(f temporalFlags) (temporalRuns, error) { return dialRuns(f) }

// dialRuns connects to the cluster f names.
var dialRuns = func(f temporalFlags) (temporalRuns, error) {
	cl, err := dialTemporal(f.TemporalAddress, f.Namespace)
	if err != nil {
		return nil, err
	}
	return clusterRuns{cl, f.TaskQueue}, nil
}

type clusterRuns struct {
	c     client.Client
	queue string
}

func (r clusterRuns) Start(ctx context.Context, pb *lang.Playbook, ref string, opts interp.Options, with ...temporal.StartOption) (string, error) {
	return temporal.Start(ctx, r.c, r.queue, pb, ref, opts, with...)
}

func (r clusterRuns) Follow(id string, from int) runFollower {
	return clusterFollower{temporal.NewFollower(r.c, id, from)}
}

// runFollower follows one run: each Watch goes on from where the last
// one stopped (temporal.Follower), until the run ends or waits for a
// person.
type runFollower interface {
	Watch(ctx context.Context, obs interp.Observer) (*interp.Result, error)
}

type clusterFollower struct{ f *temporal.Follower }

func (f clusterFollower) Watch(ctx context.Context, obs interp.Observer) (*interp.Result, error) {
	res, _, err := f.f.Watch(ctx, obs)
	return res, err
}

func (r clusterRuns) Answer(ctx context.Context, id, key, choice, how string) (int, error) {
	return temporal.SendAnswerAs(ctx, r.c, id, key, choice, how)
}

func (r clusterRuns) StartedWith(ctx context.Context, id string) (temporal.RunInput, error) {
	return temporal.StartedWith(ctx, r.c, id)
}

func (r clusterRuns) Status(ctx context.Context, id string) (string, error) {
	return temporal.WorkflowStatus(ctx, r.c, id)
}

func (r clusterRuns) Close() { r.c.Close() }

// temporalResume is the apl resume command that follows run id on the
// cluster f names, and answers it with --answer.
func temporalResume(id string, f temporalFlags) string {
	cmd := "apl resume " + shellQuote(id) + " --engine temporal --temporal-address " + shellQuote(f.TemporalAddress)
	if f.Namespace != "" && f.Namespace != "default" {
		cmd += " --temporal-namespace " + shellQuote(f.Namespace)
	}
	return cmd
}

// runTemporal runs the playbook as a workflow and follows it as a local
// run is followed: its progress lines on stderr as its steps go, its
// questions asked at the terminal, its report when it ends. A run that
// waits for a person with no terminal to ask at is reported as a local
// run that pauses is (exit 4); the workflow goes on waiting for apl
// resume --answer. The workers run the commands and agents, in their
// own project directories; the run keeps no directory here.
func (c *runCmd) runTemporal(e *env, inputs map[string]cty.Value, agentCmd []string) error {
	opts := c.runOptions
	if opts.Record != "" || opts.RecordMissing != "" {
		return exitWith(exitUsage, errors.New("--record and --record-missing do not go with --engine temporal: record a run locally, then replay it on the cluster with --replay"))
	}
	if opts.Workdir != "" || opts.RunsDir != "" || opts.NoSync {
		return exitWith(exitUsage, errors.New("--workdir, --runs-dir and --no-sync do not go with --engine temporal: the run works in the checkout of the worker that takes it (apl worker --workdir)"))
	}
	if opts.Verbose {
		return exitWith(exitUsage, errors.New("--verbose does not go with --engine temporal: a command's output stays on its worker; apl show and apl logs print the steps' results"))
	}
	env, err := sendEnv(opts.SendEnv)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	with := []temporal.StartOption{temporal.WithEnv(env)}
	if warn, err := unsentEnv(c.pb, agentCmd, env); err == nil && warn != "" {
		fmt.Fprintf(e.stderr, "apl: warning: %s\n", warn)
	}
	if opts.Replay != "" {
		data, err := os.ReadFile(opts.Replay)
		if err == nil {
			_, err = agent.ReadCassette(opts.Replay, data)
		}
		if err != nil {
			return exitWith(exitUsage, fmt.Errorf("--replay: %w", err))
		}
		with = append(with, temporal.Replay(opts.Replay, data))
	}
	runs, err := openRuns(opts.temporalFlags)
	if err != nil {
		return err
	}
	defer runs.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ropts := interp.Options{RunID: opts.RunID, Inputs: inputs, Mode: opts.Mode, AgentCommand: agentCmd}
	id, err := runs.Start(ctx, c.pb, c.Playbook, ropts, with...)
	var dup *serviceerror.WorkflowExecutionAlreadyStarted
	switch {
	case errors.As(err, &dup):
		follow := ""
		if st, _ := runs.Status(ctx, ropts.RunID); st == "running" {
			follow = "; it goes on: follow it with " + temporalResume(ropts.RunID, opts.temporalFlags)
		}
		return exitWith(exitUsage, fmt.Errorf("run %s already exists on %s; choose another --run-id%s", ropts.RunID, opts.where(), follow))
	case err != nil:
		return temporalError(opts.TemporalAddress, opts.Namespace, err)
	}
	return followTemporal(ctx, e, runs, c.pb, id, 0, opts.temporalFlags, opts.progressOptions, opts.JSON, opts.NonInteractive)
}

// askWatchEvery is how often a question's prompt asks the cluster
// whether its run goes on.
var askWatchEvery = time.Second

// errRunEnded ends a question's prompt whose run ended meanwhile.
var errRunEnded = errors.New("the run ended while its question was asked")

// askWhileRunning asks q with ask until it is answered or, should run id
// end on the cluster meanwhile (apl cancel elsewhere), ends the prompt
// and returns errRunEnded.
func askWhileRunning(ctx context.Context, ask interp.Asker, runs temporalRuns, id string, q interp.Question) (string, error) {
	actx, stop := context.WithCancelCause(ctx)
	every, watched := askWatchEvery, make(chan struct{})
	defer func() {
		stop(nil)
		<-watched
	}()
	go func() {
		defer close(watched)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-actx.Done():
				return
			case <-t.C:
			}
			// "" is a run the cluster does not know (yet): not an end.
			if st, err := runs.Status(actx, id); err == nil && st != "" && st != "running" {
				stop(errRunEnded)
				return
			}
		}
	}()
	choice, err := ask.Ask(actx, q)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errRunEnded) {
		return "", errRunEnded
	}
	return choice, err
}

// followTemporal prints run id's events from index from on as they come,
// and reports the run when it ends or waits for a person. At a terminal
// (and without --non-interactive) a question the run waits on is asked
// there, as a local run asks it: the answer is sent to the run, which is
// followed on from where the question stopped following it.
func followTemporal(ctx context.Context, e *env, runs temporalRuns, pb *lang.Playbook, id string, from int, f temporalFlags, po progressOptions, asJSON, nonInteractive bool) error {
	prog := newProgress(e.stderr, po, pb)
	ask := temporalAsker(e.stderr, nonInteractive, prog)
	follow := runs.Follow(id, from)
	var (
		res *interp.Result
		err error
	)
	for {
		res, err = follow.Watch(ctx, prog)
		if err != nil || res.Status != interp.StatusWaiting || res.Waiting == nil || ask == nil {
			break
		}
		w := res.Waiting
		choice, aerr := askWhileRunning(ctx, ask, runs, id, w.Asked())
		if errors.Is(aerr, errRunEnded) {
			// Following it on gives its end.
			prog.println(fmt.Sprintf("apl: run %s ended on the cluster while %s was asked (apl cancel elsewhere); no answer is sent", id, w.Key()))
			continue
		}
		if aerr != nil {
			// Ctrl-C at the prompt stops following, below; no answer
			// (stdin closed) leaves the run waiting, reported as such.
			break
		}
		_, aerr = runs.Answer(ctx, id, w.Key(), choice, interp.AnsweredAtTerminal)
		var (
			ended *temporal.EndedError
			na    *temporal.NotAskedError
		)
		switch {
		case errors.As(aerr, &ended):
			// Cancelled meanwhile: following it gives its end.
		case errors.As(aerr, &na):
			prog.println(fmt.Sprintf("apl: %s was answered elsewhere meanwhile (apl ui, apl resume --answer); %s is not sent", w.Key(), choice))
		case aerr != nil && ctx.Err() == nil:
			prog.close()
			return exitWith(exitInternal, fmt.Errorf("answering %s of run %s: %w", w.Key(), id, aerr))
		}
	}
	prog.close()
	resume := temporalResume(id, f)
	if ctx.Err() != nil {
		// Ctrl-C, at a question's prompt too: the run goes on, or waits
		// for the answer, on the cluster.
		return exitWith(exitInterrupted, fmt.Errorf("stopped following run %s; it goes on on the cluster; follow it again with: %s", id, resume))
	}
	if err != nil {
		var (
			term   *temporalsdk.TerminatedError
			cancel *temporalsdk.CanceledError
		)
		switch {
		case errors.As(err, &term):
			return exitWith(exitInterrupted, fmt.Errorf("run %s was terminated on the cluster (apl cancel --terminate): it ended without a result", id))
		case errors.As(err, &cancel):
			return exitWith(exitInterrupted, fmt.Errorf("run %s was cancelled on the cluster before it started: it ended interrupted", id))
		}
		return exitWith(exitInternal, err)
	}
	res.Dir = "temporal workflow " + res.RunID
	if res.Status == interp.StatusInterrupted {
		// Cancelled on the cluster (apl cancel): it ended; nothing
		// continues it.
		if asJSON {
			fmt.Fprintf(e.stdout, "%s\n", resultJSON(res))
		}
		fmt.Fprintf(e.stderr, "apl: run %s was cancelled on the cluster: it ended interrupted\n", res.RunID)
		return exitWith(exitInterrupted, nil)
	}
	return reportResume(e, pb, res, nil, asJSON, resume)
}

// resumeTemporal follows a run on Temporal again: it sends the --answer
// decisions the run waits for, then follows it as apl run does, until it
// ends or waits again.
func (c *resumeCmd) resumeTemporal(e *env) error {
	id := c.RunRef
	if id == "" || id == "latest" {
		return exitWith(exitUsage, errors.New("apl resume --engine temporal needs the run's id, as apl run printed it"))
	}
	// APL_AGENT_CMD in the environment is not a flag given.
	agentCmd := c.AgentCmd != "" && c.AgentCmd != os.Getenv("APL_AGENT_CMD")
	if c.From != "" || c.Force || c.Playbook != "" || agentCmd || c.Record != "" || c.RecordMissing != "" || c.Replay != "" {
		return exitWith(exitUsage, errors.New("--from, --force, --playbook, --agent-cmd, --record, --record-missing and --replay do not go with --engine temporal: the run goes on with the playbook and agents it started with"))
	}
	answers, err := parseAnswers(c.Answer)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	runs, err := openRuns(c.temporalFlags)
	if err != nil {
		return err
	}
	defer runs.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	in, err := runs.StartedWith(ctx, id)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	// As it started, from its input: the files here may have changed or
	// be another checkout's.
	pb, diags := temporal.LoadRun(e.loader, in)
	if diags.HasErrors() {
		writeDiags(e.stderr, pb, diags)
		return exitWith(exitUsage, fmt.Errorf("run %s: its playbook %s: %s", id, in.Ref, countDiags(diags)))
	}
	from := temporal.FromNow
	keys := slices.Sorted(maps.Keys(answers))
	for _, k := range keys {
		n, err := runs.Answer(ctx, id, k, answers[k], "")
		var (
			we    *interp.WaitingError
			ended *temporal.EndedError
			na    *temporal.NotAskedError
		)
		switch {
		case errors.As(err, &we):
			return exitWith(exitUsage, fmt.Errorf("--answer %s=%s: %v", k, answers[k], err))
		case errors.As(err, &na), errors.As(err, &ended):
			return exitWith(exitUsage, fmt.Errorf("--answer %s: %v", k, err))
		case err != nil:
			return exitWith(exitInternal, err)
		}
		if from == temporal.FromNow {
			from = n
		}
	}
	if len(keys) == 0 && !c.Quiet {
		// Its events so far are not shown: say which run this is.
		fmt.Fprintf(e.stderr, "following run %s of %s on Temporal from now on\n", id, pb.Name)
	}
	return followTemporal(ctx, e, runs, pb, id, from, c.temporalFlags, c.progressOptions, c.JSON, c.NonInteractive)
}

func (c *workerCmd) Run(e *env) error {
	if c.Guard {
		temporal.RunGuard(os.Stdin)
		return nil
	}
	if c.MaxSteps < 0 {
		return exitWith(exitUsage, fmt.Errorf("--max-steps %d: want a number of steps, 1 or more", c.MaxSteps))
	}
	if c.ContinueAfter < 0 {
		return exitWith(exitUsage, fmt.Errorf("--continue-after %d: want a number of events, or 0 for never", c.ContinueAfter))
	}
	continueAfter := c.ContinueAfter
	if continueAfter == 0 {
		continueAfter = -1 // never
	}
	cfg := temporal.Config{Loader: e.loader, Workdir: c.Workdir, BlobDir: c.BlobDir, Name: c.Name, ContinueAfter: continueAfter,
		Logf: func(format string, args ...any) { fmt.Fprintf(e.stderr, "apl worker: "+format+"\n", args...) }}
	// Refused before connecting: a worker in a checkout that is not there
	// would take runs and fail them.
	cfg, err := temporal.CheckConfig(cfg)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("--workdir: %w", err))
	}
	cl, err := dialTemporal(c.TemporalAddress, c.Namespace)
	if err != nil {
		return err
	}
	defer cl.Close()
	// Refused before it says it serves: the worker would fail at once.
	if _, err := cl.WorkflowService().DescribeNamespace(context.Background(), &workflowservice.DescribeNamespaceRequest{Namespace: c.Namespace}); err != nil {
		return temporalError(c.TemporalAddress, c.Namespace, err)
	}
	if cfg.Guard, err = startGuard(); err != nil {
		return exitWith(exitInternal, err)
	}
	defer cfg.Guard.Close()
	w, err := temporal.NewWorker(cl, c.TaskQueue, cfg,
		worker.Options{MaxConcurrentActivityExecutionSize: c.MaxSteps, WorkerStopTimeout: c.StopTimeout})
	if err != nil {
		return exitWith(exitUsage, err)
	}
	fmt.Fprintf(e.stderr, "apl worker: %s serving task queue %s at %s (namespace %s); runs it takes work in %s\n",
		cfg.Name, c.TaskQueue, c.TemporalAddress, c.Namespace, cfg.Workdir)
	if err := w.Run(worker.InterruptCh()); err != nil {
		return temporalError(c.TemporalAddress, c.Namespace, err)
	}
	return nil
}

// startGuard starts this worker's guard (apl worker --guard), which stops
// the worker's commands if it dies.
func startGuard() (*temporal.Guard, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return temporal.StartGuard(exe, []string{os.Args[0], "worker", "--guard"})
}

// temporalError is err from the cluster at address as apl reports it: a
// namespace the cluster does not have is a usage error, which names
// where it was looked for.
func temporalError(address, namespace string, err error) error {
	var nf *serviceerror.NamespaceNotFound
	if errors.As(err, &nf) {
		return exitWith(exitUsage, fmt.Errorf("temporal %s: no namespace %q there (--temporal-namespace, APL_TEMPORAL_NAMESPACE)", address, namespace))
	}
	return exitWith(exitInternal, fmt.Errorf("temporal %s: %w", address, err))
}
