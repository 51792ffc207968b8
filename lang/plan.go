package lang

import (
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/expr-lang/expr/ast"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// PlanOptions are what a plan cannot learn from the playbook: the sizes
// known only at run time, and the defaults of the actions, which the
// builtins own.
type PlanOptions struct {
	// Items is the most items a for_each list holds (apl plan --items);
	// 0 leaves a list whose length is not a constant unbounded.
	Items int
	// PromptTokens is the largest prompt of one agent call, in tokens
	// (apl plan --prompt-tokens); 0 leaves tokens and cost unbounded unless
	// a cap holds them.
	PromptTokens int
	// ShellTimeout limits a shell action of a step without a timeout
	// (builtins.DefaultTimeout).
	ShellTimeout time.Duration
	// AgentTimeout is one agent call's limit for a driver type whose block
	// sets no timeout; the type is "" for an agent that names no driver
	// (run with --agent-cmd). nil: unbounded.
	AgentTimeout func(driverType string) time.Duration
	// AnswerTokens is a driver type's own cap on an answer, in tokens, when
	// its block sets no max_tokens; 0 for none. nil: none.
	AnswerTokens func(driverType string) int
	// Settings are the values of the playbook's settings that read inputs
	// (Playbook.PlanSettings: from apl plan --mode and --input); nil: their
	// values under the inputs' defaults.
	Settings FixedSettings
}

// Plan is the worst case of a run, computed from the step graph before
// it runs: every gate rule is taken to match whenever it may, every
// action to use all its retries and re-runs, every call all its time.
type Plan struct {
	Playbook string `json:"playbook"`
	// Total is the run's worst case, within the playbook's limits.
	Total Figures `json:"total"`
	// Steps are every step's worst case, in AllSteps order.
	Steps []*StepPlan `json:"steps"`
	// Path is a run that makes the most agent calls.
	Path []PathStep `json:"path"`
	// Unbounded says which factors leave a figure without a bound, and
	// where.
	Unbounded []Factor `json:"unbounded"`
	// Capped lists the limits that hold a total below its bound.
	Capped []Cap `json:"capped"`
	// Approximate is set when the paths through the caps were too many to
	// search: the figures are then a looser bound (every capped edge taken
	// its max times from every step it leaves) and Path is empty.
	Approximate bool `json:"approximate"`
}

// Figures are the bounds of one run, one step or one visit of a step.
type Figures struct {
	Calls   Bound `json:"agent_calls"`
	Tokens  Bound `json:"tokens"`
	CostUSD Bound `json:"cost_usd"`
	Seconds Bound `json:"seconds"`
	// Retries counts what limits.max_retries counts: retry retries, check
	// re-runs, and capped gotos to the same step or an earlier one.
	Retries Bound `json:"retries"`
}

// StepPlan is one step's worst case.
type StepPlan struct {
	Name string `json:"name"`
	// ForEach names the for_each step whose body holds the step.
	ForEach   string    `json:"for_each,omitempty"`
	OnFailure bool      `json:"on_failure,omitempty"`
	Finally   bool      `json:"finally,omitempty"`
	Range     hcl.Range `json:"-"`
	// Visits is the most times the step runs in a run (in a for_each
	// body: over all its items).
	Visits Bound `json:"visits"`
	// Runs is the most runs of its action in one visit: the first, its
	// retries and its checks' re-runs.
	Runs int `json:"runs_per_visit"`
	// CallsPerRun is 2 for an agent action with returns (one re-prompt),
	// 1 for one without, 0 for other actions.
	CallsPerRun int `json:"calls_per_run"`
	// Items is a for_each step's most items; Concurrency how many of them
	// plan counts as running at once (see forEachSeconds).
	Items       *Bound  `json:"items,omitempty"`
	Concurrency int     `json:"concurrency,omitempty"`
	PerVisit    Figures `json:"per_visit"`
	// Total is Visits times PerVisit, within the step's max_tokens and
	// max_cost_usd.
	Total Figures `json:"total"`
}

// Factor is what leaves a figure of a step unbounded.
type Factor struct {
	// Figure is "tokens", "cost_usd", "seconds", or "items" for a for_each
	// list of unknown length, which leaves every figure of its body
	// unbounded.
	Figure string    `json:"figure"`
	Step   string    `json:"step"`
	Range  hcl.Range `json:"-"`
	Why    string    `json:"why"`
}

// Cap is a limit that holds a total below what the steps could spend.
type Cap struct {
	Figure string  `json:"figure"`
	Limit  string  `json:"limit"`
	Value  float64 `json:"value"`
	// Call is, for tokens and cost, the most one agent call may reserve
	// before it starts (a call starts only if that fits in what is left):
	// its step's cap, else its driver's ceiling. Unbounded when some call
	// has neither: that call is a probe, and may overrun the cap by what
	// it spends.
	Call *Bound `json:"call,omitempty"`
}

// PathStep is one step of the worst path.
type PathStep struct {
	Step      string `json:"step"`
	OnFailure bool   `json:"on_failure,omitempty"`
	Finally   bool   `json:"finally,omitempty"`
	// Skipped: its when is false, so nothing runs.
	Skipped bool `json:"skipped,omitempty"`
	// Rule is the gate rule taken; Exhausted that its cap was used up, so
	// its on_exhausted outcome ran.
	Rule      string `json:"rule,omitempty"`
	Exhausted bool   `json:"exhausted,omitempty"`
	// Fails: the step fails (its action, or its gate's fail), and the run
	// (or the item) with it.
	Fails bool `json:"fails,omitempty"`
	// Items and Body: a for_each step's items and one item's worst path;
	// Concurrency, how many items plan counts as running at once.
	Items       *Bound     `json:"items,omitempty"`
	Concurrency int        `json:"concurrency,omitempty"`
	Body        []PathStep `json:"body,omitempty"`
}

// The figures, as indexes into a vec.
const (
	figCalls = iota
	figTokens
	figCost
	figSeconds
	figRetries
	nFigures
)

type vec [nFigures]Bound

func (v vec) figures() Figures {
	return Figures{Calls: v[figCalls], Tokens: v[figTokens], CostUSD: v[figCost], Seconds: v[figSeconds], Retries: v[figRetries]}
}

// ComputePlan works out the worst case of a run of pb. It runs nothing:
// it reads the compiled graph, its caps, retries and checks, for_each
// lists, drivers and limits.
func ComputePlan(pb *Playbook, opts PlanOptions) *Plan {
	return newPlanner(pb, opts, 0).plan()
}

type planner struct {
	pb      *Playbook
	opts    PlanOptions
	depth   int // sub-playbook nesting, against a cycle the loader missed
	out     *Plan
	perStep map[*Step]*StepPlan
	approx  bool
	// call is the most one agent call may reserve, tokens and cost.
	call vec
}

func newPlanner(pb *Playbook, opts PlanOptions, depth int) *planner {
	return &planner{pb: pb, opts: opts, depth: depth, perStep: map[*Step]*StepPlan{}}
}

func (p *planner) plan() *Plan {
	p.out = &Plan{Playbook: p.pb.Name, Path: []PathStep{}, Unbounded: []Factor{}, Capped: []Cap{}}
	// Per-visit figures first: bodies before their for_each steps.
	for _, s := range p.pb.AllSteps() {
		if s.Parent != nil {
			p.visitCost(s)
		}
	}
	for _, s := range p.pb.AllSteps() {
		if s.Parent == nil {
			p.visitCost(s)
		}
	}
	main := p.section(p.pb.Steps, nil)
	onFail := p.section(p.pb.OnFailure, nil)
	// The finally steps run once after every ending, whatever the main
	// steps (and on_failure's) did: their worst adds to every walk.
	fin := p.section(p.pb.Finally, nil)
	// Most visits of each step.
	visits := map[*Step]Bound{}
	for _, sec := range []*planSection{main, onFail, fin} {
		for s, v := range sec.visits() {
			visits[s] = v
		}
	}
	for _, s := range p.pb.AllSteps() {
		if s.ForEach == nil {
			continue
		}
		body := p.section(s.ForEach.Steps, nil)
		items := *p.perStep[s].Items
		for b, v := range body.visits() {
			visits[b] = visits[s].Times(items).Times(v)
		}
	}
	var sum vec
	for _, s := range p.pb.AllSteps() {
		sp := p.perStep[s]
		sp.Visits = visits[s]
		pv := sp.PerVisit
		t := vec{pv.Calls, pv.Tokens, pv.CostUSD, pv.Seconds, pv.Retries}
		for i := range t {
			t[i] = sp.Visits.Times(t[i])
		}
		// A step's caps count over the run, or in a for_each body over
		// one item's walk: each item keeps its own record of the step.
		walks := Exactly(1)
		if s.Parent != nil {
			walks = visits[s.Parent].Times(*p.perStep[s.Parent].Items)
		}
		if s.MaxTokens > 0 {
			t[figTokens] = t[figTokens].Min(walks.Times(Exactly(float64(s.MaxTokens))))
		}
		if s.MaxCostUSD > 0 {
			t[figCost] = t[figCost].Min(walks.Times(Exactly(s.MaxCostUSD)))
		}
		sp.Total = t.figures()
		for i := range t {
			sum[i] = sum[i].Plus(t[i])
		}
		p.out.Steps = append(p.out.Steps, sp)
	}
	// The worst run, figure by figure. For tokens and cost the sum over
	// steps also bounds it, and is lower where a step's own cap holds a
	// step in a loop.
	var total vec
	var onFailTotal, finTotal vec
	for i := range total {
		of := onFail.worst(i)
		onFailTotal[i] = of
		main.onFail[i] = of
		finTotal[i] = fin.worst(i)
		total[i] = main.worst(i).Plus(finTotal[i])
		if i == figTokens || i == figCost {
			total[i] = total[i].Min(sum[i])
		}
	}
	p.out.Path = append(main.path(figCalls, onFail), fin.path(figCalls, nil)...)
	if lim := p.pb.Limits; lim != nil {
		capAt := func(i int, name string, v float64) {
			if Exactly(v).Less(total[i]) {
				total[i] = Exactly(v)
				c := Cap{Figure: figureNames[i], Limit: name, Value: v}
				if i == figTokens || i == figCost {
					b := p.call[i]
					c.Call = &b
				}
				p.out.Capped = append(p.out.Capped, c)
			}
		}
		if lim.MaxTokens > 0 {
			capAt(figTokens, "limits.max_tokens", float64(lim.MaxTokens))
		}
		if lim.MaxCostUSD > 0 {
			capAt(figCost, "limits.max_cost_usd", lim.MaxCostUSD)
		}
		if lim.MaxRetries > 0 {
			capAt(figRetries, "limits.max_retries", float64(lim.MaxRetries))
		}
		if lim.Timeout > 0 {
			// on_failure and finally steps run without the timeout.
			if b := Exactly(lim.Timeout.Seconds()).Plus(onFailTotal[figSeconds]).Plus(finTotal[figSeconds]); b.Less(total[figSeconds]) {
				total[figSeconds] = b
				p.out.Capped = append(p.out.Capped, Cap{Figure: "seconds", Limit: "limits.timeout", Value: lim.Timeout.Seconds()})
			}
		}
	}
	p.out.Total = total.figures()
	p.out.Approximate = p.approx
	return p.out
}

var figureNames = [nFigures]string{"agent_calls", "tokens", "cost_usd", "seconds", "retries"}

// unbounded records a factor that leaves a figure of s without a bound.
func (p *planner) unbounded(figure string, s *Step, rng hcl.Range, why string) {
	p.out.Unbounded = append(p.out.Unbounded, Factor{Figure: figure, Step: s.Name, Range: rng, Why: why})
}

// visitCost works out the figures of one visit of s.
func (p *planner) visitCost(s *Step) {
	sp := &StepPlan{Name: s.Name, OnFailure: s.OnFailure, Finally: s.Finally, Range: s.DeclRange, Runs: 1}
	if s.Parent != nil {
		sp.ForEach = s.Parent.Name
	}
	p.perStep[s] = sp
	if s.Retry != nil {
		sp.Runs += s.Retry.Max
	}
	for _, c := range s.Checks {
		if c.OnFail == OnFailRetry {
			sp.Runs += c.Max
		}
	}
	runs := Exactly(float64(sp.Runs))
	var v vec
	v[figRetries] = Exactly(float64(sp.Runs - 1))
	var backoff time.Duration
	if s.Retry != nil && s.Retry.Backoff > 0 {
		// 10s, 20s, 40s, ...: the waits before each retry.
		backoff = s.Retry.Backoff * time.Duration(math.Pow(2, float64(s.Retry.Max))-1)
	}
	limit := func(d time.Duration) Bound {
		if s.TimeoutIn(p.opts.Settings) > 0 {
			return Exactly(s.TimeoutIn(p.opts.Settings).Seconds())
		}
		return Exactly(d.Seconds())
	}
	switch a := s.Action.(type) {
	case nil:
		if s.ForEach != nil {
			items := p.items(s)
			sp.Items = &items
			body := p.section(s.ForEach.Steps, nil)
			capped := body.cappedSum()
			for i := range v {
				v[i] = items.Times(body.worst(i).Min(capped[i]))
			}
			// Calls, tokens, cost and retries count every item; the wall
			// clock only the items that cannot run at once.
			var seconds Bound
			sp.Concurrency, seconds = forEachSeconds(s.ForEach, p.opts.Settings, items, body.worst(figSeconds))
			v[figSeconds] = seconds
		}
	case *Shell:
		d := p.opts.ShellTimeout
		if d == 0 && s.TimeoutIn(p.opts.Settings) == 0 {
			p.unbounded("seconds", s, s.DeclRange, "a shell action without a timeout and no default limit")
			v[figSeconds] = Unbounded
		} else {
			v[figSeconds] = runs.Times(limit(d))
		}
	case *AgentCall:
		sp.CallsPerRun = 1
		if s.Returns != cty.NilType {
			sp.CallsPerRun = 2 // the answer and one re-prompt
		}
		// Each fallback agent may be asked as the first was.
		sp.CallsPerRun *= len(a.Agents())
		calls := runs.Times(Exactly(float64(sp.CallsPerRun)))
		v[figCalls] = calls
		c := p.callCost(s, a)
		for _, fb := range a.Fallback {
			c = c.worst(p.callCost(s, a.WithAgent(fb)))
		}
		// What a call reserves before it starts: the step's cap, else the
		// driver's ceiling.
		for i, b := range map[int]Bound{figTokens: c.tokens, figCost: c.cost} {
			switch {
			case i == figTokens && s.MaxTokens > 0:
				b = Exactly(float64(s.MaxTokens))
			case i == figCost && s.MaxCostUSD > 0:
				b = Exactly(s.MaxCostUSD)
			}
			if p.call[i].Less(b) {
				p.call[i] = b
			}
		}
		v[figTokens] = calls.Times(c.tokens)
		v[figCost] = calls.Times(c.cost)
		if s.TimeoutIn(p.opts.Settings) > 0 {
			v[figSeconds] = runs.Times(Exactly(s.TimeoutIn(p.opts.Settings).Seconds()))
		} else {
			v[figSeconds] = calls.Times(c.seconds)
		}
	case *Call:
		// file, json and git helpers: no notable time.
		if s.TimeoutIn(p.opts.Settings) > 0 {
			v[figSeconds] = runs.Times(Exactly(s.TimeoutIn(p.opts.Settings).Seconds()))
		}
	case *Ask:
		p.unbounded("seconds", s, a.DeclRange, "an ask waits for a human's answer")
		v[figSeconds] = Unbounded
	case *SubPlaybook:
		if a.Playbook == nil || p.depth > 16 {
			for i := range v {
				v[i] = Unbounded
			}
			p.unbounded("items", s, a.DeclRange, fmt.Sprintf("the sub-playbook %q could not be planned", a.Source))
			break
		}
		sub := newPlanner(a.Playbook, p.opts, p.depth+1).plan()
		if sub.Approximate {
			p.approx = true
		}
		for _, f := range sub.Unbounded {
			f.Step = s.Name + " → " + f.Step
			p.out.Unbounded = append(p.out.Unbounded, f)
		}
		t := sub.Total
		sv := vec{t.Calls, t.Tokens, t.CostUSD, t.Seconds, t.Retries}
		for i := range v {
			v[i] = runs.Times(sv[i])
		}
		if s.TimeoutIn(p.opts.Settings) > 0 {
			v[figSeconds] = v[figSeconds].Min(runs.Times(Exactly(s.TimeoutIn(p.opts.Settings).Seconds())))
		}
		v[figRetries] = v[figRetries].Plus(Exactly(float64(sp.Runs - 1)))
	}
	if backoff > 0 {
		v[figSeconds] = v[figSeconds].Plus(Exactly(backoff.Seconds()))
	}
	if s.MaxTokens > 0 {
		v[figTokens] = v[figTokens].Min(Exactly(float64(s.MaxTokens)))
	}
	if s.MaxCostUSD > 0 {
		v[figCost] = v[figCost].Min(Exactly(s.MaxCostUSD))
	}
	sp.PerVisit = v.figures()
}

// forEachSeconds bounds the wall clock of a for_each step whose items take
// at most item each, and says how many items it counts as running at once.
// Items run concurrency at a time, and fewer when a limit's smallest max is
// lower (every item may share that key): a new item starts when one ends,
// so the worst is ceil(items/n) items one after another. An item that
// waits for others (depends_on) may wait for all of them, a chain: then
// they run one at a time. A requeued item gives up its slot between
// attempts; the slots are then all busy (at most items×item/n) except while
// the last item to end runs alone (at most item), which is the bound.
func forEachSeconds(fe *ForEach, fs FixedSettings, items, item Bound) (int, Bound) {
	n := max(fe.ConcurrencyIn(fs), 1)
	for _, l := range fe.Limits {
		caps, def := l.CapsIn(fs)
		for _, m := range caps {
			if m > 0 {
				n = min(n, m)
			}
		}
		if def > 0 {
			n = min(n, def)
		}
	}
	if fe.DependsOn != nil {
		n = 1
	}
	if items.Unbounded || n == 1 {
		return n, items.Times(item)
	}
	waves := Exactly(math.Ceil(items.N / float64(n)))
	for _, s := range fe.Steps {
		if s.Gate == nil {
			continue
		}
		for _, r := range s.Gate.Tried() {
			if o := r.Outcome; o != nil && o.Requeue {
				waves = Exactly(math.Min(items.N, items.N/float64(n)+1))
			}
		}
	}
	return n, waves.Times(item)
}

// items is the most items of a for_each step: --items, else a constant
// list's length.
func (p *planner) items(s *Step) Bound {
	if p.opts.Items > 0 {
		return Exactly(float64(p.opts.Items))
	}
	if l := s.ForEach.List; l != nil && l.Program != nil {
		switch n := l.Program.Node().(type) {
		case *ast.ArrayNode:
			return Exactly(float64(len(n.Nodes)))
		case *ast.ConstantNode:
			// expr folds a constant list into one value.
			if v := reflect.ValueOf(n.Value); v.Kind() == reflect.Slice || v.Kind() == reflect.Array {
				return Exactly(float64(v.Len()))
			}
		}
	}
	rng := s.DeclRange
	if s.ForEach.List != nil {
		rng = s.ForEach.List.Range
	}
	p.unbounded("items", s, rng, "the for_each list's length is known only at run time; apl plan --items N assumes at most N items")
	return Unbounded
}

// callBound is the worst of one agent call.
type callBound struct{ tokens, cost, seconds Bound }

// worst is the larger of two bounds, figure by figure.
func (c callBound) worst(o callBound) callBound {
	for _, f := range []struct{ mine, other *Bound }{{&c.tokens, &o.tokens}, {&c.cost, &o.cost}, {&c.seconds, &o.seconds}} {
		if f.mine.Less(*f.other) {
			*f.mine = *f.other
		}
	}
	return c
}

// callCost reads an agent call's driver: its time limit, its cap on an
// answer and the price of the call's model.
func (p *planner) callCost(s *Step, a *AgentCall) callBound {
	var c callBound
	dtype, cfg, dname := p.driverOf(a.Agent)
	// Time.
	if d, ok := durationSetting(cfg["timeout"]); ok {
		c.seconds = Exactly(d.Seconds())
	} else if p.opts.AgentTimeout != nil && p.opts.AgentTimeout(dtype) > 0 {
		c.seconds = Exactly(p.opts.AgentTimeout(dtype).Seconds())
	} else {
		c.seconds = Unbounded
		if s.TimeoutIn(p.opts.Settings) == 0 {
			p.unbounded("seconds", s, a.DeclRange, "the agent's driver has no time limit; set a step timeout")
		}
	}
	// Tokens: the prompt and the answer.
	answer, ok := intSetting(cfg["max_tokens"])
	if !ok && p.opts.AnswerTokens != nil {
		answer = p.opts.AnswerTokens(dtype)
	}
	prompt := p.opts.PromptTokens
	switch {
	case prompt > 0 && answer > 0:
		c.tokens = Exactly(float64(prompt + answer))
	default:
		c.tokens = Unbounded
		if s.MaxTokens == 0 {
			var why []string
			if prompt == 0 {
				why = append(why, "the prompt's size is known only at run time (apl plan --prompt-tokens N assumes at most N)")
			}
			if answer == 0 {
				what := "the agent names no driver"
				if dname != "" {
					what = fmt.Sprintf("driver %q sets no max_tokens", dname)
				}
				why = append(why, what+", so an answer has no size limit")
			}
			p.unbounded("tokens", s, a.DeclRange, joinWhy(why))
		}
	}
	// Cost: the call's model, priced by its driver.
	model := a.Model
	if model == "" {
		model, _ = stringSetting(cfg["model"])
	}
	price, ok := priceOf(cfg["prices"], model)
	if a.ModelExpr != nil {
		ok = false // priced by a model known only at the call
	}
	switch {
	case !ok:
		c.cost = Unbounded
		if s.MaxCostUSD == 0 {
			what := "the agent names no driver, so no prices"
			switch {
			case a.ModelExpr != nil:
				what = "the call's model is computed at run time, so its price is not known"
			case dname != "" && model == "":
				what = fmt.Sprintf("the call names no model to look up in driver %q's prices", dname)
			case dname != "":
				what = fmt.Sprintf("driver %q has no price for model %q", dname, model)
			}
			p.unbounded("cost_usd", s, a.DeclRange, what)
		}
	default:
		in := math.Max(price.input, math.Max(price.cacheRead, price.cacheWrite))
		c.cost = Exactly(in / 1e6).Times(Exactly(float64(prompt))).Plus(Exactly(price.output / 1e6).Times(Exactly(float64(answer))))
		if prompt == 0 && in > 0 || answer == 0 && price.output > 0 {
			c.cost = Unbounded
			if s.MaxCostUSD == 0 {
				p.unbounded("cost_usd", s, a.DeclRange, "the call's tokens are unbounded")
			}
		}
	}
	return c
}

func joinWhy(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += "; "
		}
		out += p
	}
	return out
}

// driverOf returns the type, settings and block name of an agent's
// driver: "" and none for an agent that names none.
func (p *planner) driverOf(ag *Agent) (string, map[string]cty.Value, string) {
	if ag == nil || ag.Driver == "" {
		return "", nil, ""
	}
	if dr := p.pb.Drivers[ag.Driver]; dr != nil {
		return dr.Type, dr.Config, dr.Name
	}
	return ag.Driver, nil, ag.Driver // a preset named directly
}

type price struct{ input, output, cacheRead, cacheWrite float64 }

// CallCeiling is the most one agent call through a driver with settings
// cfg may use when it sends a prompt of promptTokens tokens and names
// model ("" for the driver's own model setting): the prompt and the
// driver's max_tokens for the answer, priced at the driver's dearest
// input price (cache reads and writes included) and its output price.
// tokensOK is false when the driver sets no max_tokens; costOK is false
// when it has no price for the model too. A run reserves this before
// the call starts (interp), and apl plan bounds a call by it.
func CallCeiling(cfg map[string]cty.Value, model string, promptTokens int) (tokens int, cost float64, tokensOK, costOK bool) {
	answer, ok := intSetting(cfg["max_tokens"])
	if !ok {
		return 0, 0, false, false
	}
	if model == "" {
		model, _ = stringSetting(cfg["model"])
	}
	tokens = promptTokens + answer
	p, ok := priceOf(cfg["prices"], model)
	if !ok {
		return tokens, 0, true, false
	}
	in := math.Max(p.input, math.Max(p.cacheRead, p.cacheWrite))
	return tokens, in/1e6*float64(promptTokens) + p.output/1e6*float64(answer), true, true
}

// priceOf reads a model's prices from a driver's prices setting.
func priceOf(prices cty.Value, model string) (price, bool) {
	if prices == cty.NilVal || prices.IsNull() || !prices.IsKnown() || model == "" {
		return price{}, false
	}
	t := prices.Type()
	if !(t.IsObjectType() || t.IsMapType()) {
		return price{}, false
	}
	if t.IsObjectType() && !t.HasAttribute(model) {
		return price{}, false
	}
	if t.IsMapType() && !prices.HasIndex(cty.StringVal(model)).True() {
		return price{}, false
	}
	var m cty.Value
	if t.IsObjectType() {
		m = prices.GetAttr(model)
	} else {
		m = prices.Index(cty.StringVal(model))
	}
	var out price
	for name, dst := range map[string]*float64{"input": &out.input, "output": &out.output, "cache_read": &out.cacheRead, "cache_write": &out.cacheWrite} {
		if !(m.Type().IsObjectType() && m.Type().HasAttribute(name)) && !(m.Type().IsMapType() && m.HasIndex(cty.StringVal(name)).True()) {
			continue
		}
		var f cty.Value
		if m.Type().IsObjectType() {
			f = m.GetAttr(name)
		} else {
			f = m.Index(cty.StringVal(name))
		}
		if f.IsNull() || f.Type() != cty.Number {
			continue
		}
		*dst, _ = f.AsBigFloat().Float64()
	}
	return out, true
}

func durationSetting(v cty.Value) (time.Duration, bool) {
	s, ok := stringSetting(v)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	return d, err == nil && d > 0
}

func intSetting(v cty.Value) (int, bool) {
	if v == cty.NilVal {
		return 0, false
	}
	n, ok := wholeNumber(v)
	return n, ok && n > 0
}

func stringSetting(v cty.Value) (string, bool) {
	if v == cty.NilVal || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}
