package interp

import (
	"encoding/json"
	"fmt"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// route evaluates a step's gate: rules in order, first match wins, then
// otherwise; with no match control goes to next.
func (r *run) route(f *frame, s *lang.Step, next string) outcome {
	rules := s.Gate.Tried()
	var conds []*lang.Condition
	for _, rule := range rules {
		if rule.When != nil {
			conds = append(conds, rule.When)
		}
	}
	env := r.exprEnv(f, conds...)
	for _, rule := range rules {
		if rule.When == nil { // otherwise
			return r.decide(f, s, rule, next)
		}
		ok, err := rule.When.Eval(env)
		if err != nil {
			return r.failed(f, s, fmt.Errorf("gate rule %q (%s): %w", rule.Name, rule.When.Range, err))
		}
		if ok {
			return r.decide(f, s, rule, next)
		}
	}
	r.event(r.stepEvent(f, s, Event{Type: EventGateDecision, Message: "no rule matched; continuing",
		Details: map[string]any{"rule": ""}}))
	return goTo(next)
}

func (r *run) decide(f *frame, s *lang.Step, rule *lang.Rule, next string) outcome {
	r.event(r.stepEvent(f, s, Event{Type: EventGateDecision, Message: "rule " + rule.Name,
		Details: map[string]any{"rule": rule.Name}}))
	start := r.now()
	o := r.apply(f, s, rule, rule.Outcome, next)
	cond := "otherwise"
	if rule.When != nil {
		cond = rule.When.Source
	}
	var err error
	if o.kind == outFail {
		err = o.err
	}
	r.trace(Span{Step: s.Name, Item: f.key(), Action: "decision", InputSummary: "rule " + rule.Name + ": " + cond,
		OutputSummary: decisionSummary(o, f)}, start, err)
	switch {
	case o.kind == outTrip:
		// The step completed and its gate chose: resume goes on from there.
		return r.tripped(f, s, o.trip, o.next)
	case err != nil:
		return r.failed(f, s, fmt.Errorf("gate rule %q: %w", rule.Name, err))
	}
	return o
}

// apply carries out a rule's outcome: set, log and event, then goto /
// finish / fail. finish and fail end the frame: the run, or inside a
// for_each body the item. A capped goto back counts as a retry of the
// run, which may trip limits.max_retries: an outTrip whose next is where
// the gate led. An outFail with err is a rule that could not be carried
// out.
func (r *run) apply(f *frame, s *lang.Step, rule *lang.Rule, o *lang.Outcome, next string) outcome {
	if max := o.MaxIn(r.fixed); o.Goto != nil && max > 0 {
		key := s.Name + "/" + rule.Name
		if f.caps[key] >= max {
			what := "goto " + o.Goto.Name
			if o.Requeue {
				what = "requeue to " + o.Goto.Name
			}
			r.event(r.stepEvent(f, s, Event{Type: EventCapExhausted,
				Message: fmt.Sprintf("rule %q: %s taken %d times (max %d)", rule.Name, what, f.caps[key], max),
				Details: map[string]any{"rule": rule.Name, "max": max}}))
			// The capped outcome's set still holds (the last feedback, a
			// count); the on_exhausted outcome's own set comes after it.
			if err := r.assign(f, o); err != nil {
				return failWith(err)
			}
			eo := r.apply(f, s, rule, o.Exhausted, next)
			if o.Exhausted.OpenBreaker && eo.err == nil && eo.kind != outTrip {
				t := r.openBreaker(s, fmt.Sprintf("rule %q of step %s: %s taken %d times (max %d)", rule.Name, s.Name, what, f.caps[key], max))
				return outcome{kind: outTrip, trip: t, next: eo.next}
			}
			return eo
		}
		f.caps[key]++
		if o.Goto.Index <= s.Index || o.Requeue {
			// Going back (or restarting the item) is a retry of the steps
			// in between.
			verb := "back to"
			if o.Requeue {
				verb = "requeue to"
			}
			if t := r.countRetry(f, s, fmt.Sprintf("rule %q: %s %s (%d/%d)", rule.Name, verb, o.Goto.Name, f.caps[key], max)); t != nil {
				return outcome{kind: outTrip, trip: t, next: o.Goto.Name}
			}
		}
	}
	if err := r.assign(f, o); err != nil {
		return failWith(err)
	}
	ctx := r.evalCtx(f, nil, o.Log, o.Reason, o.Finish, o.Fail)
	msg := ""
	if o.Log != nil {
		m, err := evalString(o.Log, ctx)
		if err != nil {
			return failWith(err)
		}
		msg = m
		r.event(r.stepEvent(f, s, Event{Type: EventLog, Message: msg}))
	}
	if o.Event != "" {
		details := map[string]any{}
		if o.Details != nil {
			d, err := r.eventDetails(f, o.Details)
			if err != nil {
				return failWith(err)
			}
			details = d
		}
		if _, ok := details["rule"]; !ok {
			details["rule"] = rule.Name
		}
		r.event(r.stepEvent(f, s, Event{Type: o.Event, Message: msg, Details: details}))
	}
	reason := ""
	if o.Reason != nil {
		v, err := evalString(o.Reason, ctx)
		if err != nil {
			return failWith(err)
		}
		reason = v
	}
	switch {
	case o.Requeue && f.item == nil:
		return failWith(fmt.Errorf("requeue outside a for_each item"))
	case o.Requeue:
		return outcome{kind: outRequeue, next: o.Goto.Name}
	case o.Goto != nil:
		return goTo(o.Goto.Name)
	case o.Finish != nil:
		status, err := evalString(o.Finish, ctx)
		if err != nil {
			return failWith(err)
		}
		if lang.ReservedStatus(status, f.item != nil) {
			return failWith(fmt.Errorf("cannot finish as %q: apl sets that status itself", status))
		}
		return outcome{kind: outFinish, status: status, reason: reason}
	case o.Fail != nil:
		rec, err := evalString(o.Fail, ctx)
		if err != nil {
			return failWith(err)
		}
		return outcome{kind: outFail, recommendation: rec, reason: reason}
	}
	return goTo(next)
}

// assign carries out a set: each attribute of the object becomes a var.
func (r *run) assign(f *frame, o *lang.Outcome) error {
	if err := r.assignVars(f, "set", o.Set); err != nil {
		return err
	}
	return r.assignVars(f, "append", o.Append)
}

// assignVars carries out a set (the vars take the object's values) or an
// append (the values are added to the vars: appended).
func (r *run) assignVars(f *frame, verb string, set hcl.Expression) error {
	if set == nil {
		return nil
	}
	v, diags := set.Value(r.evalCtx(f, nil, set))
	if diags.HasErrors() {
		return diagsError(diags)
	}
	if v.IsNull() || !v.CanIterateElements() {
		return fmt.Errorf("%s: %s needs an object", set.Range(), verb)
	}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		name := k.AsString()
		if verb == "append" {
			cur := r.vars[name]
			if cur == cty.NilVal {
				cur = cty.NullVal(cty.DynamicPseudoType)
			}
			var err error
			if t := ev.Type(); !ev.IsNull() && !isSeq(t) && !isObj(t) {
				return fmt.Errorf("%s: append %s: append adds a list or an object; use set to replace a value", set.Range(), name)
			}
			if ev, err = appended(cur, ev, "vars."+name); err != nil {
				return fmt.Errorf("%s: append %s: %w", set.Range(), name, err)
			}
		}
		ev, err := r.varValue(name, ev)
		if err != nil {
			return fmt.Errorf("%s: %s %s: %w", set.Range(), verb, name, err)
		}
		r.vars[name] = ev
		b, err := builtins.CtyToJSON(ev)
		if err != nil {
			return fmt.Errorf("set %s: %w", name, err)
		}
		r.st.Vars[name] = b
	}
	return nil
}

// decisionSummary says where a gate decision led, for the trace.
func decisionSummary(o outcome, f *frame) string {
	var s string
	switch o.kind {
	case outNext:
		s = "go to " + o.next
		if o.next == "" {
			s = "end"
		}
	case outFinish:
		s = "finish: " + o.status
	case outFail:
		s = "fail: " + o.recommendation
	case outRequeue:
		s = "requeue to " + o.next
	default:
		s = o.kind.String()
	}
	if f.item != nil {
		return "item " + s
	}
	return s
}

// eventDetails evaluates a gate event's details object into what the
// event log holds: JSON values, secrets removed.
func (r *run) eventDetails(f *frame, e hcl.Expression) (map[string]any, error) {
	v, diags := e.Value(r.evalCtx(f, nil, e))
	if diags.HasErrors() {
		return nil, diagsError(diags)
	}
	if v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil, fmt.Errorf("%s: details needs an object, not %s", e.Range(), v.Type().FriendlyName())
	}
	b, err := builtins.CtyToJSON(v)
	if err != nil {
		return nil, fmt.Errorf("%s: details: %w", e.Range(), err)
	}
	var m map[string]any
	if err := json.Unmarshal(r.redact.Bytes(b), &m); err != nil {
		return nil, fmt.Errorf("%s: details: %w", e.Range(), err)
	}
	return m, nil
}

// varValue is v converted to the type of the declared var name; v itself
// for a var no var block declares.
func (r *run) varValue(name string, v cty.Value) (cty.Value, error) {
	dv := r.pb.Var(name)
	if dv == nil {
		return v, nil
	}
	cv, err := convert.Convert(v, dv.Type)
	if err != nil {
		return v, fmt.Errorf("var %q is declared %s: %v", name, dv.Type.FriendlyNameForConstraint(), err)
	}
	return cv, nil
}

// appended is cur with v added: a list's elements after cur's (a list,
// or null), an object's attributes into cur (an object or map, or null),
// each by the same rule where both hold a list or an object under one
// name; any other value replaces what cur held there.
func appended(cur, v cty.Value, path string) (cty.Value, error) {
	if v.IsNull() || !v.IsKnown() {
		return cur, nil
	}
	empty := cur.IsNull() || !cur.IsKnown()
	switch t := v.Type(); {
	case isSeq(t):
		if !empty && !isSeq(cur.Type()) {
			return cty.NilVal, fmt.Errorf("%s is %s; append adds a list only to a list", path, cur.Type().FriendlyName())
		}
		var elems []cty.Value
		if !empty {
			elems = cur.AsValueSlice()
		}
		elems = append(elems, v.AsValueSlice()...)
		if len(elems) == 0 {
			return cty.EmptyTupleVal, nil
		}
		return cty.TupleVal(elems), nil
	case isObj(t):
		if !empty && !isObj(cur.Type()) {
			return cty.NilVal, fmt.Errorf("%s is %s; append adds an object only to an object or a map", path, cur.Type().FriendlyName())
		}
		out := map[string]cty.Value{}
		if !empty {
			for it := cur.ElementIterator(); it.Next(); {
				k, e := it.Element()
				out[k.AsString()] = e
			}
		}
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			prev, ok := out[k.AsString()]
			if !ok {
				prev = cty.NullVal(cty.DynamicPseudoType)
			}
			ne, err := appended(prev, e, path+"."+k.AsString())
			if err != nil {
				return cty.NilVal, err
			}
			out[k.AsString()] = ne
		}
		return cty.ObjectVal(out), nil
	}
	return v, nil
}

// isSeq and isObj are the kinds append adds to: a sequence's elements go
// at the end, an object's (or map's) attributes are merged.
func isSeq(t cty.Type) bool { return t.IsListType() || t.IsTupleType() || t.IsSetType() }
func isObj(t cty.Type) bool { return t.IsObjectType() || t.IsMapType() }
