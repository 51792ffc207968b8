package temporal

import (
	"context"
	"maps"
	"slices"

	"go.temporal.io/sdk/workflow"
)

// A run is cancelled (apl cancel --engine temporal) as a local run is
// interrupted: the steps under way are stopped (their activities and
// sub-runs' child workflows are cancelled, and a worker stops a cancelled
// step's commands), the walk stops with status interrupted, and neither
// on_failure nor finally steps run. The workflow completes with that
// result, so a client following the run reports it as a local interrupt
// (exit 130).
//
// Workflow cancellation does not reach the walk directly: the walk's
// workflow context is disconnected from the workflow's, and a coroutine
// turns the cancellation into the walk's Go context's, then cancels what
// is under way. So the walk learns of it through its context, as a local
// walk does, and a step's failure is never mistaken for it.

// interruptible is the workflow context the walk runs in, and the
// function that makes the walk's Go context, cancelled when the workflow
// is.
func interruptible(ctx workflow.Context) (workflow.Context, func(*engine) context.Context) {
	wctx, _ := workflow.NewDisconnectedContext(ctx)
	return wctx, func(e *engine) context.Context {
		goctx, cancel := context.WithCancel(context.Background())
		e.interrupt = cancel
		workflow.Go(ctx, func(c workflow.Context) {
			c.Done().Receive(c, nil)
			cancel()
			// In the order they started: the same on every replay.
			for _, k := range slices.Sorted(maps.Keys(e.stops)) {
				e.stops[k]()
			}
		})
		return goctx
	}
}

// stoppable is a context for an activity or child workflow that the
// run's cancellation cancels; done forgets it.
func (e *engine) stoppable(c workflow.Context) (workflow.Context, func()) {
	cc, cancel := workflow.WithCancel(c)
	if e.stops == nil {
		e.stops = map[int]workflow.CancelFunc{}
	}
	e.nstop++
	k := e.nstop
	e.stops[k] = cancel
	return cc, func() { delete(e.stops, k) }
}
