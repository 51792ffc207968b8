package interp

import (
	"github.com/apl-lang/apl/builtins/agent"
)

// BudgetRelay is an Engine whose sub-runs run apart from the run that
// runs them (a child workflow) and still reserve from that run's budget
// as their calls go, as a local sub-run's calls do: the engine carries
// each reservation up to the run above (RemoteBudget) and serves those of
// its own sub-runs from this run's budget (SubRun.Budget, a Lender). So
// sub-runs running at once share what is left of a cap, and once a cap
// closes, every later call of every sub-run under it is refused.
//
// Without it (an engine that is no BudgetRelay, or one that says it does
// not lend), a sub-run is held to a copy of what the run above left it
// when it started (SubRun.Caps).
type BudgetRelay interface {
	// Lends says whether this run's sub-runs reserve from its budget
	// (SubRun.Budget).
	Lends() bool
	// Above is the budget of the run above this one, when this run is a
	// sub-run that reserves from it; nil otherwise.
	Above() RemoteBudget
}

// RemoteBudget is the budget of the run above a sub-run on an engine,
// as the sub-run reaches it (BudgetRelay.Above). Reserve, Settle and
// Retry may wait on the world: the walk calls them inside its host's
// block. Closed and Within wait for nothing: they read what the run
// above told (Closed under the ledger's lock).
type RemoteBudget interface {
	// Reserve asks the run above to admit a call that may spend est, as
	// it admits one of its own (waiting while the call does not fit and
	// others are in flight). It returns the reservation's id there, or
	// the trip that refused the call.
	Reserve(est CallEstimate) (id string, denied *Denial)
	// Settle tells the run above what the call it admitted as id spent,
	// and returns the trip of a cap there that the spend crossed, or that
	// was closed already: nothing more starts in this run then, as in a
	// local sub-run, which sees its parent's caps crossed at once. An
	// engine may send it without waiting for the answer: it returns the
	// trip known so far, and Closed a later one.
	Settle(id string, tokens int, cost float64) *Denial
	// Closed is the trip of a cap of the run above that it told this
	// run without being asked (a spend Settle did not wait for crossed
	// it); nil for none. The walk looks whenever it decides whether
	// anything may start.
	Closed() *Denial
	// Within is what the call admitted as id may spend, per figure,
	// without its spend crossing a cap of the run above or of one above
	// it by itself (Loan.Within); a negative figure: any.
	Within(id string) CallSpend
	// Retry asks the run above to count a retry (what: the retry, for a
	// refusal's message) against its max_retries; it returns the trip
	// that refused it.
	Retry(what string) *Denial
}

// CallEstimate is what one agent call may spend, as a sub-run asks the
// run above to reserve it (RemoteBudget.Reserve). A figure not Known is
// one nothing bounds: the run above fills it from what the step's calls
// spent, or lets one call find out (a probe).
type CallEstimate struct {
	// Key names the step across the runs of a tree (playbook hash, NUL,
	// step name); Step is its name, for a refusal's message.
	Key, Step   string
	Tokens      int     `json:",omitempty"`
	CostUSD     float64 `json:",omitempty"`
	TokensKnown bool    `json:",omitempty"`
	CostKnown   bool    `json:",omitempty"`
	TokensFrom  string  `json:",omitempty"`
	CostFrom    string  `json:",omitempty"`
}

// call is est as a sub-run asks the run above to reserve it, for a call
// of the step that key and step name.
func (est estimate) call(key, step string) CallEstimate {
	return CallEstimate{Key: key, Step: step, Tokens: est.tokens, CostUSD: est.cost, TokensKnown: est.tokensOK, CostKnown: est.costOK,
		TokensFrom: est.tokensFrom, CostFrom: est.costFrom}
}

// estimate is what the run above reserves for the call.
func (est CallEstimate) estimate() estimate {
	return estimate{tokens: est.Tokens, cost: est.CostUSD, tokensOK: est.TokensKnown, costOK: est.CostKnown,
		tokensFrom: est.TokensFrom, costFrom: est.CostFrom}
}

// Denial is the trip that refused a sub-run's call: a cap of the run of
// playbook Playbook (the run above, or one above it), as that run says
// it.
type Denial struct {
	Playbook, Msg string
}

// Lender is a run's budget as it serves the reservations of one of its
// sub-runs on an engine (SubRun.Budget), and counts what that sub-run's
// calls spent.
type Lender struct {
	b *budget
	h host
	// What the sub-run's settled calls spent, and the retries it made:
	// the part of its metrics this run's budget has counted already.
	tokens, retries int
	cost            float64
}

// Loan is a sub-run's call admitted by a Lender, until it settles.
type Loan struct {
	ld  *Lender
	res *reservation
}

// Reserve admits a call of the sub-run's that may spend est against this
// run's budget and those above it, as admit does one of this run's own;
// it waits, on the run's host, while the call does not fit and others
// are in flight. It must be called in one of the walk's coroutines.
func (ld *Lender) Reserve(est CallEstimate) (*Loan, *Denial) {
	res, t := ld.b.admitKey(ld.h, est.Key, est.Step, est.estimate())
	if t != nil {
		return nil, ld.b.denial(t)
	}
	return &Loan{ld: ld, res: res}, nil
}

// Settle ends the loan of a call that spent tokens and cost, as settle
// ends a call of this run's, and returns the trip of a cap of this run's
// or above that is closed now, for the sub-run to stop at.
func (ln *Loan) Settle(tokens int, cost float64) *Denial {
	ln.ld.tokens += tokens
	ln.ld.cost += cost
	ln.res.settle(tokens, cost)
	if t := ln.ld.b.stopped(); t != nil {
		return ln.ld.b.denial(t)
	}
	return nil
}

// Within is what the loan's call may spend, per figure, without its
// spend crossing a cap of this run's or above by itself: what was
// reserved for it where a level caps the figure (nothing, for a probe),
// and no more than the run above says, when that is remote; a negative
// figure: no level caps it. A cap is crossed only once a call spends
// more than it reserved (calls are admitted only while their
// reservations fit), so a sub-run on an engine need not wait to hear
// whether a call within it crossed one.
func (ln *Loan) Within() CallSpend {
	res := ln.res
	w := CallSpend{Tokens: -1, CostUSD: -1}
	res.budget.l.mu.Lock()
	res.budget.levels(func(v *budget) bool {
		if v.maxTokens > 0 {
			w.Tokens = 0
			if !res.probe {
				w.Tokens = res.est.tokens
			}
		}
		if v.maxCost > 0 {
			w.CostUSD = 0
			if !res.probe {
				w.CostUSD = res.est.cost
			}
		}
		return true
	})
	res.budget.l.mu.Unlock()
	if res.remote != nil {
		a := res.remote.Within(res.remoteID)
		w = CallSpend{Tokens: tighter(w.Tokens, a.Tokens), CostUSD: tighter(w.CostUSD, a.CostUSD)}
	}
	return w
}

// tighter is the smaller of two bounds, where a negative one is none.
func tighter[N int | float64](a, b N) N {
	switch {
	case a < 0:
		return b
	case b < 0:
		return a
	}
	return min(a, b)
}

// Fits says whether spend is within w (Loan.Within).
func (w CallSpend) Fits(spend CallSpend) bool {
	return (w.Tokens < 0 || spend.Tokens <= w.Tokens) && (w.CostUSD < 0 || spend.CostUSD <= w.CostUSD)
}

// Release lets the loan go with nothing spent: its sub-run ended before
// it told what the call spent (it failed, was cancelled or timed out).
func (ln *Loan) Release() {
	ln.res.budget.l.mu.Lock()
	ln.res.let(0, 0, false)
	ln.res.budget.l.mu.Unlock()
	if ln.res.remote != nil {
		ln.res.h.block(func() { ln.res.remote.Settle(ln.res.remoteID, 0, 0) })
	}
}

// closeAbove closes the level that stands for the run above, whose
// budget tripped d.
func (top *budget) closeAbove(d *Denial) {
	if top.closed == nil {
		top.name, top.closed = d.Playbook, &trip{d.Msg, agent.KindBudget}
	}
}

// top is the outermost level of b's budget.
func (b *budget) top() *budget {
	t := b
	for t.outer != nil {
		t = t.outer
	}
	return t
}

// Retry counts a retry of the sub-run's against this run's max_retries
// and those above, as retry does one of this run's own, and returns the
// trip that refused it.
func (ld *Lender) Retry(what string) *Denial {
	if t := ld.b.retry(ld.h, what); t != nil {
		return ld.b.denial(t)
	}
	ld.retries++
	return nil
}

// lent is what the sub-run's settled calls spent, and the retries it
// counted here.
func (ld *Lender) lent() (tokens int, cost float64, retries int) {
	return ld.tokens, ld.cost, ld.retries
}

// above is the budget of the run above this one, when the engine relays
// this run's reservations to it (BudgetRelay).
func (r *run) above() RemoteBudget {
	if rl, ok := r.opts.Engine.(BudgetRelay); ok {
		return rl.Above()
	}
	return nil
}

// lender is this run's budget lent to a sub-run on the engine, or nil
// when the engine holds its sub-runs to copies (BudgetRelay), or when no
// cap holds here or above: then there is nothing to reserve from, and a
// sub-run's calls cost its parent no signals.
func (r *run) lender() *Lender {
	rl, ok := r.opts.Engine.(BudgetRelay)
	if !ok || !rl.Lends() || !r.budget().capped() {
		return nil
	}
	return &Lender{b: r.budget(), h: r.host}
}

// capped: a level of b has a cap on tokens, cost or retries, or is the
// remote budget of a run above.
func (b *budget) capped() bool {
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	capped := false
	b.levels(func(l *budget) bool {
		capped = l.maxTokens > 0 || l.maxCost > 0 || l.maxRetries > 0 || l.remote != nil || l.closed != nil
		return !capped
	})
	return capped
}

// denial is trip t, which b's admit returned, as the sub-run that asked
// is told it: the closed level's playbook and its own words.
func (b *budget) denial(t *trip) *Denial {
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	d := &Denial{Playbook: b.name, Msg: t.msg}
	b.levels(func(l *budget) bool {
		if l.closed != nil {
			d = &Denial{Playbook: l.name, Msg: l.closed.msg}
			return false
		}
		return true
	})
	return d
}

// reserveAbove reserves res, admitted here, from the budget of the run
// above too when that is remote; if the run above refuses it, res is let
// go and the level that stands for that run closes with its trip.
func (b *budget) reserveAbove(h host, res *reservation, step string) (*reservation, *trip) {
	top := b.top()
	if top.remote == nil {
		return res, nil
	}
	call := res.est.call(res.key, step)
	var id string
	var d *Denial
	h.block(func() { id, d = top.remote.Reserve(call) })
	if d == nil {
		res.remote, res.remoteID = top.remote, id
		return res, nil
	}
	l := b.l
	l.mu.Lock()
	defer l.mu.Unlock()
	res.let(0, 0, false)
	top.closeAbove(d)
	return nil, b.closedTrip()
}
