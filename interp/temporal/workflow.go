package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Names the workflow and the activities are registered under.
const (
	WorkflowName   = "apl.run"
	activityPrefix = "apl."
)

// RunInput starts a run: the playbook as it was when the run started
// (its sources travel with the run, so a playbook changed while the run
// is in flight does not change it) and how to run it.
type RunInput struct {
	// Ref names the playbook as the command line did; Dir is where its
	// relative paths resolve. Sources are its .hcl files; none for a
	// stdlib playbook, which the worker's binary embeds.
	Ref     string
	Dir     string
	Sources map[string][]byte
	Hash    string
	// Files are the other files loading the playbook reads, by absolute
	// path: its prompt files and upstreams, and the files of the
	// playbooks it runs (lang.Files), so that a worker without a copy of
	// the project loads them as they were.
	Files map[string][]byte

	RunID        string
	Mode         string
	Inputs       map[string]value
	AgentCommand []string
	// Answers are decisions given when the run started
	// (interp.Options.Answers); other questions wait for SignalAnswer.
	Answers map[string]string
	// Cassette, when set, is a cassette file's contents (named
	// CassetteName) that answers every agent call of the run and of its
	// sub-runs, in the workflow: no agent runs (apl run --replay).
	Cassette     []byte
	CassetteName string
	// Caps are what the run that runs this one (a sub-run's parent)
	// leaves it of its caps; nil: none (interp.Options.OuterCaps). With
	// Relay, the parent's budget holds it instead, and it takes only
	// the parent's playbook and its steps' spends from them.
	Caps *interp.Caps
	// Home is the worker whose checkout the run works in: set for a
	// sub-run, which keeps to its parent's; a run claims one when it
	// starts (home.go).
	Home *Home `json:",omitempty"`
	// Env are environment variables sent with the run (WithEnv): its
	// commands and agents get them on top of their worker's environment.
	// A sub-run inherits them.
	Env map[string]string `json:",omitempty"`
	// Continued, when set, is where the run's workflow stopped when it
	// continued as new (continue.go): this execution resumes it.
	Continued *Continued `json:",omitempty"`
	// Relay: the parent serves this sub-run's reservations
	// (budgetrelay.go).
	Relay bool `json:",omitempty"`
}

// RunOutput is how the run ended.
type RunOutput struct {
	RunID, Status, Recommendation, Reason string
	ErrorKind                             string
	Output                                value
	OutputJSON                            json.RawMessage
	Waiting                               *interp.Waiting
	// Metrics are the run's totals (a sub-run's count toward its
	// parent's caps).
	Metrics interp.Metrics
	// CapTrip is the cap of the run that runs this one that stopped it
	// (interp.Result.CapTrip).
	CapTrip string
	// Spent is what one call of each step spent at most
	// (interp.Result.Spent).
	Spent map[string]interp.CallSpend
	// Path is the steps the run took, in order: "STEP", or
	// "STEP[ITEM]/BODYSTEP" inside a for_each, each with how it ended.
	Path []string
	// Home is the worker whose checkout the run worked in.
	Home Home
}

// Config is what a worker needs to run the workflow and its activities.
type Config struct {
	// Loader loads playbooks in the workflow; it must be the one apl
	// run used (the same stdlib and builtins).
	Loader *lang.Loader
	// Workdir is the project root on this worker: commands and agents
	// run there. Default: the current directory.
	Workdir string
	// BlobDir is the blob store the workers share. Default:
	// WORKDIR/.apl/blobs.
	BlobDir string
	// Shell runs commands (default builtins.Shell at Workdir with the
	// default policy); Funcs are the builtins (default builtins.Funcs()).
	Shell ShellRunner
	Funcs builtins.Registry
	// Guard, when set, stops the worker's commands when it dies
	// (guard.go).
	Guard *Guard
	// Logf, when set, is told what the worker does when it stops.
	Logf func(format string, args ...any)
	// Name is this worker's name, which a run it is home to waits for
	// when the worker is gone (home.go). Default: DefaultWorkerName.
	Name string
	// HeartbeatTimeout is how long a worker may go silent in a step
	// before the step is scheduled again. Default: 5s (a step beats
	// every second).
	HeartbeatTimeout time.Duration
	// ContinueAfter is how many events a run's workflow history holds
	// before the workflow continues as new (continue.go). Default:
	// 10,000; negative: never.
	ContinueAfter int
	// MaxPending is how many actions and sub-runs of a run may be under
	// way at once; more wait in the workflow, as if their worker were
	// busy (a for_each's concurrency may pass it). Default: 1,000, half
	// Temporal's limit.
	MaxPending int
	// RelayLimit is how many events a run's workflow history may hold
	// while a sub-run that reserves from its budget runs (the run cannot
	// continue as new then) before the sub-run's calls and retries are
	// refused (budgetrelay.go). Default: 40,000; negative: no limit.
	RelayLimit int
}

func (c Config) withDefaults() (Config, error) {
	if c.Workdir == "" {
		c.Workdir = "."
	}
	wd, err := filepath.Abs(c.Workdir)
	if err != nil {
		return c, err
	}
	if fi, err := os.Stat(wd); err != nil || !fi.IsDir() {
		if err == nil {
			err = fmt.Errorf("not a directory")
		}
		return c, fmt.Errorf("workdir %s: %w", c.Workdir, err)
	}
	c.Workdir = wd
	if c.BlobDir == "" {
		c.BlobDir = BlobDir(c.Workdir)
	}
	if c.Shell == nil {
		c.Shell = &builtins.Shell{Workdir: c.Workdir, Policy: builtins.DefaultPolicy}
	}
	if c.Funcs == nil {
		c.Funcs = builtins.Funcs()
	}
	if c.Name == "" {
		c.Name = DefaultWorkerName(c.Workdir)
	}
	if c.HeartbeatTimeout == 0 {
		c.HeartbeatTimeout = 5 * time.Second
	}
	if c.ContinueAfter == 0 {
		c.ContinueAfter = defaultContinueAfter
	}
	if c.MaxPending <= 0 {
		c.MaxPending = defaultMaxPending
	}
	if c.RelayLimit == 0 {
		c.RelayLimit = defaultRelayLimit
	}
	return c, nil
}

// CheckConfig checks a worker's configuration before it connects, and
// returns it with its defaults set (its absolute checkout, its name).
func CheckConfig(c Config) (Config, error) { return c.withDefaults() }

// BlobDir is the default blob store of a project at workdir.
func BlobDir(workdir string) string { return workdir + "/.apl/blobs" }

// runner holds the workflow.
type runner struct{ cfg Config }

// Run is the workflow: the interpreter's walk, with the engine's clock
// and coroutines, and every action an activity.
func (w *runner) Run(ctx workflow.Context, in RunInput) (RunOutput, error) {
	pb, diags := LoadRun(w.cfg.Loader, in)
	if diags.HasErrors() {
		return RunOutput{}, temporal.NewNonRetryableApplicationError("loading "+in.Ref+": "+diags.Error(), "playbook", nil)
	}
	if in.Hash != "" && pb.Hash != in.Hash {
		// A stdlib playbook comes from the worker's binary: a worker of
		// another apl version would walk another playbook than the one
		// the run started with, and replaying the history would diverge.
		return RunOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"%s on this worker is not the playbook run %s started with (hash %.12s, here %.12s): run the workers on the apl version that started it, or start the run again",
			in.Ref, in.RunID, in.Hash, pb.Hash), "playbook changed", nil)
	}
	inputs := map[string]cty.Value{}
	for name, v := range in.Inputs {
		cv, err := v.decode()
		if err != nil {
			return RunOutput{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("input %q: %v", name, err), "input", nil)
		}
		inputs[name] = cv
	}
	if in.Home == nil {
		h, err := claimHome(ctx)
		if err != nil {
			return RunOutput{}, err
		}
		in.Home = &h
	}
	memo := workflow.GetVersion(ctx, memoVersion, workflow.DefaultVersion, 1) == 1
	if memo {
		if err := workflow.UpsertMemo(ctx, map[string]any{memoWorker: in.Home.Worker}); err != nil {
			return RunOutput{}, err
		}
	}
	if err := setHomeQuery(ctx, in.Home); err != nil {
		return RunOutput{}, err
	}
	// The run directory receives artifacts; the engine's history, not
	// the directory, is the run's durable state.
	tmp, err := os.MkdirTemp("", "apl-temporal-*")
	if err != nil {
		return RunOutput{}, err
	}
	defer os.RemoveAll(tmp)
	rdir := &runDir{dir: filepath.Join(tmp, in.RunID)}
	if err := setRunDirQuery(ctx, rdir); err != nil {
		return RunOutput{}, err
	}
	state := &runState{}
	if err := setOutputsQuery(ctx, state); err != nil {
		return RunOutput{}, err
	}
	wctx, stop := interruptible(ctx)
	e := &engine{cur: wctx}
	if workflow.GetVersion(ctx, hubVersion, workflow.DefaultVersion, 1) == 1 {
		e.hub = newHub(e)
	}
	var k *continuing
	if workflow.GetVersion(ctx, continueVersion, workflow.DefaultVersion, 1) == 1 {
		k = &continuing{after: continueAfter(ctx, w.cfg), pending: w.cfg.MaxPending, interrupt: func() { e.interrupt() }, await: e.await}
		if k.pending <= 0 {
			k.pending = defaultMaxPending
		}
		e.cont = k
	}
	var cn continuation
	var resumeFrom *interp.State
	if in.Continued != nil {
		if k == nil {
			return RunOutput{}, temporal.NewNonRetryableApplicationError("run "+in.RunID+" continued as new on a worker that does not continue runs", "continue", nil)
		}
		if cn, resumeFrom, err = w.resumed(in.Continued); err != nil {
			return RunOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), "continue", nil)
		}
		k.resumed, k.restarted = true, map[string]bool{}
		for _, key := range cn.Open {
			k.restarted[key] = true
		}
		if cn.Current != "" {
			k.restarted[openKey(interp.EventStepStarted, cn.Current, "")] = true
		}
	}
	acts := &actions{e: e, cfg: w.cfg, agentCmd: in.AgentCommand, queue: in.Home.Queue, env: in.Env}
	path := interp.Path{Ends: cn.Path}
	drivers := acts.driver
	if len(in.Cassette) > 0 {
		tape, err := agent.ReadCassette(in.CassetteName, in.Cassette)
		if err != nil {
			return RunOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), "cassette", nil)
		}
		drivers = func(*lang.Agent) (agent.Driver, error) { return tape.Wrap(nil), nil }
	}
	events, asker := &eventLog{}, newSignalAsker(ctx, e)
	if in.Continued != nil {
		events.first = in.Continued.Events - len(cn.Events)
		events.events = cn.Events
	}
	asker.memo = memo
	if err := setQueries(ctx, events, asker); err != nil {
		return RunOutput{}, err
	}
	if workflow.GetInfo(ctx).ParentWorkflowExecution == nil && in.Continued == nil {
		env := "with that worker's environment"
		if len(in.Env) > 0 {
			env += " and " + strings.Join(slices.Sorted(maps.Keys(in.Env)), ", ") + " sent with the run"
		}
		events.Event(interp.Event{Type: interp.EventLog, Message: fmt.Sprintf(
			"run %s works in the checkout of %s, %s", in.RunID, in.Home, env)})
	}
	var sp *spendMemo
	if memo && workflow.GetInfo(ctx).ParentWorkflowExecution == nil &&
		workflow.GetVersion(ctx, spendVersion, workflow.DefaultVersion, 1) == 1 {
		sp = &spendMemo{ctx: ctx}
	}
	re := &runEngine{engine: e, acts: acts, funcs: acts.funcs(), drivers: drivers, events: events, in: in, path: &path, state: state,
		name: pb.Name, relayLimit: w.cfg.RelayLimit}
	re.relay(ctx)
	opts := interp.Options{
		Workdir: in.Home.Workdir, RunsDir: tmp, RunID: in.RunID, Inputs: inputs, Mode: in.Mode,
		AgentCommand: in.AgentCommand, NoSync: true,
		Engine: re,
		Observer: interp.ObserverFunc(func(ev interp.Event) {
			if !k.quiet(ev) {
				path.Event(ev)
				events.Event(ev)
				sp.note(ev)
			}
		}),
		Asker: asker, Answers: in.Answers,
		OuterCaps: in.Caps,
	}
	var res *interp.Result
	if resumeFrom != nil {
		res, err = interp.ResumeState(stop(e), pb, resumeFrom, cn.Outputs, opts)
	} else {
		res, err = interp.Start(stop(e), pb, in.Ref, opts)
	}
	// A sub-run's trip signalled after the walk's last look is taken: it
	// changes nothing now (the sub-run's result told it too).
	re.TrippedBelow()
	// What the walk's calls spent reaches the parent before its end does.
	re.flush()
	if k != nil && k.interrupted && ctx.Err() == nil && errors.Is(err, interp.ErrInterrupted) {
		return RunOutput{}, w.continueAsNew(ctx, in, k, path.Ends, events, rdir.dir)
	}
	rdir.keep()
	if errors.Is(err, interp.ErrInterrupted) {
		err = nil
	}
	if err != nil {
		return RunOutput{}, temporal.NewNonRetryableApplicationError(err.Error(), "run", nil)
	}
	out, err := encodeValue(res.Output)
	if err != nil {
		return RunOutput{}, err
	}
	if memo {
		m := map[string]any{memoStatus: res.Status, memoReason: res.Reason, memoTokens: res.Metrics.TotalTokens}
		if c := res.Metrics.TotalCostUSD; c != nil {
			m[memoCost] = *c
		}
		if err := workflow.UpsertMemo(ctx, m); err != nil {
			return RunOutput{}, err
		}
	}
	return RunOutput{RunID: res.RunID, Status: res.Status, Recommendation: res.Recommendation, Reason: res.Reason,
		ErrorKind: res.ErrorKind, Output: out, OutputJSON: res.OutputJSON, Waiting: res.Waiting, Metrics: res.Metrics, CapTrip: res.CapTrip, Spent: res.Spent, Path: keptPath(path.Ends),
		Home: *in.Home}, nil
}

// actions are the walk's ways to the world, each an activity.
type actions struct {
	e        *engine
	cfg      Config
	agentCmd []string
	// queue is the run's home worker's (home.go).
	queue string
	// env is what the run sends its commands and agents (RunInput.Env).
	env map[string]string
}

// activity runs an activity from the coroutine that runs now, with the
// time left before ctx's deadline (and a minute's grace, so that the
// action's own time limit reports first) as its limit. Temporal retries
// it only when its worker went silent: an action's error comes back as
// its result, and apl's own retry decides on it.
//
// When ctx's deadline passes first (the run's or the step's time limit,
// on the workflow's clock), the activity is cancelled and the walk waits
// until its worker has stopped the step's commands, as a local run's
// context stops them: nothing a step started goes on after the run has
// decided to end. The walk then sees ctx's error, as a local walk does.
func (a *actions) activity(ctx context.Context, name string, in any, out any) error {
	c, back := a.e.hold()
	defer back()
	limit := 24 * time.Hour
	deadline, timed := ctx.Deadline()
	if timed {
		limit = max(deadline.Sub(workflow.Now(c)), time.Second)
	}
	opts := workflow.ActivityOptions{
		TaskQueue:           a.queue,
		StartToCloseTimeout: limit + time.Minute,
		HeartbeatTimeout:    a.cfg.HeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, MaximumAttempts: 10,
		},
	}
	if err := a.e.cont.admit(c, ctx); err != nil {
		return err
	}
	defer a.e.cont.landed(c)
	var p payload
	ac, done := a.e.stoppable(c)
	defer done()
	ac, cancel := workflow.WithCancel(ac)
	defer cancel()
	f := workflow.ExecuteActivity(workflow.WithActivityOptions(ac, opts), activityPrefix+name, in)
	if timed {
		a.e.cancelAt(c, f, deadline, cancel)
	}
	if err := a.e.get(c, f, &p); err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return err
	}
	return blobs(a.cfg.BlobDir).unwrap(p, out)
}

// cancelAt waits until f is ready or the workflow's clock reaches
// deadline, whichever comes first, and calls cancel in the second case.
func (e *engine) cancelAt(c workflow.Context, f workflow.Future, deadline time.Time, cancel func()) {
	tc, stop := workflow.WithCancel(c)
	defer stop()
	if e.tasked() {
		t := workflow.NewTimer(tc, deadline.Sub(workflow.Now(c)))
		e.hub.park(func() bool { return f.IsReady() || t.IsReady() })
		if !f.IsReady() && t.Get(c, nil) == nil {
			cancel()
		}
		return
	}
	sel := workflow.NewSelector(c)
	sel.AddFuture(f, func(workflow.Future) {})
	sel.AddFuture(workflow.NewTimer(tc, deadline.Sub(workflow.Now(c))), func(t workflow.Future) {
		if t.Get(c, nil) == nil {
			cancel()
		}
	})
	sel.Select(c)
}

// Run implements interp.ShellRunner.
func (a *actions) Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	// The step's own env wins over the run's: it comes after.
	env := slices.Concat(envList(a.env), spec.Env)
	in := shellSpec{Step: spec.Step, Command: spec.Command, Script: spec.Script, Dir: spec.Dir, Env: env,
		Stdin: spec.Stdin, Timeout: spec.Timeout, MaxOutput: spec.MaxOutput, Parse: spec.Parse}
	var r shellResult
	if err := a.activity(ctx, "Shell", in, &r); err != nil {
		return builtins.ShellResult{ExitCode: -1}, err
	}
	out, err := r.Output.decode()
	if err != nil {
		return builtins.ShellResult{ExitCode: -1}, err
	}
	return builtins.ShellResult{ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr,
		StdoutTruncated: r.StdoutTruncated, StderrTruncated: r.StderrTruncated, Duration: r.Duration,
		TimedOut: r.TimedOut, Output: out}, r.Failure.err()
}

// funcs are the worker's builtins, each called as an activity.
func (a *actions) funcs() builtins.Registry {
	reg := builtins.Registry{}
	for name := range a.cfg.Funcs {
		reg[name] = func(ctx context.Context, env builtins.Env, args cty.Value) (cty.Value, error) {
			wa, err := encodeValue(args)
			if err != nil {
				return cty.NilVal, err
			}
			var r builtinResult
			if err := a.activity(ctx, "Builtin", builtinCall{Name: name, Env: env, Args: wa}, &r); err != nil {
				return cty.NilVal, err
			}
			out, err := r.Out.decode()
			if err != nil {
				return cty.NilVal, err
			}
			return out, r.Failure.err()
		}
	}
	return reg
}

// driver serves an agent profile: its calls go to a worker, which makes
// the driver the profile's configuration names.
func (a *actions) driver(ag *lang.Agent) (agent.Driver, error) {
	cfg, err := interp.AgentConfig(ag, a.agentCmd)
	if err != nil {
		return nil, err
	}
	return &remoteDriver{a: a, cfg: cfg}, nil
}

type remoteDriver struct {
	a   *actions
	cfg agent.Config
}

func (d *remoteDriver) Call(ctx context.Context, req agent.Request) (agent.Response, error) {
	cfg := wireConfig(d.cfg)
	if len(d.a.env) > 0 {
		// The driver's own env wins over the run's.
		cfg.Env = maps.Clone(d.a.env)
		maps.Copy(cfg.Env, d.cfg.Env)
	}
	in := agentCall{Config: cfg, Request: agentRequest{Step: req.Step, Agent: req.Agent, Model: req.Model,
		Prompt: req.Prompt, System: req.System, RunID: req.RunID, ItemKey: req.ItemKey, SessionID: req.SessionID,
		Attempt: req.Attempt, Schema: req.Schema, Timeout: req.Timeout}}
	var r agentResult
	if err := d.a.activity(ctx, "Agent", in, &r); err != nil {
		return agent.Response{}, err
	}
	resp := r.Response
	resp.Raw, resp.Stderr = r.Raw, r.Stderr
	return resp, r.Failure.err()
}

// envList is env as KEY=VALUE pairs, by name.
func envList(env map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
