package interp

import (
	"fmt"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// route evaluates a step's gate: rules in order, first match wins, then
// otherwise; with no match control goes to next.
func (r *run) route(s *lang.Step, next string) (string, error) {
	env := r.exprEnv(cty.NilVal)
	for _, rule := range s.Gate.Rules {
		ok, err := rule.When.Eval(env)
		if err != nil {
			r.failRun(s, fmt.Errorf("gate rule %q (%s): %w", rule.Name, rule.When.Range, err))
			return "", nil
		}
		if ok {
			return r.decide(s, rule, next)
		}
	}
	if s.Gate.Otherwise != nil {
		return r.decide(s, s.Gate.Otherwise, next)
	}
	r.event(Event{Type: EventGateDecision, Step: s.Name, Message: "no rule matched; continuing",
		Details: map[string]any{"rule": ""}})
	return next, nil
}

func (r *run) decide(s *lang.Step, rule *lang.Rule, next string) (string, error) {
	r.event(Event{Type: EventGateDecision, Step: s.Name, Message: "rule " + rule.Name,
		Details: map[string]any{"rule": rule.Name}})
	to, err := r.apply(s, rule, rule.Outcome, next)
	if err != nil {
		r.failRun(s, fmt.Errorf("gate rule %q: %w", rule.Name, err))
		return "", nil
	}
	return to, nil
}

// apply carries out an outcome: set, log, then goto / finish / fail.
func (r *run) apply(s *lang.Step, rule *lang.Rule, o *lang.Outcome, next string) (string, error) {
	if o.Goto != nil && o.Max > 0 {
		key := s.Name + "/" + rule.Name
		if r.st.Caps[key] >= o.Max {
			r.event(Event{Type: EventCapExhausted, Step: s.Name,
				Message: fmt.Sprintf("rule %q: goto %s taken %d times (max %d)", rule.Name, o.Goto.Name, r.st.Caps[key], o.Max),
				Details: map[string]any{"rule": rule.Name, "max": o.Max}})
			return r.apply(s, rule, o.Exhausted, next)
		}
		r.st.Caps[key]++
	}
	ctx := r.evalCtx(nil, o.Set, o.Log, o.Reason, o.Finish, o.Fail)
	if o.Set != nil {
		v, diags := o.Set.Value(ctx)
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
		ctx = r.evalCtx(nil, o.Log, o.Reason, o.Finish, o.Fail)
	}
	if o.Log != nil {
		msg, err := evalString(o.Log, ctx)
		if err != nil {
			return "", err
		}
		r.event(Event{Type: EventLog, Step: s.Name, Message: msg})
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
		r.st.Meta.Status = status
		r.st.Meta.Reason = reason
		return "", nil
	case o.Fail != nil:
		rec, err := evalString(o.Fail, ctx)
		if err != nil {
			return "", err
		}
		r.st.Meta.Status = StatusFailed
		r.st.Meta.Recommendation = rec
		r.st.Meta.Reason = reason
		return "", nil
	}
	return next, nil
}
