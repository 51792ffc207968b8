package lang

import "encoding/binary"

// maxPlanStates bounds the search for the worst path: steps times the
// combinations of cap counters. Beyond it a section falls back to a flow
// bound (section.flow).
const maxPlanStates = 50_000

// section searches the worst walks through one section of steps (the main
// steps, on_failure, or a for_each body). A walk is any run the graph
// allows when every gate rule may match at every visit: capped gotos are
// taken at most max times (per item in a body), after which their
// on_exhausted outcome runs instead. Since every cycle passes through a
// capped edge (the loader's cycle rule), the walks are finite, and the
// worst is found by a search over (step, cap counters) with memoization.
type planSection struct {
	p      *planner
	steps  []*Step
	slot   map[*Outcome]int // each capped outcome's counter
	caps   []int
	onFail vec // added where a walk fails: the on_failure steps' worst
	exact  bool
}

func (p *planner) section(steps []*Step, onFail *vec) *planSection {
	sec := &planSection{p: p, steps: steps, slot: map[*Outcome]int{}}
	if onFail != nil {
		sec.onFail = *onFail
	}
	states := float64(len(steps))
	for _, s := range steps {
		if s.Gate == nil {
			continue
		}
		for _, r := range s.Gate.Tried() {
			if o := r.Outcome; o != nil && o.MaxIn(p.opts.Settings) > 0 {
				sec.slot[o] = len(sec.caps)
				sec.caps = append(sec.caps, o.MaxIn(p.opts.Settings))
				states *= float64(o.MaxIn(p.opts.Settings) + 1)
			}
		}
	}
	sec.exact = states <= maxPlanStates
	if !sec.exact {
		p.approx = true
	}
	return sec
}

// move is one way to leave a visit of a step.
type move struct {
	skip      bool  // when is false: nothing runs
	fail      bool  // the step fails, or its gate fails the run
	rule      *Rule // the gate rule taken, if any
	exhausted bool
	to        *Step // nil: the walk ends (or fails, with fail)
	bump      int   // the counter the move takes, or -1
	backward  bool  // a capped goto to this step or an earlier one: a retry
}

// moves lists the ways to leave a visit of s with counters ctr: its
// successors, with a capped rule's goto while its counter is below the cap
// and its on_exhausted outcome after. Failing comes last, so that of walks
// that weigh the same the path shows one that goes on.
func (sec *planSection) moves(s *Step, ctr []uint16) (out []move) {
	for _, x := range s.Successors() {
		m := move{skip: x.Exit == ExitSkip, fail: x.Fails(), rule: x.Rule, exhausted: x.Exit == ExitExhausted, to: x.To, bump: -1}
		switch x.Exit {
		case ExitBody:
			continue // the body is a section of its own
		case ExitRule:
			if i, capped := sec.slot[x.Outcome]; capped {
				if int(ctr[i]) >= sec.caps[i] {
					continue
				}
				m.bump, m.backward = i, x.Outcome.Goto != nil && x.Outcome.Goto.Index <= s.Index
			}
		case ExitExhausted:
			if i, capped := sec.slot[x.Rule.Outcome]; !capped || int(ctr[i]) < sec.caps[i] {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// search is one worst-walk search: a weight per visit, memoized by state.
type search struct {
	sec    *planSection
	weight func(*Step) Bound
	retry  bool // a backward capped goto weighs 1 (the retries figure)
	onFail Bound
	memo   map[string]*entry
	index  map[*Step]int
}

type entry struct {
	val  Bound
	best move
	busy bool
}

func (sec *planSection) search(weight func(*Step) Bound, retry bool, onFail Bound) *search {
	idx := make(map[*Step]int, len(sec.steps))
	for i, s := range sec.steps {
		idx[s] = i
	}
	return &search{sec: sec, weight: weight, retry: retry, onFail: onFail, memo: map[string]*entry{}, index: idx}
}

func (sr *search) key(s *Step, ctr []uint16) string {
	b := binary.AppendUvarint(nil, uint64(sr.index[s]))
	for _, c := range ctr {
		b = binary.AppendUvarint(b, uint64(c))
	}
	return string(b)
}

// value is the worst of the walks from a visit of s with counters ctr.
func (sr *search) value(s *Step, ctr []uint16) *entry {
	k := sr.key(s, ctr)
	if e := sr.memo[k]; e != nil {
		if e.busy {
			// A cycle without a cap, which the loader rejects: no bound.
			return &entry{val: Unbounded}
		}
		return e
	}
	e := &entry{busy: true}
	sr.memo[k] = e
	first := true
	for _, m := range sr.sec.moves(s, ctr) {
		v := Bound{}
		if !m.skip {
			v = sr.weight(s)
		}
		if sr.retry && m.backward {
			v = v.Plus(Exactly(1))
		}
		switch {
		case m.fail:
			v = v.Plus(sr.onFail)
		case m.to != nil:
			next := ctr
			if m.bump >= 0 {
				next = append([]uint16(nil), ctr...)
				next[m.bump]++
			}
			v = v.Plus(sr.value(m.to, next).val)
		}
		if first || e.val.Less(v) {
			e.val, e.best, first = v, m, false
		}
	}
	e.busy = false
	return e
}

// figureWeight weighs a visit of a step by one figure of its visits.
func (sec *planSection) figureWeight(fig int) func(*Step) Bound {
	return func(s *Step) Bound {
		pv := sec.p.perStep[s].PerVisit
		return vec{pv.Calls, pv.Tokens, pv.CostUSD, pv.Seconds, pv.Retries}[fig]
	}
}

// worst is the worst of one figure over the section's walks, with the
// section's onFail added where a walk fails.
func (sec *planSection) worst(fig int) Bound {
	if len(sec.steps) == 0 {
		return Bound{}
	}
	w := sec.figureWeight(fig)
	if !sec.exact {
		return sec.flow(w, fig == figRetries, sec.onFail[fig])
	}
	return sec.search(w, fig == figRetries, sec.onFail[fig]).value(sec.steps[0], make([]uint16, len(sec.caps))).val
}

// visits is the most visits of each step of the section in one walk.
func (sec *planSection) visits() map[*Step]Bound {
	out := map[*Step]Bound{}
	for _, s := range sec.steps {
		one := func(t *Step) Bound {
			if t == s {
				return Exactly(1)
			}
			return Bound{}
		}
		if sec.exact {
			out[s] = sec.search(one, false, Bound{}).value(sec.steps[0], make([]uint16, len(sec.caps))).val
		} else {
			out[s] = sec.flow(one, false, Bound{})
		}
	}
	return out
}

// path is the walk with the worst of one figure, then on_failure's if it
// fails; empty when the section was too large to search.
func (sec *planSection) path(fig int, onFail *planSection) []PathStep {
	out := []PathStep{}
	if len(sec.steps) == 0 || !sec.exact {
		return out
	}
	sr := sec.search(sec.figureWeight(fig), fig == figRetries, sec.onFail[fig])
	s, ctr := sec.steps[0], make([]uint16, len(sec.caps))
	for s != nil && len(out) < 10_000 {
		e := sr.value(s, ctr)
		m := e.best
		ps := PathStep{Step: s.Name, OnFailure: s.OnFailure, Finally: s.Finally, Skipped: m.skip, Exhausted: m.exhausted, Fails: m.fail}
		if m.rule != nil {
			ps.Rule = m.rule.Name
		}
		if s.ForEach != nil && !m.skip {
			ps.Items = sec.p.perStep[s].Items
			ps.Concurrency = sec.p.perStep[s].Concurrency
			ps.Body = sec.p.section(s.ForEach.Steps, nil).path(fig, nil)
		}
		out = append(out, ps)
		if m.fail && onFail != nil {
			return append(out, onFail.path(fig, nil)...)
		}
		if m.bump >= 0 {
			ctr = append([]uint16(nil), ctr...)
			ctr[m.bump]++
		}
		s = m.to
	}
	return out
}

// flow is a looser bound for a section with too many cap combinations to
// search: a step runs at most once if it is first, plus once per run of
// each step with an uncapped edge to it, plus max times per capped edge
// to it. Uncapped edges form no cycle, so their order is topological.
func (sec *planSection) flow(weight func(*Step) Bound, retry bool, onFail Bound) Bound {
	preds := map[*Step][]*Step{} // uncapped predecessors, once each
	capped := map[*Step]Bound{}
	indeg := map[*Step]int{}
	extra := Bound{}
	for _, s := range sec.steps {
		uncapped := map[*Step]bool{}
		for _, e := range s.Edges {
			if e.Max == 0 && !uncapped[e.To] {
				uncapped[e.To] = true
				preds[e.To] = append(preds[e.To], s)
				indeg[e.To]++
			}
		}
		for _, e := range s.Edges {
			if e.Max > 0 && !uncapped[e.To] {
				n := Exactly(float64(e.Rule.Outcome.MaxIn(sec.p.opts.Settings)))
				capped[e.To] = capped[e.To].Plus(n)
				if retry && e.To.Index <= s.Index {
					extra = extra.Plus(n)
				}
			}
		}
	}
	var order, queue []*Step
	for _, s := range sec.steps {
		if indeg[s] == 0 {
			queue = append(queue, s)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		order = append(order, s)
		seen := map[*Step]bool{}
		for _, e := range s.Edges {
			if e.Max == 0 && !seen[e.To] {
				seen[e.To] = true
				if indeg[e.To]--; indeg[e.To] == 0 {
					queue = append(queue, e.To)
				}
			}
		}
	}
	if len(order) < len(sec.steps) {
		return Unbounded // a cycle without a cap, which the loader rejects
	}
	visits := map[*Step]Bound{}
	total := extra.Plus(onFail)
	for _, s := range order {
		v := capped[s]
		if s == sec.steps[0] {
			v = v.Plus(Exactly(1))
		}
		for _, from := range preds[s] {
			v = v.Plus(visits[from])
		}
		visits[s] = v
		total = total.Plus(v.Times(weight(s)))
	}
	return total
}

// cappedSum bounds one walk of the section by its steps' own caps: each
// step's most visits times its figures a visit, held to its max_tokens and
// max_cost_usd, summed. Only tokens and cost have such caps; the other
// figures are left unbounded here. The walk search cannot apply them, as
// a cap holds the sum of a step's visits, not each one.
func (sec *planSection) cappedSum() vec {
	var out vec
	for i := range out {
		out[i] = Unbounded
	}
	out[figTokens], out[figCost] = Bound{}, Bound{}
	for s, n := range sec.visits() {
		pv := sec.p.perStep[s].PerVisit
		tokens, cost := n.Times(pv.Tokens), n.Times(pv.CostUSD)
		if s.MaxTokens > 0 {
			tokens = tokens.Min(Exactly(float64(s.MaxTokens)))
		}
		if s.MaxCostUSD > 0 {
			cost = cost.Min(Exactly(s.MaxCostUSD))
		}
		out[figTokens] = out[figTokens].Plus(tokens)
		out[figCost] = out[figCost].Plus(cost)
	}
	return out
}
