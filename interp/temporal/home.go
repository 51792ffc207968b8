package temporal

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// A run keeps to one checkout: its steps commit, revert, write logs and
// documents in one working tree, and a protocol that edits a repository
// needs every step to see the others' files. So a run is taken by the
// first worker free on the run's task queue (the Home activity, on the
// shared queue), and every step of the run and of its sub-runs goes to
// that worker's own queue (HomeQueue), which only it serves. That
// worker's checkout is the run's home.
//
// When the home worker dies, the step it was running stops sending
// heartbeats; once the heartbeat timeout passes the step is scheduled
// again, on the home queue, and waits there until a worker of the same
// name serves it again (apl worker restarted in the same checkout). The
// run does not move: its files are in that checkout. A client following
// the run says that it waits, and for which worker (Stalled).

// Home is the worker whose checkout a run works in.
type Home struct {
	// Worker is the worker's name (apl worker --name; by default
	// HOST:WORKDIR), Queue the task queue only it serves, Workdir its
	// checkout.
	Worker  string `json:"worker"`
	Queue   string `json:"queue"`
	Workdir string `json:"workdir"`
}

func (h Home) String() string {
	return fmt.Sprintf("worker %s, in %s", h.Worker, h.Workdir)
}

// HomeQueue is the task queue that the worker named name serves besides
// queue, for the runs whose home it is.
func HomeQueue(queue, name string) string { return queue + "@" + name }

// DefaultWorkerName is a worker's name unless it is given one: its host
// and its checkout, so that a worker restarted in the same checkout is
// the same worker, and two checkouts on one host are two workers.
func DefaultWorkerName(workdir string) string {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	return host + ":" + workdir
}

// Home is the activity that makes this worker a run's home.
func (a *activities) Home(ctx context.Context) (Home, error) {
	return a.home, nil
}

// claimHome makes the first worker free on the run's queue its home.
func claimHome(ctx workflow.Context) (Home, error) {
	opts := workflow.ActivityOptions{
		// No worker may serve the queue yet: the run waits for one (the
		// client says so).
		ScheduleToCloseTimeout: 365 * 24 * time.Hour,
		StartToCloseTimeout:    time.Minute,
		RetryPolicy:            &temporal.RetryPolicy{InitialInterval: time.Second},
	}
	var h Home
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, opts), activityPrefix+"Home").Get(ctx, &h)
	return h, err
}
