package interp

import "fmt"

// An outcome is what running one step came to, as the walk of its frame
// applies it. Steps never write the run's or the item's status
// themselves: they return an outcome, and one loop per frame (walkMain,
// walkEnding, walkItem) applies it; for an item, the scheduler
// applies the item's final outcome to the run. The set is closed.
type outcome struct {
	kind outcomeKind
	// next is, for outNext, the step to run next ("" ends the frame
	// well); for outFail and outTrip, the step that resume goes on from
	// ("" when the frame decided to stop: nothing to resume).
	next string
	// status is the frame's status for outFinish.
	status string
	// recommendation and reason say why a frame failed or finished.
	recommendation string
	reason         string
	// errorKind classifies the failure of an outFail or outTrip (one of
	// agent.Kinds).
	errorKind string
	// waiting is the decision an outWait needs.
	waiting *Waiting
	// err is why apl itself cannot go on (outAbort): the state could not
	// be written, or names a step the playbook lacks.
	err error
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

func abort(err error) outcome { return outcome{kind: outAbort, err: err} }

var interrupted = outcome{kind: outInterrupt}

// stops reports whether the outcome stops the whole run, not only the
// frame: the run waits, was interrupted, tripped a cap, or cannot go on.
func (o outcome) stops() bool {
	switch o.kind {
	case outTrip, outWait, outInterrupt, outAbort:
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
