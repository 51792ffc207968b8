package main

// The flags of the Temporal engine and of apl worker are parsed in every
// build, so that a build without Temporal (-tags notemporal) reads the
// same command lines and refuses only what needs a cluster.

const engineTemporal = "temporal"

// temporalFlags choose where apl run runs the walk: here, or as a
// workflow on a Temporal cluster's workers (apl worker).
type temporalFlags struct {
	Engine          string `enum:"local,temporal" default:"local" help:"Where the run's steps run: local (this process) or temporal (the workers of a Temporal cluster; see apl worker). apl resume RUN --engine temporal follows such a run and signals its --answer."`
	TemporalAddress string `name:"temporal-address" placeholder:"HOST:PORT" help:"The Temporal frontend for --engine temporal."`
	TaskQueue       string `name:"task-queue" placeholder:"QUEUE" default:"apl" help:"The task queue apl worker serves (--engine temporal)."`
	Namespace       string `name:"temporal-namespace" placeholder:"NS" default:"default" help:"The Temporal namespace (--engine temporal)."`
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
