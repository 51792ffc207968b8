package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// Payloads larger than inlineMax go to the blob store; history holds
// their reference. Temporal refuses payloads over 2 MB and warns from
// 256 KB.
const inlineMax = 128 << 10

// payload is an activity's result on the wire: its JSON inline, or the
// name of the blob that holds it.
type payload struct {
	Inline json.RawMessage `json:",omitempty"`
	Blob   string          `json:",omitempty"`
}

// blobs is the store the workers share: a directory of files named by
// their content's SHA-256, written once and never changed, so a replay
// reads what the first execution read.
type blobs string

func (b blobs) wrap(v any) (payload, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return payload{}, err
	}
	if len(data) <= inlineMax {
		return payload{Inline: data}, nil
	}
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:])
	p := filepath.Join(string(b), name)
	if _, err := os.Stat(p); err == nil {
		return payload{Blob: name}, nil
	}
	// Content-addressed: a reader sees the whole blob or none.
	if err := builtins.WriteFileAtomic(p, data, 0o644); err != nil {
		return payload{}, fmt.Errorf("blob store: %w", err)
	}
	return payload{Blob: name}, nil
}

func (b blobs) unwrap(p payload, v any) error {
	data := []byte(p.Inline)
	if p.Blob != "" {
		var err error
		if data, err = os.ReadFile(filepath.Join(string(b), p.Blob)); err != nil {
			return fmt.Errorf("blob store: %w", err)
		}
	}
	return json.Unmarshal(data, v)
}

// failure is an action's error on the wire: its message and its kind
// (steps.NAME.error_kind). An action's error is a result of the step, not
// a failure of the activity, which Temporal would retry.
type failure struct {
	Message string `json:",omitempty"`
	Kind    string `json:",omitempty"`
}

func failureOf(err error) failure {
	if err == nil {
		return failure{}
	}
	var pe *builtins.PolicyError
	kind := agent.Kind(err)
	switch {
	case errors.As(err, &pe):
		kind = agent.KindRefused
	case errors.Is(err, builtins.ErrTimeout):
		kind = agent.KindTimeout
	}
	return failure{Message: err.Error(), Kind: kind}
}

func (f failure) err() error {
	if f.Message == "" {
		return nil
	}
	return &agent.KindError{Kind: f.Kind, Err: errors.New(f.Message)}
}

// shellSpec is builtins.ShellSpec on the wire.
type shellSpec struct {
	Step, Script, Dir, Stdin, Parse string
	Command, Env                    []string
	Timeout                         time.Duration
	MaxOutput                       int
}

type shellResult struct {
	ExitCode                         int
	Stdout, Stderr                   string
	StdoutTruncated, StderrTruncated bool
	Duration                         time.Duration
	TimedOut                         bool
	Output                           value
	Failure                          failure
}

type agentCall struct {
	Config  agentConfig
	Request agentRequest
}

// agentConfig is agent.Config on the wire: a worker makes its own HTTP
// client, runner and sleep.
type agentConfig struct {
	Type, Input, Output, Model, BaseURL, APIKeyEnv string
	Command                                        []string
	Fields, Env                                    map[string]string
	MaxTokens                                      int
	Options                                        map[string]any
	Prices                                         map[string]agent.Price
	Timeout, RetryBackoff                          time.Duration
	RetryMax                                       int
}

func wireConfig(c agent.Config) agentConfig {
	return agentConfig{Type: c.Type, Input: c.Input, Output: c.Output, Model: c.Model, BaseURL: c.BaseURL,
		APIKeyEnv: c.APIKeyEnv, Command: c.Command, Fields: c.Fields, Env: c.Env, MaxTokens: c.MaxTokens,
		Options: c.Options, Prices: c.Prices, Timeout: c.Timeout, RetryBackoff: c.Retry.Backoff, RetryMax: c.Retry.Max}
}

func (c agentConfig) config() agent.Config {
	return agent.Config{Type: c.Type, Input: c.Input, Output: c.Output, Model: c.Model, BaseURL: c.BaseURL,
		APIKeyEnv: c.APIKeyEnv, Command: c.Command, Fields: c.Fields, Env: c.Env, MaxTokens: c.MaxTokens,
		Options: c.Options, Prices: c.Prices, Timeout: c.Timeout, Retry: agent.Retry{Max: c.RetryMax, Backoff: c.RetryBackoff}}
}

// agentRequest is agent.Request on the wire.
type agentRequest struct {
	Step, Agent, Model, Prompt, System, RunID, ItemKey, SessionID string
	Attempt                                                       int
	Schema                                                        map[string]any
	Timeout                                                       time.Duration
}

type agentResult struct {
	Response agent.Response
	Raw      []byte
	Stderr   []byte
	Failure  failure
}

type builtinCall struct {
	Name string
	Env  builtins.Env
	Args value
}

type builtinResult struct {
	Out     value
	Failure failure
}

// activities are what workers do for the walk: run a command, call an
// agent, call a builtin. Each runs in the worker's project directory.
type activities struct {
	home  Home
	guard *Guard
	// inFlight counts the steps running now; stopping is set once the
	// worker stops, and handedBack counts the steps it stopped then.
	inFlight, handedBack, finished atomic.Int64
	stopping                       atomic.Bool
	workdir                        string
	blobs                          blobs
	shell                          ShellRunner
	funcs                          builtins.Registry

	mu      sync.Mutex
	drivers map[string]agent.Driver
}

// ShellRunner runs a worker's commands (interp.ShellRunner).
type ShellRunner interface {
	Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error)
}

// step runs a step's action: it beats (beat), counts the step in
// flight, and hands a step stopped by its context (the worker stops, or
// the server gave up on this attempt) back to the server as the
// activity's error, to run again, rather than as the step's failure.
func (a *activities) step(ctx context.Context, fn func() (payload, error)) (payload, error) {
	a.inFlight.Add(1)
	defer a.inFlight.Add(-1)
	defer beat(ctx)()
	p, err := fn()
	if cerr := ctx.Err(); cerr != nil {
		if a.stopping.Load() {
			a.handedBack.Add(1)
		}
		msg := fmt.Sprintf("step stopped on worker %s: %v", a.home.Worker, cerr)
		if temporal.IsCanceledError(context.Cause(ctx)) {
			// The run stopped it (its time limit, apl cancel): no fault
			// of the worker's, so the SDK logs it below errors. Its cause
			// keeps it a cancellation for the server.
			return payload{}, temporal.NewApplicationErrorWithOptions(msg, "stopped", temporal.ApplicationErrorOptions{
				Cause: cerr, Category: temporal.ApplicationErrorCategoryBenign})
		}
		return payload{}, fmt.Errorf("step stopped on worker %s: %w", a.home.Worker, cerr)
	}
	if a.stopping.Load() {
		a.finished.Add(1)
	}
	return p, err
}

// beat records a heartbeat every second until stop is called, so that
// the server notices a worker that died mid-step and schedules the step
// again.
func beat(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

func (a *activities) Shell(ctx context.Context, in shellSpec) (payload, error) {
	return a.step(ctx, func() (payload, error) { return a.runShell(ctx, in) })
}

func (a *activities) runShell(ctx context.Context, in shellSpec) (payload, error) {
	var pid int
	spec := builtins.ShellSpec{Step: in.Step, Command: in.Command, Script: in.Script, Dir: in.Dir, Env: in.Env,
		Stdin: in.Stdin, Timeout: in.Timeout, MaxOutput: in.MaxOutput, Parse: in.Parse,
		Started: func(p int) { pid = p; a.guard.line("start", p) }}
	res, err := a.shell.Run(ctx, spec)
	if pid > 0 {
		a.guard.line("end", pid)
	}
	out, verr := encodeValue(res.Output)
	if verr != nil {
		return payload{}, verr
	}
	return a.blobs.wrap(shellResult{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr,
		StdoutTruncated: res.StdoutTruncated, StderrTruncated: res.StderrTruncated, Duration: res.Duration,
		TimedOut: res.TimedOut, Output: out, Failure: failureOf(err)})
}

func (a *activities) Agent(ctx context.Context, in agentCall) (payload, error) {
	return a.step(ctx, func() (payload, error) { return a.callAgent(ctx, in) })
}

func (a *activities) callAgent(ctx context.Context, in agentCall) (payload, error) {
	drv, err := a.driver(in.Config)
	if err != nil {
		return a.blobs.wrap(agentResult{Failure: failureOf(err)})
	}
	r := in.Request
	req := agent.Request{Step: r.Step, Agent: r.Agent, Model: r.Model, Prompt: r.Prompt, System: r.System,
		Attempt: r.Attempt, RunID: r.RunID, ItemKey: r.ItemKey, Workdir: a.workdir, Schema: r.Schema,
		SessionID: r.SessionID, Timeout: r.Timeout}
	resp, err := drv.Call(ctx, req)
	return a.blobs.wrap(agentResult{Response: resp, Raw: resp.Raw, Stderr: resp.Stderr, Failure: failureOf(err)})
}

// driver is the worker's driver for cfg, made on first use.
func (a *activities) driver(cfg agentConfig) (agent.Driver, error) {
	key, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if d, ok := a.drivers[string(key)]; ok {
		return d, nil
	}
	d, err := agent.New(cfg.config())
	if err != nil {
		return nil, err
	}
	a.drivers[string(key)] = d
	return d, nil
}

func (a *activities) Builtin(ctx context.Context, in builtinCall) (payload, error) {
	return a.step(ctx, func() (payload, error) { return a.callBuiltin(ctx, in) })
}

func (a *activities) callBuiltin(ctx context.Context, in builtinCall) (payload, error) {
	args, err := in.Args.decode()
	if err != nil {
		return payload{}, err
	}
	in.Env.Workdir = a.workdir
	out, err := a.funcs.Call(ctx, in.Name, in.Env, args)
	v, verr := encodeValue(out)
	if verr != nil {
		return payload{}, verr
	}
	return a.blobs.wrap(builtinResult{Out: v, Failure: failureOf(err)})
}
