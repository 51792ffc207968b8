package interp

import (
	"context"
	"fmt"
	"sync"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
)

// A budget is one run's share of the caps on tokens, cost and retries:
// its limits, what it spent, and what its agent calls in flight
// reserved. A sub-run's budget sits under the budget of the run that
// runs it (outer), so the parent's caps hold during the sub-run and the
// sub-playbook's own limits are a tighter bound.
//
// admit is the one place that decides whether an agent call may start,
// and retry whether a retry may be made. Once a cap is crossed, or a
// call's reservation does not fit, the budget is closed: nothing new
// starts anywhere under it.
//
// The rule (spec: "Caps and reservations"): before a call starts, the run
// reserves what the call may spend, and the call starts only if that fits
// in what is left of every cap above it once the calls in flight have
// their reservations. A call that does not fit waits while other calls
// are in flight (they may spend less than they reserved); when none is,
// the run stops. What a call may spend is, per figure: the step's own
// max_tokens or max_cost_usd; else the call's ceiling from its driver
// (the prompt's bytes plus the driver's max_tokens, priced at the
// driver's prices); else the most one call of the step spent so far in
// this process. A step with none of these makes one call at a time until
// one has reported what it spent (a probe). A cap can then be overrun by
// the error of one estimate, not once per call in flight.
type budget struct {
	// name is the run's playbook, for a trip seen from a sub-run.
	name string
	// The caps; 0 for none.
	maxTokens, maxRetries int
	maxCost               float64
	// Spent, and reserved by calls in flight.
	tokens, retries int
	cost            float64
	resTokens       int
	resCost         float64
	// closed is the cap that tripped; nothing new starts once it is set.
	closed *trip
	// outerTrip is, on a run's own level, the first trip of a cap of a
	// run above it that it met (Result.CapTrip).
	outerTrip *trip
	// relayed is set once outerTrip was told to the run above (CapRelay).
	relayed bool
	outer   *budget
	l       *ledger
	// remote, on the level that stands for the run above a sub-run on an
	// engine that relays (BudgetRelay), is that run's budget: a call
	// that fits here reserves from it too before it starts.
	remote RemoteBudget
}

// ledger is what the budgets of one tree of runs in this process share:
// one lock, the calls in flight, and what each step's calls spent.
type ledger struct {
	mu       sync.Mutex
	inFlight int
	// probing and most are by step (stepKey).
	probing map[string]bool
	most    map[string]estimate
	// waiters are calls waiting for a call in flight to end, each on a
	// channel of its own run's host.
	waiters []Channel
}

// estimate is what one call may spend. A figure not known is one the
// call gives no bound for.
type estimate struct {
	tokens               int
	cost                 float64
	tokensOK, costOK     bool
	tokensFrom, costFrom string
}

// stepKey names a step of a playbook across the runs of a tree, and
// across the workflows of one on an engine: the playbook's hash and the
// step's name.
func stepKey(pb *lang.Playbook, s *lang.Step) string { return pb.Hash + "\x00" + s.Name }

// reservation is an admitted call's hold on its budget, and on the
// budget of the run above when that is remote (remote, with the hold's
// id there, settled on h).
type reservation struct {
	key      string
	est      estimate
	probe    bool
	budget   *budget
	remote   RemoteBudget
	remoteID string
	h        host
}

// Caps are what a run may still spend of the caps of the runs that run
// it, when it runs as a sub-run on an engine whose parent does not lend
// it its budget as the calls go (a child workflow; BudgetRelay): they
// hold alongside the sub-playbook's own limits. A nil field is no cap.
// A sub-run that reserves from its parent's budget takes only Playbook
// and Spent from them.
type Caps struct {
	Playbook string   `json:"playbook"`
	Tokens   *int     `json:"tokens,omitempty"`
	CostUSD  *float64 `json:"cost_usd,omitempty"`
	Retries  *int     `json:"retries,omitempty"`
	// Spent is the most one call of each step spent so far in the runs
	// above, by step (playbook hash, NUL, step name): what a call of it
	// reserves when nothing else bounds it.
	Spent map[string]CallSpend `json:"spent,omitempty"`
}

// CallSpend is what one agent call spent.
type CallSpend struct {
	Tokens  int     `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
}

// budget is the run's budget, made on first use: its limits, with what
// the state says it spent (a resumed run), under the budget of the run
// that runs it.
func (r *run) budget() *budget {
	if r.caps != nil {
		return r.caps
	}
	b := &budget{name: r.pb.Name, tokens: r.st.Metrics.TotalTokens, retries: r.st.Metrics.Retries}
	if c := r.st.Metrics.TotalCostUSD; c != nil {
		b.cost = *c
	}
	if l := r.pb.Limits; l != nil {
		b.maxTokens, b.maxCost, b.maxRetries = l.MaxTokens, l.MaxCostUSD, l.MaxRetries
	}
	switch {
	case r.opts.outer != nil:
		b.outer, b.l = r.opts.outer, r.opts.outer.l
		// A resumed sub-run's earlier spend counts again toward the
		// parent's caps: the parent's metrics hold a sub-run's spend
		// only once it ended.
		b.l.mu.Lock()
		for o := b.outer; o != nil; o = o.outer {
			o.tokens += b.tokens
			o.cost += b.cost
			o.retries += b.retries
		}
		b.l.mu.Unlock()
	case r.opts.OuterCaps != nil || r.above() != nil:
		var c Caps
		if oc := r.opts.OuterCaps; oc != nil {
			c = *oc
		}
		b.l = newLedger()
		for k, sp := range c.Spent {
			b.l.most[k] = learned(sp.Tokens, sp.CostUSD)
		}
		o := &budget{name: c.Playbook, l: b.l, remote: r.above()}
		if o.remote != nil {
			// The run above admits each call and retry against its own
			// budget, as it stands then: a copy of what it left when
			// this run started would refuse what it may since have
			// freed, and allow what siblings have since spent.
			c.Tokens, c.CostUSD, c.Retries = nil, nil, nil
		}
		if c.Tokens != nil {
			o.maxTokens = max(*c.Tokens, 0)
			if *c.Tokens <= 0 {
				o.closed = capReached(o, "max_tokens")
			}
		}
		if c.CostUSD != nil {
			o.maxCost = *c.CostUSD
			if *c.CostUSD <= 0 {
				o.closed = capReached(o, "max_cost_usd")
			}
		}
		if c.Retries != nil {
			o.maxRetries = *c.Retries
			if *c.Retries <= 0 {
				// None left: the first retry trips.
				o.maxRetries, o.retries = 1, 1
			}
		}
		b.outer = o
	default:
		b.l = newLedger()
	}
	r.caps = b
	return b
}

func newLedger() *ledger {
	return &ledger{probing: map[string]bool{}, most: map[string]estimate{}}
}

// learned is the estimate of a step whose costliest call so far spent
// tokens and cost.
func learned(tokens int, cost float64) estimate {
	return estimate{tokens: tokens, cost: cost, tokensOK: true, costOK: true,
		tokensFrom: "the most one call of the step used so far", costFrom: "the most one call of the step cost so far"}
}

// capReached is the trip of a cap with nothing left of it from the
// start (a sub-run on an engine, whose parent spent it all).
func capReached(b *budget, name string) *trip {
	return &trip{fmt.Sprintf("limits.%s: nothing is left of it", name), agent.KindBudget}
}

// levels are b and the budgets it runs under, innermost first.
func (b *budget) levels(fn func(l *budget) bool) {
	for l := b; l != nil; l = l.outer {
		if !fn(l) {
			return
		}
	}
}

// seen is a trip of level l as run b reports it: a cap of a run above
// it names that run's playbook.
func (b *budget) seen(l *budget, t *trip) *trip {
	if l == b || t == nil {
		return t
	}
	if b.outerTrip == nil {
		b.outerTrip = t
	}
	return &trip{fmt.Sprintf("playbook %q: %s", l.name, t.msg), t.kind}
}

// closedTrip is the first closed level's trip; the caller holds the lock.
func (b *budget) closedTrip() *trip {
	var t *trip
	b.levels(func(l *budget) bool {
		if l.closed != nil {
			t = b.seen(l, l.closed)
		}
		return t == nil
	})
	return t
}

// crossed closes every level whose tokens or cost went over its cap and
// returns the first closed level's trip; the caller holds the lock.
// Spending a cap exactly is not crossing it, but leaves nothing for
// another call (admit).
func (b *budget) crossed() *trip {
	if top := b.top(); top.remote != nil && top.closed == nil {
		if d := top.remote.Closed(); d != nil {
			top.closeAbove(d)
		}
	}
	b.levels(func(l *budget) bool {
		if l.closed != nil {
			return true
		}
		switch {
		case l.maxTokens > 0 && l.tokens > l.maxTokens:
			l.closed = &trip{fmt.Sprintf("limits.max_tokens: the run used %d tokens (max %d)", l.tokens, l.maxTokens), agent.KindBudget}
		case l.maxCost > 0 && l.cost > l.maxCost:
			l.closed = &trip{fmt.Sprintf("limits.max_cost_usd: the run cost $%.4f (max $%.4f)", l.cost, l.maxCost), agent.KindBudget}
		}
		return true
	})
	return b.closedTrip()
}

// stopped reports the cap that stopped the run, if one did: crossed, or
// refused a call.
func (b *budget) stopped() *trip {
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	return b.crossed()
}

// stopped is what decided, while the run's main steps run, that the run
// ends: a cap crossed (by an item's call, a sub-run) or the circuit
// breaker open. After it no item starts, nor goes on to its next step,
// even before the item whose step decided it reports, and a for_each
// whose items were left stops the run. The on_failure and finally steps
// of a run that stopped run all the same (their agent calls are refused:
// admit).
func (r *run) stopped() *trip {
	m := r.st.Meta
	if m.OnFailure || m.Finally {
		return nil
	}
	if t := r.budget().stopped(); t != nil {
		return t
	}
	if t := r.trippedBelow(); t != nil {
		return t
	}
	if b := r.st.Breaker; b.State == BreakerOpen {
		return breakerTrip(b.Reason)
	}
	return nil
}

// mayStart decides whether a step of frame f starts now: an item's step
// does not once the run decided to end (holdStarts); any other does.
func (r *run) mayStart(ctx context.Context, f *frame) (release func(), ok bool) {
	if f.item == nil {
		return func() {}, true
	}
	return r.holdStarts(ctx)
}

// holdStarts decides whether an item or an item's step starts now: not
// once the run decided to end (stopped), which the scheduler and the
// item's walk also asked a moment before. But a sub-run in this process
// crosses a cap on a walk of its own, with no turn to wait for, and may
// do so while an item evaluates its step's condition or waits for its
// serial turn. So the decision is taken again under the lock every spend
// takes, and the lock is held until release, which the caller calls once
// the start is announced: a cap is crossed either before the decision,
// which sees it, or after the announcement, which every event of the
// trip then follows. The ending sections start what they have.
func (r *run) holdStarts(ctx context.Context) (release func(), ok bool) {
	m := r.st.Meta
	if m.OnFailure || m.Finally {
		return func() {}, true
	}
	if ctx.Err() != nil || r.stopped() != nil {
		return nil, false
	}
	b := r.budget()
	b.l.mu.Lock()
	if b.crossed() != nil {
		b.l.mu.Unlock()
		return nil, false
	}
	return b.l.mu.Unlock, true
}

// CapRelay is an Engine whose sub-runs run apart from the run that runs
// them (a child workflow), held to that run's caps by a copy of what it
// leaves them (SubRun.Caps) or by reserving from its budget
// (BudgetRelay), where a local sub-run spends from its parent's budget
// in this process. A sub-run that trips one of those caps
// tells the run above at once (TripAbove), before the end of the step
// that tripped is told; that run reads what its sub-runs told
// (TrippedBelow) whenever it decides whether anything may start
// (run.stopped). So, as locally, nothing starts anywhere in the run after
// the trip, before the sub-run's result arrives.
type CapRelay interface {
	// TripAbove tells the run above of trip msg (Result.CapTrip); it
	// returns once that run has it.
	TripAbove(msg string)
	// TrippedBelow is the first trip a sub-run told; "" for none.
	TrippedBelow() string
}

// trippedBelow closes the run's budget for a cap a sub-run on the engine
// tripped and told (CapRelay), and returns the trip.
func (r *run) trippedBelow() *trip {
	rl, ok := r.opts.Engine.(CapRelay)
	if !ok {
		return nil
	}
	msg := rl.TrippedBelow()
	if msg == "" {
		return nil
	}
	r.budget().close(&trip{msg, agent.KindBudget})
	return r.budget().stopped()
}

// relayTrip tells the run above, once, of a cap of its that this run
// tripped (CapRelay).
func (r *run) relayTrip() {
	rl, ok := r.opts.Engine.(CapRelay)
	if !ok {
		return
	}
	b := r.budget()
	b.l.mu.Lock()
	t := b.outerTrip
	if b.relayed {
		t = nil
	}
	b.relayed = b.relayed || t != nil
	b.l.mu.Unlock()
	if t != nil {
		r.host.block(func() { rl.TripAbove(t.msg) })
	}
}

// admit decides whether a call of step s that may spend est starts (a
// figure est does not bound: the most a call of s spent so far), and
// reserves est for it if so. It waits, on h, while the call does not fit
// and other calls are in flight, or while another probe of s is.
func (b *budget) admit(h host, pb *lang.Playbook, s *lang.Step, est estimate) (*reservation, *trip) {
	return b.admitKey(h, stepKey(pb, s), s.Name, est)
}

// admitKey is admit for a call of the step that key and name name.
func (b *budget) admitKey(h host, key, name string, est estimate) (*reservation, *trip) {
	l := b.l
	given := est
	for {
		l.mu.Lock()
		est = given
		if m, ok := l.most[key]; ok {
			if !est.tokensOK {
				est.tokens, est.tokensOK, est.tokensFrom = m.tokens, true, m.tokensFrom
			}
			if !est.costOK {
				est.cost, est.costOK, est.costFrom = m.cost, true, m.costFrom
			}
		}
		if t := b.crossed(); t != nil {
			l.mu.Unlock()
			return nil, t
		}
		probe, fits := false, true
		var full *budget
		var fullWhat string
		b.levels(func(v *budget) bool {
			if v.maxTokens > 0 {
				switch {
				case v.tokens >= v.maxTokens:
					full, fullWhat = v, "tokens"
					fits = false
				case !est.tokensOK:
					probe = true
				case v.tokens+v.resTokens+est.tokens > v.maxTokens:
					full, fullWhat, fits = v, "tokens", false
				}
			}
			if fits && v.maxCost > 0 {
				switch {
				case v.cost >= v.maxCost:
					full, fullWhat, fits = v, "cost", false
				case !est.costOK:
					probe = true
				case v.cost+v.resCost+est.cost > v.maxCost:
					full, fullWhat, fits = v, "cost", false
				}
			}
			return fits
		})
		switch {
		case fits && !probe:
			b.levels(func(v *budget) bool {
				v.resTokens += est.tokens
				v.resCost += est.cost
				return true
			})
			l.inFlight++
			l.mu.Unlock()
			return b.reserveAbove(h, &reservation{key: key, est: est, budget: b, h: h}, name)
		case fits && !l.probing[key]:
			// Nothing says what a call of s may spend: one call finds out
			// while the others of s wait.
			l.probing[key] = true
			l.inFlight++
			l.mu.Unlock()
			return b.reserveAbove(h, &reservation{key: key, est: est, probe: true, budget: b, h: h}, name)
		case !fits && l.inFlight == 0:
			full.closed = full.refusal(name, est, fullWhat)
			t := b.seen(full, full.closed)
			l.mu.Unlock()
			return nil, t
		}
		// Wait for a call in flight to end: it may leave room, or tell
		// what a call of s spends.
		ch := h.channel(1)
		l.waiters = append(l.waiters, ch)
		l.mu.Unlock()
		h.block(func() { ch.Receive() })
	}
}

// refusal is the trip of a call of step that does not fit in what is left
// of v's cap on what ("tokens" or "cost").
func (v *budget) refusal(step string, est estimate, what string) *trip {
	if what == "tokens" {
		if v.tokens >= v.maxTokens {
			return &trip{fmt.Sprintf("limits.max_tokens: the run used %d tokens, all of its %d", v.tokens, v.maxTokens), agent.KindBudget}
		}
		return &trip{fmt.Sprintf("limits.max_tokens: a call of step %s may use %d tokens (%s), more than the %d left of %d (%d used)",
			step, est.tokens, est.tokensFrom, v.maxTokens-v.tokens-v.resTokens, v.maxTokens, v.tokens), agent.KindBudget}
	}
	if v.cost >= v.maxCost {
		return &trip{fmt.Sprintf("limits.max_cost_usd: the run cost $%.4f, all of its $%.4f", v.cost, v.maxCost), agent.KindBudget}
	}
	return &trip{fmt.Sprintf("limits.max_cost_usd: a call of step %s may cost $%.4f (%s), more than the $%.4f left of $%.4f ($%.4f spent)",
		step, est.cost, est.costFrom, v.maxCost-v.cost-v.resCost, v.maxCost, v.cost), agent.KindBudget}
}

// settle ends an admitted call that spent tokens and cost: its
// reservation is let go, what it spent is charged to every level, and
// the calls waiting look again. A remote run above is told too, and a
// cap of its that is closed now closes the level that stands for it.
func (res *reservation) settle(tokens int, cost float64) {
	res.budget.l.mu.Lock()
	res.let(tokens, cost, true)
	res.budget.l.mu.Unlock()
	if res.remote != nil {
		var d *Denial
		res.h.block(func() { d = res.remote.Settle(res.remoteID, tokens, cost) })
		if d != nil {
			res.budget.l.mu.Lock()
			res.budget.top().closeAbove(d)
			res.budget.l.mu.Unlock()
		}
	}
}

// let lets the reservation go, charges what the call spent to every
// level, and, if spent, learns it as what a call of its step may spend;
// the caller holds the lock.
func (res *reservation) let(tokens int, cost float64, spent bool) {
	b := res.budget
	l := b.l
	l.inFlight--
	if res.probe {
		delete(l.probing, res.key)
	}
	b.levels(func(v *budget) bool {
		if !res.probe {
			v.resTokens -= res.est.tokens
			v.resCost -= res.est.cost
		}
		v.tokens += tokens
		v.cost += cost
		return true
	})
	if spent {
		m := l.most[res.key]
		l.most[res.key] = learned(max(m.tokens, tokens), max(m.cost, cost))
	}
	for _, ch := range l.waiters {
		ch.Send(struct{}{})
	}
	l.waiters = nil
}

// spent is the most one call of each step spent, as far as b's ledger
// knows.
func (b *budget) spent() map[string]CallSpend {
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	return b.spentLocked()
}

func (b *budget) spentLocked() map[string]CallSpend {
	var out map[string]CallSpend
	for k, m := range b.l.most {
		if out == nil {
			out = map[string]CallSpend{}
		}
		out[k] = CallSpend{Tokens: m.tokens, CostUSD: m.cost}
	}
	return out
}

// learn takes what a sub-run on an engine learned of its steps' calls.
func (b *budget) learn(spent map[string]CallSpend) {
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	for k, sp := range spent {
		m := b.l.most[k]
		b.l.most[k] = learned(max(m.tokens, sp.Tokens), max(m.cost, sp.CostUSD))
	}
}

// close stops b for t, a cap of this run that a sub-run on an engine
// met in its copy of this run's budget (Result.CapTrip).
func (b *budget) close(t *trip) {
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	if b.closed == nil {
		b.closed = t
	}
}

// charge counts what a sub-run on an engine spent, once it ended, toward
// every level (a sub-run here charged its calls as they ended).
func (b *budget) charge(tokens int, cost float64, retries int) {
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	b.levels(func(v *budget) bool {
		v.tokens += tokens
		v.cost += cost
		v.retries += retries
		return true
	})
}

// retry counts one retry against every level's max_retries, or trips
// when one has none left or the budget is closed; the run above counts
// it too when its budget is remote (waiting on h).
func (b *budget) retry(h host, what string) *trip {
	if t := b.retryHere(what); t != nil {
		return t
	}
	top := b.top()
	if top.remote == nil {
		return nil
	}
	var d *Denial
	h.block(func() { d = top.remote.Retry(what) })
	if d == nil {
		return nil
	}
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	// Refused above: it is not counted here either.
	b.levels(func(v *budget) bool {
		v.retries--
		return true
	})
	top.closeAbove(d)
	return b.closedTrip()
}

// retryHere is retry on the levels in this process.
func (b *budget) retryHere(what string) *trip {
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	if t := b.crossed(); t != nil {
		return t
	}
	var t *trip
	b.levels(func(v *budget) bool {
		if v.maxRetries > 0 && v.retries >= v.maxRetries {
			v.closed = &trip{fmt.Sprintf("limits.max_retries: a retry beyond the %d this run may make (%s)", v.maxRetries, what), agent.KindBudget}
			t = b.seen(v, v.closed)
		}
		return t == nil
	})
	if t != nil {
		return t
	}
	b.levels(func(v *budget) bool {
		v.retries++
		return true
	})
	return nil
}

// left is what b may still spend of every cap above it, for a sub-run on
// an engine (Caps).
func (b *budget) left() *Caps {
	b.l.mu.Lock()
	defer b.l.mu.Unlock()
	c := &Caps{Playbook: b.name}
	b.levels(func(v *budget) bool {
		if v.maxTokens > 0 {
			n := v.maxTokens - v.tokens - v.resTokens
			if c.Tokens == nil || n < *c.Tokens {
				c.Tokens = &n
			}
		}
		if v.maxCost > 0 {
			n := v.maxCost - v.cost - v.resCost
			if c.CostUSD == nil || n < *c.CostUSD {
				c.CostUSD = &n
			}
		}
		if v.maxRetries > 0 {
			n := v.maxRetries - v.retries
			if c.Retries == nil || n < *c.Retries {
				c.Retries = &n
			}
		}
		return true
	})
	if c.Tokens == nil && c.CostUSD == nil && c.Retries == nil {
		return nil
	}
	c.Spent = b.spentLocked()
	return c
}

// estimate is what a call of step s, making request req, may spend by
// the step's caps and the driver's ceiling (see budget); admit fills in
// a figure neither bounds from what the step's calls spent.
func (r *run) estimate(s *lang.Step, a *lang.AgentCall, req agent.Request) estimate {
	var e estimate
	var dtok int
	var dcost float64
	var dtokOK, dcostOK bool
	if d := a.Agent.DriverDef; d != nil {
		// A byte of the prompt is at most one token.
		dtok, dcost, dtokOK, dcostOK = lang.CallCeiling(d.Config, req.Model, len(req.Prompt)+len(req.System))
	}
	switch {
	case s.MaxTokens > 0:
		e.tokens, e.tokensOK, e.tokensFrom = s.MaxTokens, true, "the step's max_tokens"
	case dtokOK:
		e.tokens, e.tokensOK, e.tokensFrom = dtok, true, "the prompt and the driver's max_tokens"
	}
	switch {
	case s.MaxCostUSD > 0:
		e.cost, e.costOK, e.costFrom = s.MaxCostUSD, true, "the step's max_cost_usd"
	case dcostOK:
		e.cost, e.costOK, e.costFrom = dcost, true, "the driver's max_tokens at its prices"
	}
	return e
}
