package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/temporal"
	"github.com/zclconf/go-cty/cty"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
)

const engineTemporal = "temporal"

// temporalFlags choose where apl run runs the walk: here, or as a
// workflow on a Temporal cluster's workers (apl worker).
type temporalFlags struct {
	Engine          string `enum:"local,temporal" default:"local" help:"Where the run's steps run: local (this process) or temporal (the workers of a Temporal cluster; see apl worker)."`
	TemporalAddress string `name:"temporal-address" placeholder:"HOST:PORT" help:"The Temporal frontend for --engine temporal."`
	TaskQueue       string `name:"task-queue" placeholder:"QUEUE" default:"apl" help:"The task queue apl worker serves (--engine temporal)."`
	Namespace       string `name:"temporal-namespace" placeholder:"NS" default:"default" help:"The Temporal namespace (--engine temporal)."`
}

// dialTemporal connects to the cluster, logging only warnings, to stderr.
func dialTemporal(f temporalFlags) (client.Client, error) {
	if f.TemporalAddress == "" {
		return nil, exitWith(exitUsage, errors.New("--engine temporal needs --temporal-address HOST:PORT"))
	}
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	c, err := client.Dial(client.Options{HostPort: f.TemporalAddress, Namespace: f.Namespace, Logger: logger})
	if err != nil {
		return nil, exitWith(exitUsage, fmt.Errorf("temporal %s: %w", f.TemporalAddress, err))
	}
	return c, nil
}

// runTemporal runs the playbook as a workflow and reports as a local run
// does. The workers run the commands and agents, in their own project
// directories; the run keeps no directory here.
func (c *runCmd) runTemporal(e *env, inputs map[string]cty.Value, agentCmd []string) error {
	opts := c.runOptions
	if opts.Record != "" || opts.Replay != "" {
		return exitWith(exitUsage, errors.New("--record and --replay do not go with --engine temporal"))
	}
	cl, err := dialTemporal(opts.temporalFlags)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ropts := interp.Options{RunID: opts.RunID, Inputs: inputs, Mode: opts.Mode, AgentCommand: agentCmd}
	res, _, err := temporal.Run(ctx, cl, opts.TaskQueue, c.pb, c.Playbook, ropts)
	if err != nil {
		if ctx.Err() != nil {
			return exitWith(exitInterrupted, fmt.Errorf("stopped waiting; the run goes on on the cluster: %w", err))
		}
		return exitWith(exitInternal, err)
	}
	res.Dir = "temporal workflow " + res.RunID
	return report(e, c.pb, res, nil, opts.JSON)
}

// workerCmd serves runs started with apl run --engine temporal.
type workerCmd struct {
	TemporalAddress string `name:"temporal-address" required:"" placeholder:"HOST:PORT" help:"The Temporal frontend."`
	TaskQueue       string `name:"task-queue" placeholder:"QUEUE" default:"apl" help:"The task queue to serve."`
	Namespace       string `name:"temporal-namespace" placeholder:"NS" default:"default" help:"The Temporal namespace."`
	Workdir         string `placeholder:"DIR" help:"Project root where this worker runs commands and agents (default: the current directory)."`
	BlobDir         string `name:"blob-dir" placeholder:"DIR" help:"The blob store the workers share, for step results too large for the history (default: WORKDIR/.apl/blobs)."`
	MaxSteps        int    `name:"max-steps" placeholder:"N" help:"At most N steps (commands, agent calls, builtin calls) at once on this worker; the others wait for this or another worker (default: Temporal's, 1000)."`
}

func (c *workerCmd) Run(e *env) error {
	if c.MaxSteps < 0 {
		return exitWith(exitUsage, fmt.Errorf("--max-steps %d: want a number of steps, 1 or more", c.MaxSteps))
	}
	cl, err := dialTemporal(temporalFlags{TemporalAddress: c.TemporalAddress, Namespace: c.Namespace})
	if err != nil {
		return err
	}
	defer cl.Close()
	w, err := temporal.NewWorker(cl, c.TaskQueue, temporal.Config{Loader: e.loader, Workdir: c.Workdir, BlobDir: c.BlobDir},
		worker.Options{MaxConcurrentActivityExecutionSize: c.MaxSteps})
	if err != nil {
		return exitWith(exitUsage, err)
	}
	fmt.Fprintf(e.stderr, "apl worker: serving task queue %s at %s\n", c.TaskQueue, c.TemporalAddress)
	if err := w.Run(worker.InterruptCh()); err != nil {
		return exitWith(exitInternal, err)
	}
	return nil
}
