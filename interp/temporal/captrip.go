package temporal

import (
	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/workflow"
)

// A sub-run's workflow is held to its parent's caps: by reserving from
// the parent's budget (budgetrelay.go), or, in a workflow started before
// that, by a copy of what its parent left it (RunInput.Caps). When it
// trips one of those caps it signals its parent (SignalCapTrip) and waits
// until the parent has the signal before the step that tripped ends (a
// parent that lends its budget closed it already); the parent's walk reads the
// signal whenever it decides whether anything may start (interp.CapRelay),
// so it starts no step and no item after the trip, as a local run whose
// sub-run spends from its own budget. Without it the parent learned of the
// trip from the sub-run's result, and started what came in between.
const (
	// SignalCapTrip tells a run's workflow that a sub-run tripped a cap
	// of its (a string: the trip, as interp.Result.CapTrip says it).
	SignalCapTrip = "apl.cap-trip"
	// tripVersion marks the workflows that signal their parent a trip: a
	// workflow started before replays without.
	tripVersion = "apl.trip"
)

var _ interp.CapRelay = (*runEngine)(nil)

// TripAbove signals the parent's workflow, if the run is a sub-run, and
// waits until the signal is in the parent's history. A parent that
// ended takes none: there is nothing left to stop.
func (e *runEngine) TripAbove(msg string) { e.signalParent(tripVersion, SignalCapTrip, msg) }

// signalParent signals the parent's workflow, if the run is a sub-run
// and its workflow began with version (one that began before replays
// without), and waits until the signal is in the parent's history. A
// parent that ended takes none.
func (e *runEngine) signalParent(version, signal string, arg any) {
	c, back := e.hold()
	defer back()
	parent := workflow.GetInfo(c).ParentWorkflowExecution
	if parent == nil || workflow.GetVersion(c, version, workflow.DefaultVersion, 1) != 1 {
		return
	}
	_ = e.get(c, workflow.SignalExternalWorkflow(c, parent.ID, "", signal, arg), nil)
}

// TrippedBelow is the first trip a sub-run signalled, taking the signals
// that came.
func (e *runEngine) TrippedBelow() string {
	ch := workflow.GetSignalChannel(e.cur, SignalCapTrip)
	var msg string
	for ch.ReceiveAsync(&msg) {
		if e.tripBelow == "" {
			e.tripBelow = msg
		}
	}
	return e.tripBelow
}
