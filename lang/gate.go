package lang

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var gateSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "rule", LabelNames: []string{"name"}},
		{Type: "otherwise"},
	},
}

// outcomeAttributes are the actions a gate rule, an otherwise block and an
// on_exhausted block share.
var outcomeAttributes = []hcl.AttributeSchema{
	{Name: "log"},
	{Name: "event"},
	{Name: "details"},
	{Name: "set"},
	{Name: "append"},
	{Name: "goto"},
	{Name: "requeue"},
	{Name: "max"},
	{Name: "finish"},
	{Name: "fail"},
	{Name: "reason"},
	{Name: "open_breaker"},
}

var ruleSchema = &hcl.BodySchema{
	Attributes: append([]hcl.AttributeSchema{{Name: "when", Required: true}}, outcomeAttributes...),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "on_exhausted"}},
}

var otherwiseSchema = &hcl.BodySchema{
	Attributes: outcomeAttributes,
	Blocks:     []hcl.BlockHeaderSchema{{Type: "on_exhausted"}},
}

var exhaustedSchema = &hcl.BodySchema{
	Attributes: outcomeAttributes,
}

// Gate is an ordered decision tree: the first rule whose condition holds
// decides; Otherwise decides when none does.
type Gate struct {
	Rules     []*Rule
	Otherwise *Rule // nil when the gate has none
	DeclRange hcl.Range
	// Implicit is set for a step's own set, log, event and details
	// written without a gate: the gate is their otherwise alone.
	Implicit bool
}

// Rule is one branch of a gate.
type Rule struct {
	Name      string // "otherwise" for the otherwise block
	When      *Condition
	Outcome   *Outcome
	DeclRange hcl.Range
}

// Outcome is what a gate rule does once chosen. Goto, Finish and Fail are
// exclusive; with none of them control goes to the step's Next.
type Outcome struct {
	Log   hcl.Expression // a line to log; may be nil
	Event string         // an event to record, with Log as its message
	// Details is an object written into the event's details; nil: none.
	Details hcl.Expression
	Set     hcl.Expression // an object whose attributes are assigned to vars
	// Append is an object whose attributes are added to vars, after Set:
	// a list's elements at the end of the var's list, an object's
	// attributes into the var's map, by the same rule inside them.
	Append hcl.Expression
	Goto   *Step
	// Requeue, in a for_each body, sends the item to the back of the ready
	// queue instead of going to Goto at once: the item gives up its slot
	// and restarts at Goto after the items that never started. Goto is
	// then the body step it restarts at; the graph sees a capped goto.
	Requeue bool
	Max     int // cap on taking Goto in one run; 0 = no cap
	// MaxFrom, when max reads inputs, is the setting a run fixes it
	// from; Max is then its value under the inputs' defaults.
	MaxFrom *Setting
	Finish  hcl.Expression // finish the run with this status
	Fail    hcl.Expression // fail the run with this recommendation
	Reason  hcl.Expression // why, for Finish and Fail
	// Exhausted runs instead of this outcome once Goto was taken Max times.
	Exhausted *Outcome
	// OpenBreaker, on an on_exhausted outcome, opens the circuit breaker
	// once the cap is used up: the run stops, and resumes after the
	// cooldown at where the outcome leads (its goto, else next).
	OpenBreaker bool
	DeclRange   hcl.Range
}

// decodeGateBlock reads a gate: ordered rules, first match wins, and an
// otherwise.
func (l *loader) decodeGateBlock(s *Step, b *hcl.Block, env *condEnv) (*Gate, hcl.Diagnostics) {
	content, diags := b.Body.Content(gateSchema)
	g := &Gate{DeclRange: b.DefRange}
	seen := map[string]*Rule{}
	for _, rb := range content.Blocks {
		switch rb.Type {
		case "rule":
			name := rb.Labels[0]
			r := &Rule{Name: name, DeclRange: rb.DefRange}
			if prev := seen[name]; prev != nil {
				diags = append(diags, duplicate("rule", name, prev.DeclRange, rb))
			}
			seen[name] = r
			rc, d := rb.Body.Content(ruleSchema)
			diags = append(diags, d...)
			if a := rc.Attributes["when"]; a != nil {
				c, d := l.decodeCondition(a, env)
				diags = append(diags, d...)
				r.When = c
				l.noteConditionRefs(c)
			}
			o, d := l.decodeOutcome(s, name, rc, rb.DefRange, true)
			diags = append(diags, d...)
			r.Outcome = o
			if g.Otherwise != nil {
				diags = append(diags, warnDiag("Rule after otherwise",
					fmt.Sprintf("Rule %q comes after the otherwise block; rules are tried in order, otherwise last, so write it before otherwise.", name), rb.DefRange))
			}
			g.Rules = append(g.Rules, r)
		case "otherwise":
			if g.Otherwise != nil {
				diags = append(diags, errDiag("Duplicate otherwise", "A gate has at most one otherwise block.", rb.DefRange))
				continue
			}
			rc, d := rb.Body.Content(otherwiseSchema)
			diags = append(diags, d...)
			o, d := l.decodeOutcome(s, "otherwise", rc, rb.DefRange, true)
			diags = append(diags, d...)
			g.Otherwise = &Rule{Name: "otherwise", Outcome: o, DeclRange: rb.DefRange}
		}
	}
	if g.Otherwise == nil {
		diags = append(diags, warnDiag("Gate without otherwise",
			fmt.Sprintf("The gate of step %q has no otherwise block; when no rule matches, the run continues to the next step. Add otherwise { ... } to say so.", s.Name), b.DefRange))
	}
	return g, diags
}

// decodeOutcome reads the actions shared by rules, otherwise and
// on_exhausted.
func (l *loader) decodeOutcome(s *Step, rule string, c *hcl.BodyContent, rng hcl.Range, allowExhausted bool) (*Outcome, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	o := &Outcome{DeclRange: rng}
	scope := refScope{body: s.Parent, step: s, what: "a gate action"}
	if a := c.Attributes["log"]; a != nil {
		o.Log = a.Expr
		l.deferRefs(a.Expr, scope)
	}
	if a := c.Attributes["event"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		switch {
		case d.HasErrors():
		case !hclIdent(v):
			diags = append(diags, errDiag("Invalid event name", fmt.Sprintf("An event name is a word such as rollback_initiated, not %q.", v), a.Expr.Range()))
		case IsAplEvent(v):
			diags = append(diags, errDiag("Reserved event name",
				fmt.Sprintf("apl records %q events itself, and the event log could not tell this one from them. Name the playbook's event otherwise, e.g. rollback_initiated.", v), a.Expr.Range()))
		}
		o.Event = v
	}
	if a := c.Attributes["details"]; a != nil {
		o.Details = a.Expr
		l.deferRefs(a.Expr, scope)
		if _, d := hcl.ExprMap(a.Expr); d.HasErrors() {
			diags = append(diags, errDiag("Invalid details",
				"details is an object written into the event, e.g. details = { task = item.id, commit = steps.commit.output.sha }.", a.Expr.Range()))
		}
		if c.Attributes["event"] == nil {
			diags = append(diags, errDiag("details without event",
				"details belong to the event this outcome records; name it with event = \"task_completed\".", a.NameRange))
		}
	}
	if a := c.Attributes["set"]; a != nil {
		o.Set = a.Expr
		l.deferRefs(a.Expr, scope)
		if _, d := hcl.ExprMap(a.Expr); d.HasErrors() {
			diags = append(diags, errDiag("Invalid set", "set is an object of values to assign, e.g. set = { recommendation = \"halt\" }.", a.Expr.Range()))
		}
	}
	if a := c.Attributes["append"]; a != nil {
		o.Append = a.Expr
		l.deferRefs(a.Expr, scope)
		pairs, d := hcl.ExprMap(a.Expr)
		if d.HasErrors() {
			diags = append(diags, errDiag("Invalid append", "append is an object of values to add to vars, e.g. append = { notes = [steps.verify.output.summary] }.", a.Expr.Range()))
		}
		diags = append(diags, setAndAppended(c.Attributes["set"], pairs)...)
	}
	for name, dst := range map[string]*hcl.Expression{"finish": &o.Finish, "fail": &o.Fail, "reason": &o.Reason} {
		if a := c.Attributes[name]; a != nil {
			*dst = a.Expr
			l.deferRefs(a.Expr, scope)
		}
	}
	if a := c.Attributes["finish"]; a != nil {
		if v, d := a.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.String && !v.IsNull() && ReservedStatus(v.AsString(), s.Parent != nil) {
			what := "A run"
			if s.Parent != nil {
				what = "An item"
			}
			diags = append(diags, errDiag("Reserved status",
				fmt.Sprintf("%s cannot finish as %q: apl sets that status itself. Use completed, a status of your own (mapped with exit_codes), or fail = \"...\" to fail.", what, v.AsString()), a.Expr.Range()))
		}
	}
	if a := c.Attributes["open_breaker"]; a != nil {
		v, d := constBool(a)
		diags = append(diags, d...)
		switch {
		case d.HasErrors():
		case allowExhausted:
			diags = append(diags, errDiag("open_breaker outside on_exhausted",
				"open_breaker opens the circuit breaker when a cap is used up; put it in the capped outcome's on_exhausted block.", a.NameRange))
		case v && l.pb.CircuitBreaker == nil:
			diags = append(diags, errDiag("open_breaker without circuit_breaker",
				"This playbook has no circuit_breaker block, so there is no breaker to open. Add circuit_breaker { } (its cooldown says how long resume waits), or fail = \"halt\" to stop the run.", a.NameRange))
		case v && (c.Attributes["finish"] != nil || c.Attributes["fail"] != nil || c.Attributes["requeue"] != nil):
			diags = append(diags, errDiag("Conflicting gate actions",
				"An outcome that opens the circuit breaker stops the run there; finish, fail and requeue would never happen. Keep goto (where the resumed run goes on) or nothing (the step's next).", a.NameRange))
		default:
			o.OpenBreaker = v
		}
	}
	var routes []*hcl.Attribute
	for _, name := range []string{"goto", "requeue", "finish", "fail"} {
		if a := c.Attributes[name]; a != nil {
			routes = append(routes, a)
		}
	}
	if len(routes) > 1 {
		diags = append(diags, errDiag("Conflicting gate actions",
			fmt.Sprintf("%s and %s cannot both be set: an outcome goes to a step, requeues the item, finishes the run, or fails it.", routes[0].Name, routes[1].Name), routes[1].NameRange))
	}
	if a := c.Attributes["requeue"]; a != nil && c.Attributes["goto"] == nil {
		diags = append(diags, l.decodeRequeue(s, o, a, c.Attributes["max"] != nil)...)
	}
	if a := c.Attributes["goto"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			t, d := l.target(s, v, a.Expr.Range())
			diags = append(diags, d...)
			o.Goto = t
			l.gotoRanges[o] = a.Expr.Range()
		}
	}
	if a := c.Attributes["max"]; a != nil && !allowExhausted {
		diags = append(diags, errDiag("max in on_exhausted",
			"An on_exhausted outcome runs once the cap is used up; it cannot have a cap of its own. Remove max here.", a.NameRange))
	} else if a != nil {
		var v int
		var d hcl.Diagnostics
		if len(a.Expr.Variables()) > 0 {
			var f Fixed
			o.MaxFrom, f, d = l.decodeSetting(a, s.Name+"."+rule+".max", SettingCount)
			v = f.N
		} else {
			v, d = constInt(a)
			if !d.HasErrors() && v < 1 {
				d = append(d, errDiag("Invalid max", "max is how many times the goto may be taken in one run; it must be at least 1.", a.Expr.Range()))
			}
		}
		diags = append(diags, d...)
		if d.HasErrors() || v < 1 {
			l.badMax[o] = true
		}
		if c.Attributes["goto"] == nil && c.Attributes["requeue"] == nil {
			diags = append(diags, errDiag("max without goto", "max caps a goto or a requeue; this outcome has neither to cap.", a.NameRange))
		}
		o.Max = v
	}
	for _, eb := range c.Blocks {
		if eb.Type != "on_exhausted" {
			continue
		}
		if !allowExhausted || o.Max == 0 && c.Attributes["max"] == nil {
			diags = append(diags, errDiag("on_exhausted without max",
				"on_exhausted says what happens once a capped goto was taken max times; set max on this outcome.", eb.DefRange))
			continue
		}
		ec, d := eb.Body.Content(exhaustedSchema)
		diags = append(diags, d...)
		eo, d := l.decodeOutcome(s, rule, ec, eb.DefRange, false)
		diags = append(diags, d...)
		o.Exhausted = eo
	}
	if o.Max > 0 && o.Exhausted == nil {
		diags = append(diags, errDiag("Cap without on_exhausted",
			fmt.Sprintf("This %s may be taken %d times; say what happens after that with on_exhausted { fail = \"halt\" } (or finish, or goto).", o.route(), o.Max), rng))
	}
	return o, diags
}

// decodeRequeue reads requeue = true (restart at the body's first step)
// or requeue = "STEP" (restart at that body step). It is only for a gate in
// a for_each body, and always capped: each requeue runs the body again.
func (l *loader) decodeRequeue(s *Step, o *Outcome, a *hcl.Attribute, capped bool) hcl.Diagnostics {
	if s.Parent == nil {
		return hcl.Diagnostics{errDiag("requeue outside a for_each",
			"requeue sends a for_each item back to the queue; only a gate of a step nested in a for_each step can take it. Use goto to loop here.", a.NameRange)}
	}
	v, d := constValue(a)
	if d.HasErrors() {
		return d
	}
	var diags hcl.Diagnostics
	switch {
	case v.Type() == cty.Bool && !v.IsNull():
		if v.False() {
			return nil
		}
		o.Goto = s.Parent.ForEach.Steps[0]
	case v.Type() == cty.String && !v.IsNull():
		t, d := l.target(s, v.AsString(), a.Expr.Range())
		if d.HasErrors() {
			return d
		}
		o.Goto = t
	default:
		return hcl.Diagnostics{errDiag("Invalid requeue",
			"requeue is true (restart the item at the body's first step) or the name of the body step to restart at.", a.Expr.Range())}
	}
	o.Requeue = true
	l.gotoRanges[o] = a.Expr.Range()
	if !capped {
		l.badMax[o] = true // reported here, not again as a cycle
		diags = append(diags, errDiag("requeue without max",
			"Each requeue runs the item's body again; cap it with max = N and say what happens then with on_exhausted.", a.NameRange))
	}
	return diags
}

// route names how the outcome loops, for messages.
func (o *Outcome) route() string {
	if o.Requeue {
		return "requeue"
	}
	return "goto"
}

// ReservedStatus reports whether only apl sets status, so that a gate
// cannot finish with it: the statuses of a run's and a step's life, and,
// for an item of a for_each step (item), "blocked", which marks items
// whose dependencies failed. This is the one list: validate rejects a
// constant finish status with it, and the interpreter a computed one.
func ReservedStatus(status string, item bool) bool {
	switch status {
	case "running", "failed", "interrupted", "waiting", "pending":
		return true
	case "blocked":
		return item
	}
	return false
}

// AplEvents are the names of the events apl records itself in a run's
// event log; interp's Event* constants are checked against this list by a
// test. A gate's event may not take one of them.
var AplEvents = []string{
	"run_started", "run_resumed", "run_completed", "run_failed", "run_interrupted", "run_waiting",
	"step_started", "step_completed", "step_failed", "step_skipped", "step_reused", "step_retried",
	"gate_decision", "cap_exhausted", "budget_enforced", "log", "check_failed",
	"circuit_breaker_opened", "circuit_breaker_closed", "human_decision",
	"item_started", "item_completed", "item_failed", "item_blocked", "item_requeued", "deadlock",
	"agent_progress", "document_failed",
}

// IsAplEvent reports whether apl records events named name itself.
func IsAplEvent(name string) bool { return slices.Contains(AplEvents, name) }

// Routes reports whether the outcome moves control somewhere other than
// the step's next.
func (o *Outcome) Routes() bool { return o.Goto != nil || o.Finish != nil || o.Fail != nil }

// setAndAppended refuses a var that one outcome both sets and appends to:
// which would come first is not obvious from the text.
func setAndAppended(set *hcl.Attribute, appended []hcl.KeyValuePair) hcl.Diagnostics {
	if set == nil {
		return nil
	}
	pairs, d := hcl.ExprMap(set.Expr)
	if d.HasErrors() {
		return nil
	}
	names := map[string]bool{}
	for _, p := range pairs {
		if k, d := p.Key.Value(nil); !d.HasErrors() && k.Type() == cty.String && k.IsKnown() && !k.IsNull() {
			names[k.AsString()] = true
		}
	}
	var diags hcl.Diagnostics
	for _, p := range appended {
		if k, d := p.Key.Value(nil); !d.HasErrors() && k.Type() == cty.String && k.IsKnown() && !k.IsNull() && names[k.AsString()] {
			diags = append(diags, errDiag("Var both set and appended",
				fmt.Sprintf("This outcome sets var %q and appends to it; write the whole value in set, or only append.", k.AsString()), p.Key.Range()))
		}
	}
	return diags
}
