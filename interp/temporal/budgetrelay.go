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
// call, the sub-run signals what it spent, and (in a workflow started
// before relaySettleVersion, or for a call that spent more than its
// reservation allows) waits for the parent's answer. The task that waits for the sub-run's end serves
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
//
// Each signal costs the workflow that takes it an event and a workflow
// task (three events), and the workflow that sends it two events and a
// workflow task: a round trip, a signal and its answer, is 9 events on
// each side, and each call was two (18 events in the parent's history).
// While a sub-run runs its parent cannot continue as new, so every call
// of the sub-run's grows the parent's history, which Temporal ends at
// 51,200 events, with nothing run after: about 2,800 calls. Two things
// bound that (relaySettleVersion):
//
//   - Most calls are one round trip. The parent's answer to a
//     reservation says what the call may spend without its spend
//     crossing a cap by itself (interp.Loan.Within: what it reserved of
//     each capped figure, since a call is admitted only while its
//     reservation fits). A call that spent no more than that does not
//     wait for the parent to count it: its settle goes with the
//     sub-run's next signal to the parent (its next reservation or
//     retry) when one follows in the same workflow task, as when one
//     call follows another (9 events a call), else alone, unanswered,
//     once the task's walk waits (13). The parent counts it when the
//     signal comes, as before, so a sibling's next call is refused once
//     a cap closed. When a sub-run's settle, call or retry closes a cap
//     (tell), the parent tells every sub-run it serves, once, unasked,
//     before it answers the one that asked: each stops at its next step
//     after that word (Closed), and one whose call was under way before
//     the step after it, as a sibling's settle that was waited for did.
//     A call that spent more, or one that found out what a call of its
//     step spends (a probe), waits for the parent's answer as before, so
//     a sub-run whose call crossed a cap stops before its next step, as
//     locally. A sub-run waits until its parent has every signal it sent
//     before it ends or continues as new (flush): a call's spend reaches
//     the parent before the sub-run's end does. Cutting the reservation's
//     round trip too would mean granting a sub-run room ahead of its
//     calls, which siblings could then not use: a rule for what each may
//     spend that a local run does not have.
//   - A guard: once the parent's history holds Config.RelayLimit events,
//     it refuses its sub-runs' calls and retries, each refusal naming the
//     sub-run and the figure. The sub-run stops as at a cap of its
//     parent's (its finally and on_failure steps run, their agent calls
//     refused), and tells the parent, which stops too, rather than have
//     Temporal end the run with nothing run after. At 9 to 13 events a
//     call, the default limit lets one sub-run make some 3,000 to 4,400
//     calls while nothing lets the parent continue as new.
const (
	// SignalReserve carries a sub-run's reservation, or what its call
	// spent, to its parent (relayMsg).
	SignalReserve = "apl.reserve"
	// SignalReserved answers a reservation (relayReply).
	SignalReserved     = "apl.reserved"
	relayVersion       = "apl.budget-relay"
	relaySettleVersion = "apl.relay-settle"
)

// defaultRelayLimit is Config.RelayLimit's default: it leaves 11,200
// events under Temporal's limit for the refusals of sub-runs under way
// at once, their ends, and the run's finally and on_failure steps.
const defaultRelayLimit = 40_000

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
	// Settled are what calls spent that the sub-run did not wait to tell
	// (relaySettleVersion): the parent counts them first.
	Settled []settled `json:",omitempty"`
}

// settled is what the call admitted as ID spent.
type settled struct {
	ID    string
	Spend interp.CallSpend
}

// relayReply answers reservation ID: granted, or Denied. With no ID, it
// tells a trip unasked: a settle not waited for closed a cap.
type relayReply struct {
	ID     string
	Denied *interp.Denial `json:",omitempty"`
	// Within is what a granted call may spend without its settle being
	// waited for (interp.Loan.Within; relaySettleVersion).
	Within *interp.CallSpend `json:",omitempty"`
}

// lending is a parent's side: the sub-runs it serves, by workflow ID.
type lending struct {
	on   bool
	kids map[string]*kid
	in   workflow.ReceiveChannel
	// set: the workflow's version of the service (relaySettleVersion)
	// is known; later: it is that version, and limit is its guard, 0:
	// none.
	set, later bool
	limit      int
}

// kid is a sub-run the parent serves: its budget's lender, the signals
// taken for it and not yet served, and its calls in flight.
type kid struct {
	// id is its workflow ID; step, the step that runs it.
	id, step string
	ld       *interp.Lender
	queue    []relayMsg
	loans    map[string]*interp.Loan
	done     bool
	// told: a trip was told it unasked.
	told bool
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
		if workflow.GetVersion(ctx, relaySettleVersion, workflow.DefaultVersion, 1) == 1 {
			e.up.settleLater(ctx)
		}
	}
}

// lendingSet decides, before this run serves its first sub-run, whether
// it guards its history (relaySettleVersion), and with which limit: the
// worker's, kept in the history, so that a replay on a worker set
// otherwise takes the same path.
func (e *runEngine) lendingSet(c workflow.Context) {
	if e.lend.set {
		return
	}
	e.lend.set = true
	if workflow.GetVersion(c, relaySettleVersion, workflow.DefaultVersion, 1) != 1 {
		return
	}
	limit := max(e.relayLimit, 0)
	workflow.SideEffect(c, func(workflow.Context) any { return limit }).Get(&limit)
	e.lend.later, e.lend.limit = true, limit
}

// tooLong is the refusal of sub-run k's call or retry when the run's
// history holds n events, its guard's limit or more.
func (e *runEngine) tooLong(k *kid, n int) *interp.Denial {
	return &interp.Denial{Playbook: e.name, Msg: fmt.Sprintf(
		"the run's workflow history holds %d events (the worker's limit for it is %d; Temporal ends a workflow at 51,200), and it cannot continue as new while sub-run %s (step %s) runs: the sub-run's agent calls and retries are refused. Split its work over several sub-runs, or run it locally",
		n, e.lend.limit, k.id, k.step)}
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

// serving registers the sub-run of workflow id, run by step, whose
// reservations ld serves, before it starts; nil if this run lends
// nothing.
func (e *runEngine) serving(c workflow.Context, id, step string, ld *interp.Lender) *kid {
	if !e.lend.on || ld == nil {
		return nil
	}
	e.lendingSet(c)
	k := &kid{id: id, step: step, ld: ld, loans: map[string]*interp.Loan{}}
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
// for room while the sub-run's other signals are served. Settles the
// sub-run did not wait for are not answered; a call or retry, not at all
// once the history is too long (tooLong).
func (e *runEngine) serve(c workflow.Context, k *kid, m relayMsg) {
	id := k.id
	var closed *interp.Denial
	for _, s := range m.Settled {
		if ln := k.loans[s.ID]; ln != nil {
			delete(k.loans, s.ID)
			if d := ln.Settle(s.Spend.Tokens, s.Spend.CostUSD); d != nil {
				closed = d
			}
		}
	}
	if m.Reserve != nil || m.Retry != nil {
		if n := workflow.GetInfo(c).GetCurrentHistoryLength(); e.lend.limit > 0 && n >= e.lend.limit {
			e.answer(c, id, relayReply{ID: m.ID, Denied: e.tooLong(k, n)})
			return
		}
	}
	switch {
	case m.Settle != nil:
		d := closed
		if ln := k.loans[m.ID]; ln != nil {
			delete(k.loans, m.ID)
			d = ln.Settle(m.Settle.Tokens, m.Settle.CostUSD)
		}
		e.tell(c, k, d)
		e.answer(c, id, relayReply{ID: settledID(m.ID), Denied: d})
	case m.Retry != nil:
		d := k.ld.Retry(*m.Retry)
		e.tell(c, k, d)
		e.answer(c, id, relayReply{ID: m.ID, Denied: d})
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
			r := relayReply{ID: m.ID, Denied: d}
			if ln != nil {
				k.loans[m.ID] = ln
				if e.lend.later {
					w := ln.Within()
					r.Within = &w
				}
			}
			e.tell(c, k, d)
			// A sub-run that ended meanwhile takes no signal.
			e.answer(c, id, r)
		})
	default:
		e.tell(c, nil, closed)
	}
}

// tell signals every sub-run this run serves, and has not told yet,
// trip d, unasked, before k (which asked) is answered with it (nil k:
// none asked): a cap of this run's closed, and they stop at their next
// step, or, when a call of theirs is under way, before the step after
// it, rather than at their next call. Only since relaySettleVersion;
// nil d: nothing closed.
func (e *runEngine) tell(c workflow.Context, k *kid, d *interp.Denial) {
	if d == nil || !e.lend.later {
		return
	}
	var sent []workflow.Future
	for _, id := range slices.Sorted(maps.Keys(e.lend.kids)) {
		if o := e.lend.kids[id]; o != k && !o.told {
			o.told = true
			sent = append(sent, workflow.SignalExternalWorkflow(c, id, "", SignalReserved, relayReply{Denied: d}))
		}
	}
	if k != nil {
		k.told = true
	}
	// A sub-run that ended meanwhile takes none.
	for _, f := range sent {
		_ = e.get(c, f, nil)
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
	// later: a settle within what its reservation allows (within, by
	// id) is not waited for (relaySettleVersion); pending are those not
	// sent yet, sent the signals sent alone that the parent may not have
	// yet, and heard the first trip the parent told unasked.
	later   bool
	within  map[string]interp.CallSpend
	pending []settled
	sent    []workflow.Future
	heard   *interp.Denial
	// dc is the workflow's context, cut from its cancellation: a
	// cancelled sub-run still tells what its calls spent.
	dc workflow.Context
}

// settleLater makes the sub-run send its settles with its next signal to
// the parent, or, when none follows in the workflow task, alone at its
// end: a workflow coroutine of its own runs once the walk's tasks all
// wait, which they do only once a call's step has gone as far as it can
// in this task.
func (a *aboveBudget) settleLater(ctx workflow.Context) {
	a.later, a.within = true, map[string]interp.CallSpend{}
	a.dc, _ = workflow.NewDisconnectedContext(ctx)
	workflow.Go(a.dc, func(c workflow.Context) {
		for workflow.Await(c, func() bool { return len(a.pending) > 0 }) == nil {
			a.sendPending()
		}
	})
}

// sendPending signals the parent the settles not sent yet, and does not
// wait.
func (a *aboveBudget) sendPending() {
	if len(a.pending) == 0 {
		return
	}
	m := relayMsg{Child: a.self, Settled: a.pending}
	a.pending = nil
	a.sent = slices.DeleteFunc(a.sent, workflow.Future.IsReady)
	a.sent = append(a.sent, workflow.SignalExternalWorkflow(a.dc, a.parent, "", SignalReserve, m))
}

// flush sends the settles not sent yet, and waits until the parent has
// every signal the sub-run sent: before the sub-run ends or continues as
// new, so that the parent counts its calls before it sees its end.
func (e *runEngine) flush() {
	a := e.up
	if a == nil || !a.later {
		return
	}
	a.sendPending()
	workflow.Await(a.dc, func() bool { return !slices.ContainsFunc(a.sent, func(f workflow.Future) bool { return !f.IsReady() }) })
	a.sent = nil
}

// Reserve signals the parent the reservation and waits for its answer.
func (a *aboveBudget) Reserve(est interp.CallEstimate) (string, *interp.Denial) {
	c, back := a.e.hold()
	defer back()
	id := a.next()
	if err := a.send(c, relayMsg{ID: id, Reserve: &est}); err != nil {
		return "", &interp.Denial{Playbook: a.name, Msg: "the run above could not be asked for room for the call: " + err.Error()}
	}
	r := a.reply(c, id)
	// A parent that says Within, to a sub-run started before
	// relaySettleVersion, is waited for all the same.
	if a.later && r.Within != nil && r.Denied == nil {
		a.within[id] = *r.Within
	}
	return id, r.Denied
}

// Within implements interp.RemoteBudget: nothing, for a reservation the
// parent said nothing of (its settle is waited for).
func (a *aboveBudget) Within(id string) interp.CallSpend { return a.within[id] }

// next is the id of this execution's next reservation or retry.
func (a *aboveBudget) next() string {
	a.n++
	return fmt.Sprintf("%s/%d", a.run, a.n)
}

// send signals the parent m, from this sub-run, and waits until it is in
// the parent's history.
func (a *aboveBudget) send(c workflow.Context, m relayMsg) error {
	m.Child = a.self
	m.Settled, a.pending = a.pending, nil
	return a.e.get(c, workflow.SignalExternalWorkflow(c, a.parent, "", SignalReserve, m), nil)
}

// take keeps the parent's answers that came: by id, and a trip told
// unasked as heard.
func (a *aboveBudget) take() {
	for {
		var r relayReply
		if !a.in.ReceiveAsync(&r) {
			return
		}
		switch {
		case r.ID != "":
			a.replies[r.ID] = r
		case a.heard == nil:
			a.heard = r.Denied
		}
	}
}

// Closed implements interp.RemoteBudget.
func (a *aboveBudget) Closed() *interp.Denial {
	if !a.later {
		return nil
	}
	a.take()
	return a.heard
}

// reply waits for the parent's answer to the signal of id.
func (a *aboveBudget) reply(c workflow.Context, id string) relayReply {
	for {
		a.take()
		if r, ok := a.replies[id]; ok {
			delete(a.replies, id)
			return r
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
// it stops at its next step once its parent's cap is crossed. Since
// relaySettleVersion, a call that spent no more than its reservation
// allows (Within) cannot have crossed a cap by itself, and its settle
// waits for nothing: it goes with the next signal, and a trip comes
// unasked (Closed).
func (a *aboveBudget) Settle(id string, tokens int, cost float64) *interp.Denial {
	spend := interp.CallSpend{Tokens: tokens, CostUSD: cost}
	if a.later {
		w, ok := a.within[id]
		delete(a.within, id)
		if ok && w.Fits(spend) {
			a.pending = append(a.pending, settled{ID: id, Spend: spend})
			return a.Closed()
		}
	}
	c, back := a.e.hold()
	defer back()
	if err := a.send(c, relayMsg{ID: id, Settle: &spend}); err != nil {
		return nil
	}
	return a.reply(c, settledID(id)).Denied
}

// Retry signals the parent a retry to count, and waits for its answer.
func (a *aboveBudget) Retry(what string) *interp.Denial {
	c, back := a.e.hold()
	defer back()
	id := a.next()
	if err := a.send(c, relayMsg{ID: id, Retry: &what}); err != nil {
		return &interp.Denial{Playbook: a.name, Msg: "the run above could not be asked to count the retry: " + err.Error()}
	}
	return a.reply(c, id).Denied
}

// settledID is the id of the answer to a settle of reservation id.
func settledID(id string) string { return id + "/settled" }
