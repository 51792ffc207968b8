package interp

import (
	"fmt"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// route evaluates a step's gate: rules in order, first match wins, then
// otherwise; with no match control goes to next.
func (r *run) route(f *frame, s *lang.Step, next string) outcome {
	conds := make([]*lang.Condition, len(s.Gate.Rules))
	for i, rule := range s.Gate.Rules {
		conds[i] = rule.When
	}
	env := r.exprEnv(f, conds...)
	for _, rule := range s.Gate.Rules {
		ok, err := rule.When.Eval(env)
		if err != nil {
			return r.failed(f, s, fmt.Errorf("gate rule %q (%s): %w", rule.Name, rule.When.Range, err))
		}
		if ok {
			return r.decide(f, s, rule, next)
		}
	}
	if s.Gate.Otherwise != nil {
		return r.decide(f, s, s.Gate.Otherwise, next)
	}
	r.event(r.stepEvent(f, s, Event{Type: EventGateDecision, Message: "no rule matched; continuing",
		Details: map[string]any{"rule": ""}}))
	return goTo(next)
}

func (r *run) decide(f *frame, s *lang.Step, rule *lang.Rule, next string) outcome {
	r.event(r.stepEvent(f, s, Event{Type: EventGateDecision, Message: "rule " + rule.Name,
		Details: map[string]any{"rule": rule.Name}}))
	start := r.now()
	o, t, err := r.apply(f, s, rule, rule.Outcome, next)
	cond := "otherwise"
	if rule.When != nil {
		cond = rule.When.Source
	}
	r.trace(Span{Step: s.Name, Item: f.key(), Action: "decision", InputSummary: "rule " + rule.Name + ": " + cond,
		OutputSummary: decisionSummary(o, f)}, start, err)
	if t != nil {
		// The step completed and its gate chose: resume goes on from there.
		return r.tripped(f, s, t, o.next)
	}
	if err != nil {
		return r.failed(f, s, fmt.Errorf("gate rule %q: %w", rule.Name, err))
	}
	return o
}

// apply carries out a rule's outcome: set, log and event, then goto /
// finish / fail. finish and fail end the frame: the run, or inside a
// for_each body the item. A capped goto back counts as a retry of the
// run, which may trip limits.max_retries.
func (r *run) apply(f *frame, s *lang.Step, rule *lang.Rule, o *lang.Outcome, next string) (outcome, *trip, error) {
	var t *trip
	if o.Goto != nil && o.Max > 0 {
		key := s.Name + "/" + rule.Name
		if f.caps[key] >= o.Max {
			r.event(r.stepEvent(f, s, Event{Type: EventCapExhausted,
				Message: fmt.Sprintf("rule %q: goto %s taken %d times (max %d)", rule.Name, o.Goto.Name, f.caps[key], o.Max),
				Details: map[string]any{"rule": rule.Name, "max": o.Max}}))
			return r.apply(f, s, rule, o.Exhausted, next)
		}
		f.caps[key]++
		if o.Goto.Index <= s.Index {
			// Going back is a retry of the steps in between.
			if t = r.countRetry(f, s, fmt.Sprintf("rule %q: back to %s (%d/%d)", rule.Name, o.Goto.Name, f.caps[key], o.Max)); t != nil {
				return goTo(o.Goto.Name), t, nil
			}
		}
	}
	if o.Set != nil {
		v, diags := o.Set.Value(r.evalCtx(f, nil, o.Set))
		if diags.HasErrors() {
			return outcome{}, nil, diagsError(diags)
		}
		if v.IsNull() || !v.CanIterateElements() {
			return outcome{}, nil, fmt.Errorf("%s: set needs an object", o.Set.Range())
		}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			name := k.AsString()
			ev, err := r.varValue(name, ev)
			if err != nil {
				return outcome{}, nil, fmt.Errorf("%s: set %s: %w", o.Set.Range(), name, err)
			}
			r.vars[name] = ev
			b, err := builtins.CtyToJSON(ev)
			if err != nil {
				return outcome{}, nil, fmt.Errorf("set %s: %w", name, err)
			}
			r.st.Vars[name] = b
		}
	}
	ctx := r.evalCtx(f, nil, o.Log, o.Reason, o.Finish, o.Fail)
	msg := ""
	if o.Log != nil {
		m, err := evalString(o.Log, ctx)
		if err != nil {
			return outcome{}, nil, err
		}
		msg = m
		r.event(r.stepEvent(f, s, Event{Type: EventLog, Message: msg}))
	}
	if o.Event != "" {
		r.event(r.stepEvent(f, s, Event{Type: o.Event, Message: msg, Details: map[string]any{"rule": rule.Name}}))
	}
	reason := ""
	if o.Reason != nil {
		v, err := evalString(o.Reason, ctx)
		if err != nil {
			return outcome{}, nil, err
		}
		reason = v
	}
	switch {
	case o.Goto != nil:
		return goTo(o.Goto.Name), nil, nil
	case o.Finish != nil:
		status, err := evalString(o.Finish, ctx)
		if err != nil {
			return outcome{}, nil, err
		}
		if lang.ReservedStatus(status, f.item != nil) {
			return outcome{}, nil, fmt.Errorf("cannot finish as %q: apl sets that status itself", status)
		}
		return outcome{kind: outFinish, status: status, reason: reason}, nil, nil
	case o.Fail != nil:
		rec, err := evalString(o.Fail, ctx)
		if err != nil {
			return outcome{}, nil, err
		}
		return outcome{kind: outFail, recommendation: rec, reason: reason}, nil, nil
	}
	return goTo(next), nil, nil
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
	default:
		s = o.kind.String()
	}
	if f.item != nil {
		return "item " + s
	}
	return s
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
