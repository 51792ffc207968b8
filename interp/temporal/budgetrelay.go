package temporal

import (
	"fmt"
	"maps"
	"slices"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/workflow"
)

// A sub-run's workflow reserves from its parent's budget as its calls go
// (interp.BudgetRelay), as a local sub-run's calls do from the run that
// runs it, instead of spending from a copy of what the parent left it
// when it started: sub-runs running at once (a for_each of sub-playbooks)
// share what is left of a cap, and once one of them trips it, the others
// are refused at their next call.
//
// Before an admitted call starts, the sub-run signals its parent a
// reservation (SignalReserve: an id and what the call may spend) and
// waits for the answer (SignalReserved: granted, or the trip that
// refused it). The parent admits it against its own budget as a call of
// its own, in a task of its hub of its own, which waits there while the
// call does not fit and others are in flight; a parent that is a sub-run
// itself reserves from its own parent first, in the same way. After the
// call, the sub-run signals what it spent, and waits until the parent
// has the signal, so that a call's spend reaches the parent before the
// sub-run's end does. The task that waits for the sub-run's end serves
// its signals, and when the sub-run ends (or fails, is cancelled or
// times out), lets go of the reservations it still held.
//
// A parent continues as new only when none of its actions and sub-runs
// is under way (continue.go), so no reservation of a sub-run's crosses
// a continuation; a sub-run continues as new with none of its calls in
// flight, and names its reservations by its execution.
//
// relayVersion marks the workflows that serve their sub-runs' calls so:
// such a parent tells each child to reserve from it (RunInput.Relay). A
// workflow started before, and its children, replay with copies.
const (
	// SignalReserve carries a sub-run's reservation, or what its call
	// spent, to its parent (relayMsg).
	SignalReserve = "apl.reserve"
	// SignalReserved answers a reservation (relayReply).
	SignalReserved = "apl.reserved"
	relayVersion   = "apl.budget-relay"
)

var _ interp.BudgetRelay = (*runEngine)(nil)

// relayMsg is a sub-run's signal to its parent: a reservation to admit,
// or what the call admitted as ID spent.
type relayMsg struct {
	// Child is the sub-run's workflow ID.
	Child   string
	ID      string
	Reserve *interp.CallEstimate `json:",omitempty"`
	Settle  *interp.CallSpend    `json:",omitempty"`
	// Retry is a retry to count (what was retried).
	Retry *string `json:",omitempty"`
}

// relayReply answers reservation ID: granted, or Denied.
type relayReply struct {
	ID     string
	Denied *interp.Denial `json:",omitempty"`
}

// lending is a parent's side: the sub-runs it serves, by workflow ID.
type lending struct {
	on   bool
	kids map[string]*kid
	in   workflow.ReceiveChannel
}

// kid is a sub-run the parent serves: its budget's lender, the signals
// taken for it and not yet served, and its calls in flight.
type kid struct {
	// id is its workflow ID.
	id    string
	ld    *interp.Lender
	queue []relayMsg
	loans map[string]*interp.Loan
	done  bool
}

// relay sets the run's workflow up to serve its sub-runs' reservations,
// and, if its parent serves its own, to reserve from the parent.
func (e *runEngine) relay(ctx workflow.Context) {
	if e.hub == nil {
		return
	}
	if workflow.GetVersion(ctx, relayVersion, workflow.DefaultVersion, 1) == 1 {
		e.lend = lending{on: true, kids: map[string]*kid{}, in: workflow.GetSignalChannel(ctx, SignalReserve)}
	}
	info := workflow.GetInfo(ctx)
	if e.in.Relay && info.ParentWorkflowExecution != nil {
		name := ""
		if e.in.Caps != nil {
			name = e.in.Caps.Playbook
		}
		e.up = &aboveBudget{e: e, parent: info.ParentWorkflowExecution.ID, self: info.WorkflowExecution.ID,
			run: info.WorkflowExecution.RunID, name: name, replies: map[string]relayReply{},
			in: workflow.GetSignalChannel(ctx, SignalReserved)}
	}
}

// Lends implements interp.BudgetRelay.
func (e *runEngine) Lends() bool { return e.lend.on }

// Above implements interp.BudgetRelay.
func (e *runEngine) Above() interp.RemoteBudget {
	if e.up == nil {
		return nil
	}
	return e.up
}

// serving registers the sub-run of workflow id, whose reservations ld
// serves, before it starts; nil if this run lends nothing.
func (e *runEngine) serving(id string, ld *interp.Lender) *kid {
	if !e.lend.on || ld == nil {
		return nil
	}
	k := &kid{id: id, ld: ld, loans: map[string]*interp.Loan{}}
	e.lend.kids[id] = k
	return k
}

// signalled: a signal of sub-run k's (or of another's, to hand it) waits
// to be served; false for nil.
func (e *runEngine) signalled(k *kid) bool {
	return k != nil && (len(k.queue) > 0 || e.lend.in.Len() > 0)
}

// serveKid serves the signals sub-run k sent so far; nil: none.
func (e *runEngine) serveKid(c workflow.Context, k *kid) {
	if k == nil {
		return
	}
	e.takeSignals()
	for len(k.queue) > 0 {
		m := k.queue[0]
		k.queue = k.queue[1:]
		e.serve(c, k, m)
	}
}

// letGo ends the service of sub-run k, which ended: the reservations it
// still holds are let go. Nil: none.
func (e *runEngine) letGo(k *kid) {
	if k == nil {
		return
	}
	k.done = true
	delete(e.lend.kids, k.id)
	for _, rid := range slices.Sorted(maps.Keys(k.loans)) {
		k.loans[rid].Release()
	}
	k.loans = nil
}

// takeSignals hands each sub-run the signals it sent; those of a
// sub-run that ended are dropped (its reservations were let go).
func (e *runEngine) takeSignals() {
	for {
		var m relayMsg
		if !e.lend.in.ReceiveAsync(&m) {
			return
		}
		if k := e.lend.kids[m.Child]; k != nil {
			k.queue = append(k.queue, m)
		}
	}
}

// serve serves signal m of sub-run id: what a call spent is counted at
// once; a reservation is admitted in a task of its own, which may wait
// for room while the sub-run's other signals are served.
func (e *runEngine) serve(c workflow.Context, k *kid, m relayMsg) {
	id := k.id
	switch {
	case m.Settle != nil:
		var d *interp.Denial
		if ln := k.loans[m.ID]; ln != nil {
			delete(k.loans, m.ID)
			d = ln.Settle(m.Settle.Tokens, m.Settle.CostUSD)
		}
		e.answer(c, id, relayReply{ID: settledID(m.ID), Denied: d})
	case m.Retry != nil:
		e.answer(c, id, relayReply{ID: m.ID, Denied: k.ld.Retry(*m.Retry)})
	case m.Reserve != nil:
		est := *m.Reserve
		e.hub.spawn(func() {
			c, back := e.hold()
			defer back()
			ln, d := k.ld.Reserve(est)
			if k.done {
				if ln != nil {
					ln.Release()
				}
				return
			}
			if ln != nil {
				k.loans[m.ID] = ln
			}
			// A sub-run that ended meanwhile takes no signal.
			e.answer(c, id, relayReply{ID: m.ID, Denied: d})
		})
	}
}

// answer signals sub-run id the answer r, and waits until it is in the
// sub-run's history; a sub-run that ended takes none.
func (e *runEngine) answer(c workflow.Context, id string, r relayReply) {
	_ = e.get(c, workflow.SignalExternalWorkflow(c, id, "", SignalReserved, r), nil)
}

// aboveBudget is a sub-run's way to its parent's budget
// (interp.RemoteBudget).
type aboveBudget struct {
	e            *runEngine
	parent, self string
	// run is this execution's run ID: a reservation's id names it, so
	// that the ids of an execution that continued as new are new.
	run string
	// name is the parent's playbook, for a trip not from the parent.
	name    string
	n       int
	replies map[string]relayReply
	in      workflow.ReceiveChannel
}

// Reserve signals the parent the reservation and waits for its answer.
func (a *aboveBudget) Reserve(est interp.CallEstimate) (string, *interp.Denial) {
	c, back := a.e.hold()
	defer back()
	id := a.next()
	if err := a.send(c, relayMsg{ID: id, Reserve: &est}); err != nil {
		return "", &interp.Denial{Playbook: a.name, Msg: "the run above could not be asked for room for the call: " + err.Error()}
	}
	return id, a.reply(c, id)
}

// next is the id of this execution's next reservation or retry.
func (a *aboveBudget) next() string {
	a.n++
	return fmt.Sprintf("%s/%d", a.run, a.n)
}

// send signals the parent m, from this sub-run, and waits until it is in
// the parent's history.
func (a *aboveBudget) send(c workflow.Context, m relayMsg) error {
	m.Child = a.self
	return a.e.get(c, workflow.SignalExternalWorkflow(c, a.parent, "", SignalReserve, m), nil)
}

// reply waits for the parent's answer to the signal of id.
func (a *aboveBudget) reply(c workflow.Context, id string) *interp.Denial {
	for {
		for {
			var r relayReply
			if !a.in.ReceiveAsync(&r) {
				break
			}
			a.replies[r.ID] = r
		}
		if r, ok := a.replies[id]; ok {
			delete(a.replies, id)
			return r.Denied
		}
		// Another task waiting for its own answer may take this one
		// from the channel into replies.
		a.e.await(c, func() bool {
			_, ok := a.replies[id]
			return ok || a.in.Len() > 0
		})
	}
}

// Settle signals the parent what the call spent and waits for its
// answer: the trip of a cap that is closed there now, if one is. A
// sub-run's calls so reach its parent's budget before its end does, and
// it stops at its next step once its parent's cap is crossed.
func (a *aboveBudget) Settle(id string, tokens int, cost float64) *interp.Denial {
	c, back := a.e.hold()
	defer back()
	if err := a.send(c, relayMsg{ID: id, Settle: &interp.CallSpend{Tokens: tokens, CostUSD: cost}}); err != nil {
		return nil
	}
	return a.reply(c, settledID(id))
}

// Retry signals the parent a retry to count, and waits for its answer.
func (a *aboveBudget) Retry(what string) *interp.Denial {
	c, back := a.e.hold()
	defer back()
	id := a.next()
	if err := a.send(c, relayMsg{ID: id, Retry: &what}); err != nil {
		return &interp.Denial{Playbook: a.name, Msg: "the run above could not be asked to count the retry: " + err.Error()}
	}
	return a.reply(c, id)
}

// settledID is the id of the answer to a settle of reservation id.
func settledID(id string) string { return id + "/settled" }
