package interp

import (
	"encoding/json"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// breakerValue is run.circuit_breaker: the breaker's part of the state.
func (r *run) breakerValue() cty.Value {
	b := r.st.Breaker
	state := b.State
	if state == "" {
		state = BreakerClosed
	}
	str := func(s string) cty.Value {
		if s == "" {
			return cty.NullVal(cty.String)
		}
		return cty.StringVal(s)
	}
	at := func(t *time.Time) cty.Value {
		if t == nil {
			return cty.NullVal(cty.String)
		}
		return cty.StringVal(t.UTC().Format(time.RFC3339))
	}
	return cty.ObjectVal(map[string]cty.Value{
		"state":                   cty.StringVal(state),
		"consecutive_no_progress": cty.NumberIntVal(int64(b.ConsecutiveNoProgress)),
		"consecutive_same_error":  cty.NumberIntVal(int64(b.ConsecutiveSameError)),
		"last_error":              str(b.LastError),
		"reason":                  str(b.Reason),
		"opened_at":               at(b.OpenedAt),
		"cooldown_until":          at(b.CooldownUntil),
	})
}

// eventsValue is run.events: the playbook's own events (a gate's event,
// with its details) among those the state holds, oldest first, at most
// the newest lang.MaxRunEvents. The state holds at least the run's
// newest 1000 events of every kind (keepEvents); older ones are in the
// events archive, which run.events does not read.
func (r *run) eventsValue() cty.Value {
	var out []cty.Value
	for i := len(r.st.Events) - 1; i >= 0 && len(out) < lang.MaxRunEvents; i-- {
		e := r.st.Events[i]
		if lang.IsAplEvent(e.Type) {
			continue
		}
		details := cty.EmptyObjectVal
		if len(e.Details) > 0 {
			if b, err := json.Marshal(e.Details); err == nil {
				if v, err := builtins.JSONToCty(b); err == nil {
					details = v
				}
			}
		}
		str := func(s string) cty.Value {
			if s == "" {
				return cty.NullVal(cty.String)
			}
			return cty.StringVal(s)
		}
		out = append(out, cty.ObjectVal(map[string]cty.Value{
			"timestamp": cty.StringVal(e.Time.UTC().Format(time.RFC3339)),
			"event":     cty.StringVal(e.Type),
			"step":      str(e.Step),
			"item":      str(e.Item),
			"message":   str(e.Message),
			"details":   details,
		}))
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	if len(out) == 0 {
		return cty.EmptyTupleVal
	}
	return cty.TupleVal(out)
}

// readsEvents reports whether an expression may read run.events: run as
// a whole, run.events, or run by a computed key.
func readsEvents(exprs []hcl.Expression) bool {
	for _, e := range exprs {
		if e == nil {
			continue
		}
		for _, tr := range e.Variables() {
			if tr.RootName() != lang.RootRun {
				continue
			}
			if len(tr) < 2 {
				return true
			}
			switch t := tr[1].(type) {
			case hcl.TraverseAttr:
				if t.Name == "events" {
					return true
				}
			default:
				return true
			}
		}
	}
	return false
}

// condsReadRun reports whether a condition reads run.
func condsReadRun(conds []*lang.Condition) bool {
	for _, c := range conds {
		if c != nil && c.Run {
			return true
		}
	}
	return false
}
