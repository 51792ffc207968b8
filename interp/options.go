package interp

import (
	"context"
	"sync"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// Options configure a run. The zero value of every field has a sensible
// default, documented on the field.
type Options struct {
	// Workdir is the project root: commands run there and the run
	// directory lives under it. Default: the current directory.
	Workdir string
	// RunsDir holds run directories. Default: Workdir/.apl/runs.
	RunsDir string
	// RunID names a new run. Default: a time-based id.
	RunID string
	// Inputs are explicitly given input values; they override the mode's.
	Inputs map[string]cty.Value
	// Mode names a mode block whose inputs preset values.
	Mode string

	// Shell runs shell actions. Default: builtins.Shell at Workdir.
	// Shell, Funcs and Drivers are left unset with an Engine, which
	// supplies its own.
	Shell ShellRunner
	// Funcs are the builtins `call` blocks reach. Default: builtins.Funcs().
	Funcs builtins.Registry
	// Drivers makes the driver for an agent profile. Default: the profile's
	// driver block or preset, or AgentCommand when set.
	Drivers DriverFactory
	// Playbooks, when set, may answer a playbook step in place of running
	// its playbook (apl test's mocks). Default: every playbook step runs.
	Playbooks PlaybookStub
	// AgentCommand, when set, sends every agent call to this command (the
	// command driver contract; apl run --agent-cmd).
	AgentCommand []string

	// Timeouts override the time limit of the steps they name (apl run
	// --timeout STEP=30m), in this run and the playbooks it runs.
	Timeouts map[string]time.Duration
	// AgentTimeout, when set, is the time limit of every agent step that
	// Timeouts does not name (apl run --agent-timeout 30m). A resumed run
	// keeps the overrides it started with, under those resume gives.
	AgentTimeout time.Duration

	// DryRun, when set, makes the run a dry run: it walks the graph with
	// stand-ins for agents, commands and builtins that write (see DryRun).
	DryRun *DryRun

	// Observer receives progress events. Default: none.
	Observer Observer
	// EmptyValue, when set, is told of each value an agent prompt renders
	// empty, blank or null into its text, unless the prompt marks it
	// optional (apl run --dry-run and apl test set it). It is called as
	// prompts render, from several goroutines at once in a for_each.
	EmptyValue func(EmptyValue)
	// Output, when set, receives each line shell steps print, as they
	// print it (apl run --verbose): the step, the for_each item's key,
	// and whether the line is from stderr. Unlike Observer, it is called
	// from the commands' reading goroutines, several at once. Lines are
	// redacted as artifacts are.
	Output func(step, item string, stderr bool, line string)
	// Clock gives the time for records and traces. Default: time.Now.
	Clock func() time.Time
	// NoSync skips fsync on checkpoints (faster, not crash-safe).
	NoSync bool
	// SyncAlways fsyncs the journal at every completed step before the
	// run goes on. Without it one fsync, on another goroutine, covers
	// the completions of a window of about 10 ms (group commit): a killed
	// apl still loses nothing, and a machine crash at most that window's
	// transitions, which resume runs again. NoSync wins over it.
	SyncAlways bool
	// Force resumes a run even though its playbook changed, or its
	// circuit breaker is still cooling down.
	Force bool

	// Asker puts ask steps' questions to a person; nil makes a run that
	// reaches an unanswered ask pause as waiting.
	Asker Asker
	// Answers are decisions given to resume: step name (or STEP[ITEM]
	// inside a for_each) → chosen option.
	Answers map[string]string
	// From, on resume, runs again from this step.
	From string

	// Engine, when set, runs the walk on a durable-execution engine
	// instead of this process's goroutines (see Engine). The engine
	// supplies Shell, Funcs and Drivers that reach its workers: a run
	// that sets them beside it does not start.
	Engine Engine

	// OuterCaps are what the runs that run this one leave it of their
	// caps: a sub-run's on an engine, whose parent does not lend it its
	// budget as calls go (Caps, BudgetRelay).
	OuterCaps *Caps

	// outer is the budget of the run that runs this one in this process
	// (a local sub-run): its caps hold during this run.
	outer *budget

	// host, when set, makes the host a run's walk uses from the local
	// one (tests: a fake clock and timers).
	host func(*localHost) host
}

// ShellRunner runs commands; builtins.Shell implements it.
type ShellRunner interface {
	Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error)
}

// PlaybookStub answers playbook step step in place of its sub-run, after
// the step's inputs were evaluated: ok false runs the playbook; err fails
// the step.
type PlaybookStub func(ctx context.Context, step string) (out cty.Value, ok bool, err error)

// DriverFactory returns the driver that serves an agent profile.
type DriverFactory func(a *lang.Agent) (agent.Driver, error)

// Observer receives a run's events as they happen, one call at a time,
// in order. An agent call's progress (EventAgentProgress) comes from the
// goroutine of the call's driver or heartbeat.
type Observer interface {
	Event(e Event)
}

// syncObserver makes an Observer's calls one at a time.
type syncObserver struct {
	mu    sync.Mutex
	inner Observer
}

func (o *syncObserver) Event(e Event) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.inner.Event(e)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(e Event)

// Event implements Observer.
func (f ObserverFunc) Event(e Event) { f(e) }
