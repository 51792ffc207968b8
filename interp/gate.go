package interp

import (
	"errors"
	"fmt"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
)

// route evaluates a step's gate: rules in order, first match wins, then
// otherwise; with no match control goes to next.
func (r *run) route(f *frame, s *lang.Step, next string) (string, error) {
	env := r.exprEnv(f)
	for _, rule := range s.Gate.Rules {
		ok, err := rule.When.Eval(env)
		if err != nil {
			r.fail(f, s, fmt.Errorf("gate rule %q (%s): %w", rule.Name, rule.When.Range, err))
			return "", nil
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
	return next, nil
}

func (r *run) decide(f *frame, s *lang.Step, rule *lang.Rule, next string) (string, error) {
	r.event(r.stepEvent(f, s, Event{Type: EventGateDecision, Message: "rule " + rule.Name,
		Details: map[string]any{"rule": rule.Name}}))
	start := r.now()
	to, err := r.apply(f, s, rule, rule.Outcome, next)
	var tripped *capError
	if errors.As(err, &tripped) {
		err = nil
	}
	cond := "otherwise"
	if rule.When != nil {
		cond = rule.When.Source
	}
	r.trace(Span{Step: s.Name, Item: f.key(), Action: "decision", InputSummary: "rule " + rule.Name + ": " + cond,
		OutputSummary: decisionSummary(to, r.st.Meta, f)}, start, err)
	if tripped != nil {
		// The step completed and its gate chose: resume goes on from there.
		r.tripRun(f, s, tripped)
		r.failedInStep = false
		return to, nil
	}
	if err != nil {
		r.fail(f, s, fmt.Errorf("gate rule %q: %w", rule.Name, err))
		return "", nil
	}
	return to, nil
}

// apply carries out an outcome: set, log and event, then goto / finish /
// fail. finish and fail end the frame: the run, or inside a for_each body
// the item.
func (r *run) apply(f *frame, s *lang.Step, rule *lang.Rule, o *lang.Outcome, next string) (string, error) {
	if o.Goto != nil && o.Max > 0 {
		key := s.Name + "/" + rule.Name
		if f.caps[key] >= o.Max {
			r.event(r.stepEvent(f, s, Event{Type: EventCapExhausted,
				Message: fmt.Sprintf("rule %q: goto %s taken %d times (max %d)", rule.Name, o.Goto.Name, f.caps[key], o.Max),
				Details: map[string]any{"rule": rule.Name, "max": o.Max}}))
			return r.apply(f, s, rule, o.Exhausted, next)
		}
		f.caps[key]++
		r.frameChanged(f, s.Name)
		if o.Goto.Index <= s.Index {
			// Going back is a retry of the steps in between.
			if err := r.countRetry(f, s, fmt.Sprintf("rule %q: back to %s (%d/%d)", rule.Name, o.Goto.Name, f.caps[key], o.Max)); err != nil {
				return o.Goto.Name, err
			}
		}
	}
	if o.Set != nil {
		v, diags := o.Set.Value(r.evalCtx(f, nil, o.Set))
		if diags.HasErrors() {
			return "", diagsError(diags)
		}
		if v.IsNull() || !v.CanIterateElements() {
			return "", fmt.Errorf("%s: set needs an object", o.Set.Range())
		}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			name := k.AsString()
			r.vars[name] = ev
			b, err := builtins.CtyToJSON(ev)
			if err != nil {
				return "", fmt.Errorf("set %s: %w", name, err)
			}
			r.st.Vars[name] = b
		}
	}
	ctx := r.evalCtx(f, nil, o.Log, o.Reason, o.Finish, o.Fail)
	msg := ""
	if o.Log != nil {
		m, err := evalString(o.Log, ctx)
		if err != nil {
			return "", err
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
			return "", err
		}
		reason = v
	}
	switch {
	case o.Goto != nil:
		return o.Goto.Name, nil
	case o.Finish != nil:
		status, err := evalString(o.Finish, ctx)
		if err != nil {
			return "", err
		}
		if reservedStatus[status] {
			return "", fmt.Errorf("cannot finish as %q: apl sets that status itself", status)
		}
		if f.item != nil {
			if status == ItemBlocked {
				return "", fmt.Errorf("an item cannot finish as %q: apl sets that status for items whose dependencies failed", status)
			}
			f.item.rec.Status = status
			f.item.rec.Error = reason
		} else {
			r.st.Meta.Status = status
			r.st.Meta.Reason = reason
		}
		return "", nil
	case o.Fail != nil:
		rec, err := evalString(o.Fail, ctx)
		if err != nil {
			return "", err
		}
		if f.item != nil {
			f.item.rec.Status = StepFailed
			f.item.rec.Recommendation = rec
			f.item.rec.Error = reason
		} else {
			r.st.Meta.Status = StatusFailed
			r.st.Meta.Recommendation = rec
			r.st.Meta.Reason = reason
		}
		return "", nil
	}
	return next, nil
}

// reservedStatus are statuses only apl sets.
var reservedStatus = map[string]bool{StatusRunning: true, StatusFailed: true, StatusInterrupted: true, StatusWaiting: true, StepPending: true}

// decisionSummary says where a gate decision led, for the trace.
func decisionSummary(to string, m Meta, f *frame) string {
	switch {
	case to != "":
		return "go to " + to
	case f.item != nil:
		return "item " + f.item.rec.Status
	case m.Status == StatusFailed:
		return "fail: " + m.Recommendation
	}
	return "finish: " + m.Status
}
