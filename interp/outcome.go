package interp

import (
	"errors"
	"fmt"

	"github.com/zclconf/go-cty/cty"
)

// An outcome is what running a step, or a part of it (its action, its
// gate), came to. It is the one result shape of the walk: an action
// returns one, the step turns its action's and its gate's into its own,
// and one loop (walkFrame) applies a step's outcome to its frame; for an
// item, the scheduler applies the item's final outcome to the run. Steps
// never write the run's or the item's status themselves. The set of kinds
// is closed, and a trip (a cap, the circuit breaker) arrives only as an
// outTrip.
type outcome struct {
	kind outcomeKind
	// next is, for outNext, the step to run next ("" ends the frame
	// well); for outFail and outTrip, the step that resume goes on from
	// ("" when the frame decided to stop: nothing to resume); for
	// outRequeue, the step the item restarts at.
	next string
	// out is the output an action produced, kept in the step's record
	// even when the action failed or tripped.
	out cty.Value
	// status is the frame's status for outFinish.
	status string
	// recommendation and reason say why a frame failed or finished. A
	// step sets them; an action's or a gate's failure that the step has
	// yet to record and locate has err instead.
	recommendation string
	reason         string
	// errorKind classifies the failure of an outFail or outTrip (one of
	// agent.Kinds).
	errorKind string
	// waiting is the decision an outWait needs.
	waiting *Waiting
	// err is, for outFail, the error an action or a gate met, before its
	// step records and locates it (failed); for outAbort, why apl itself
	// cannot go on: the state could not be written, or names a step the
	// playbook lacks.
	err error
	// trip is the cap or the circuit breaker of an outTrip.
	trip *trip
}

type outcomeKind uint8

const (
	// outNext goes on to the next step, or ends the frame well.
	outNext outcomeKind = iota
	// outFinish ends the frame with a status of the playbook's own (a
	// gate's finish).
	outFinish
	// outFail ends the frame failed: a step failed, or a gate said fail.
	outFail
	// outTrip stops the whole run: a cap or the circuit breaker tripped.
	outTrip
	// outWait pauses the run for a person's decision.
	outWait
	// outInterrupt stops the run because its context was cancelled.
	outInterrupt
	// outAbort stops the run because apl cannot go on.
	outAbort
	// outRequeue ends an item's turn: it gives up its slot and goes to
	// the back of the ready queue, to restart at next.
	outRequeue
)

func (k outcomeKind) String() string {
	switch k {
	case outNext:
		return "next"
	case outFinish:
		return "finish"
	case outFail:
		return "fail"
	case outTrip:
		return "trip"
	case outWait:
		return "wait"
	case outInterrupt:
		return "interrupt"
	case outAbort:
		return "abort"
	case outRequeue:
		return "requeue"
	}
	return fmt.Sprintf("outcomeKind(%d)", uint8(k))
}

func goTo(next string) outcome { return outcome{kind: outNext, next: next} }

// done is an action that produced out, or failed with err.
func done(out cty.Value, err error) outcome {
	if err != nil {
		return outcome{kind: outFail, out: out, err: err}
	}
	return outcome{kind: outNext, out: out}
}

// failWith is an action or a gate failing with err.
func failWith(err error) outcome { return outcome{kind: outFail, err: err} }

// tripWith is t tripping in an action or a gate; the step locates it
// (tripped).
func tripWith(t *trip) outcome { return outcome{kind: outTrip, trip: t} }

// waitFor pauses the run for w.
func waitFor(w *Waiting) outcome { return outcome{kind: outWait, waiting: w} }

// withOut is o keeping the output out.
func (o outcome) withOut(out cty.Value) outcome {
	o.out = out
	return o
}

// failure is what went wrong, as an error for a trace; nil for an
// outcome that goes on.
func (o outcome) failure() error {
	switch {
	case o.kind == outNext:
		return nil
	case o.err != nil:
		return o.err
	case o.trip != nil:
		return errors.New(o.trip.msg)
	}
	return fmt.Errorf("%s: %s", o.kind, o.reason)
}

func abort(err error) outcome { return outcome{kind: outAbort, err: err} }

var interrupted = outcome{kind: outInterrupt}

// stopsWalk reports whether the outcome stops the walk rather than ends
// a frame: the run waits or was interrupted, apl cannot go on, or an
// item gives up its turn.
func (o outcome) stopsWalk() bool {
	switch o.kind {
	case outWait, outInterrupt, outAbort, outRequeue:
		return true
	}
	return false
}

// trip is a run-wide cap or the circuit breaker tripping: it stops the
// run even where a step's failure would not (continue_on_error, inside a
// for_each item).
type trip struct {
	msg  string
	kind string // one of agent.Kinds: budget for caps
}

func (t *trip) String() string { return t.msg }
