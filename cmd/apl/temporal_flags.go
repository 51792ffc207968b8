package main

// The flags of the Temporal engine and of apl worker are parsed in every
// build, so that a build without Temporal (-tags notemporal) reads the
// same command lines and refuses only what needs a cluster.

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

const engineTemporal = "temporal"

// temporalFlags choose where apl run runs the walk: here, or as a
// workflow on a Temporal cluster's workers (apl worker).
type temporalFlags struct {
	Engine          string `enum:"local,temporal" default:"local" help:"Where the run's steps run: local (this process) or temporal (the workers of a Temporal cluster; see apl worker). apl resume RUN --engine temporal follows such a run and signals its --answer."`
	TemporalAddress string `name:"temporal-address" placeholder:"HOST:PORT" default:"localhost:7233" env:"APL_TEMPORAL_ADDRESS" help:"The Temporal frontend for --engine temporal (default: ${default})."`
	TaskQueue       string `name:"task-queue" placeholder:"QUEUE" default:"apl" env:"APL_TASK_QUEUE" help:"The task queue apl worker serves (--engine temporal; default: ${default})."`
	Namespace       string `name:"temporal-namespace" placeholder:"NS" default:"default" env:"APL_TEMPORAL_NAMESPACE" help:"The Temporal namespace (--engine temporal; default: ${default})."`
}

// temporalRunFlags are apl run's flags for a run on Temporal.
type temporalRunFlags struct {
	SendEnv []string `name:"env" sep:"none" placeholder:"NAME" help:"With --engine temporal, send this variable's value here with the run (NAME, or NAME=VALUE): its commands and agents get it on top of their worker's environment. Repeatable. The values are kept in the workflow's history: keep credentials in the workers' environment. A local run has this environment already: there NAME=VALUE sets the variable for the run, and NAME changes nothing."`
}

// workerCmd serves runs started with apl run --engine temporal.
type workerCmd struct {
	TemporalAddress string        `name:"temporal-address" placeholder:"HOST:PORT" default:"localhost:7233" env:"APL_TEMPORAL_ADDRESS" help:"The Temporal frontend (default: ${default})."`
	TaskQueue       string        `name:"task-queue" placeholder:"QUEUE" default:"apl" env:"APL_TASK_QUEUE" help:"The task queue to serve (default: ${default})."`
	Namespace       string        `name:"temporal-namespace" placeholder:"NS" default:"default" env:"APL_TEMPORAL_NAMESPACE" help:"The Temporal namespace (default: ${default})."`
	Workdir         string        `placeholder:"DIR" help:"Project root where this worker runs commands and agents: the checkout of the runs it is home to (default: the current directory)."`
	Name            string        `placeholder:"NAME" help:"This worker's name. A run works in the checkout of the worker that took it, and waits for a worker of that name when that one is gone: restart it with the same name (default: HOST:WORKDIR)."`
	Guard           bool          `hidden:"" help:"Be a worker's guard: stop the process groups named on stdin, and the processes marked as the worker's, when it closes."`
	StopTimeout     time.Duration `name:"stop-timeout" placeholder:"DURATION" default:"30s" help:"On SIGTERM or Ctrl-C, how long the steps in flight may take to finish before they are stopped and handed back, to run again when this worker serves again (default: ${default})."`
	BlobDir         string        `name:"blob-dir" placeholder:"DIR" help:"The blob store the workers share, for step results too large for the history (default: WORKDIR/.apl/blobs)."`
	MaxSteps        int           `name:"max-steps" placeholder:"N" help:"At most N steps (commands, agent calls, builtin calls) at once on this worker; the others wait for this or another worker (default: Temporal's, 1000)."`
	ContinueAfter   int           `name:"continue-after" placeholder:"N" default:"10000" env:"APL_CONTINUE_AFTER" help:"A run's workflow that this worker walks continues as new once its history holds N events: it lets the steps under way land, and the next execution resumes the run from its state, which goes through --blob-dir (share it between the workers). Temporal ends a workflow at 51,200 events. Lower it to see a run continue; 0: never (default: ${default})."`
}

// cancelCmd stops a run on Temporal.
type cancelCmd struct {
	RunRef    string `arg:"" name:"run" help:"The run's id, as apl run printed it."`
	Terminate bool   `help:"End the workflow at once, without letting the walk stop: nothing more runs and no result is kept. For a run whose workers are gone for good."`
	Reason    string `placeholder:"TEXT" default:"cancelled with apl cancel" help:"Why, for the workflow's history."`

	temporalFlags `embed:""`
}

// where names the cluster and namespace f points at, for messages.
func (f temporalFlags) where() string {
	return fmt.Sprintf("Temporal at %s (namespace %s)", f.TemporalAddress, f.Namespace)
}

// hintTemporal adds to a local run that is not there whether it is a
// run on Temporal, when a Temporal cluster is configured
// (APL_TEMPORAL_ADDRESS or --temporal-address): it asks the cluster.
func hintTemporal(err error, ref string, f temporalFlags) error {
	var ee *exitError
	if ref == "" || ref == "latest" || !errors.As(err, &ee) || ee.err == nil || !strings.HasPrefix(ee.err.Error(), "no run ") {
		return err
	}
	if os.Getenv("APL_TEMPORAL_ADDRESS") == "" && f.TemporalAddress == defaultTemporalAddress {
		return err
	}
	where := f.where()
	status, lerr := lookupTemporal(f, ref)
	switch {
	case lerr != nil:
		return exitWith(ee.code, fmt.Errorf("%w; %s did not say whether it has it: %v", ee.err, where, lerr))
	case status == "":
		return exitWith(ee.code, fmt.Errorf("%w, nor on %s", ee.err, where))
	}
	return exitWith(ee.code, fmt.Errorf("%w; run %s is on %s (its workflow is %s): add --engine temporal", ee.err, ref, where, status))
}

const defaultTemporalAddress = "localhost:7233"
