package interp

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

func (r *run) itemFrame(it *item) *frame {
	outs := r.itemOutputs[it.parent.Name][it.rec.Key]
	if outs == nil {
		outs = map[string]cty.Value{}
		if r.itemOutputs[it.parent.Name] == nil {
			r.itemOutputs[it.parent.Name] = map[string]map[string]cty.Value{}
		}
		r.itemOutputs[it.parent.Name][it.rec.Key] = outs
	}
	return &frame{recs: it.rec.Steps, outputs: outs, caps: it.rec.Caps, item: it}
}

// items returns the step's items: from the state when the run already
// computed them, else from the for_each expression.
func (r *run) items(s *lang.Step) (map[string]*item, error) {
	run := r.st.Steps[s.Name].Runs
	if recs, ok := r.st.Items[s.Name]; ok && r.st.ItemsRun[s.Name] == run {
		return r.restoreItems(s, recs)
	}
	// A new run of the step (a goto back, a retry): new items.
	delete(r.itemOutputs, s.Name)
	fe := s.ForEach
	v, err := fe.List.Value(r.exprEnv(r.top(), fe.List))
	if err != nil {
		return nil, fmt.Errorf("for_each %q: %w", fe.List.Source, err)
	}
	list, ok := v.([]any)
	if !ok {
		if v == nil {
			list = nil
		} else {
			return nil, fmt.Errorf("for_each %q gave %s, not a list", fe.List.Source, lang.Kind(v))
		}
	}
	items := map[string]*item{}
	recs := map[string]*ItemRecord{}
	var base map[string]any
	for i, raw := range list {
		js, err := json.Marshal(raw)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		val, err := decodeItem(js, fe.ItemType)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		it := &item{parent: s, value: val, rec: &ItemRecord{Index: i, Status: StepPending,
			Current: fe.Steps[0].Name, Value: js, Steps: map[string]*StepRecord{}, Caps: map[string]int{}}}
		for _, ns := range fe.Steps {
			it.rec.Steps[ns.Name] = &StepRecord{Status: StepPending}
		}
		// Every item sees the same run, with its nested steps pending: the
		// environment is built once and only item changes.
		if base == nil {
			base = r.exprEnv(&frame{item: it, recs: it.rec.Steps, outputs: map[string]cty.Value{}}, itemConds(fe)...)
		}
		env := maps.Clone(base)
		env[lang.RootItem] = lang.ExprValue(val)
		env[lang.RootItemAttempt] = 1
		it.rec.Key = strconv.Itoa(i)
		if fe.Key != nil {
			k, err := evalKey(fe.Key, env)
			if err != nil {
				return nil, fmt.Errorf("item %d: key: %w", i, err)
			}
			it.rec.Key = k
		}
		if _, dup := recs[it.rec.Key]; dup {
			return nil, fmt.Errorf("two items have the key %q; keys must be unique", it.rec.Key)
		}
		if fe.DependsOn != nil {
			deps, err := fe.DependsOn.Value(env)
			if err != nil {
				return nil, fmt.Errorf("item %q: depends_on: %w", it.rec.Key, err)
			}
			if it.rec.DependsOn, err = keyList(deps); err != nil {
				return nil, fmt.Errorf("item %q: depends_on: %w", it.rec.Key, err)
			}
		}
		if fe.Priority != nil {
			p, err := fe.Priority.Value(env)
			if err != nil {
				return nil, fmt.Errorf("item %q: priority: %w", it.rec.Key, err)
			}
			if it.rec.Priority, err = toFloat(p); err != nil {
				return nil, fmt.Errorf("item %q: priority: %w", it.rec.Key, err)
			}
		}
		for _, lim := range fe.Limits {
			k, err := evalKey(lim.Key, env)
			if err != nil {
				return nil, fmt.Errorf("item %q: limit %q: %w", it.rec.Key, lim.Name, err)
			}
			if it.rec.Limits == nil {
				it.rec.Limits = map[string]string{}
			}
			it.rec.Limits[lim.Name] = k
		}
		items[it.rec.Key] = it
		recs[it.rec.Key] = it.rec
	}
	if r.st.Items == nil {
		r.st.Items = map[string]map[string]*ItemRecord{}
	}
	r.st.Items[s.Name] = recs
	if r.st.ItemsRun == nil {
		r.st.ItemsRun = map[string]int{}
	}
	r.st.ItemsRun[s.Name] = run
	for k := range recs {
		r.changes.item(s.Name, k)
	}
	return items, r.commit(nil, nil, true)
}

// retryItems sets a for_each step that failed for its items up to be
// resumed: its next run keeps the items, completed ones stay so, and the
// failed and blocked ones run again, from the nested step each was in.
// It reports whether there were such items.
func (r *run) retryItems(s *lang.Step) bool {
	rec, recs := r.st.Steps[s.Name], r.st.Items[s.Name]
	if rec == nil || recs == nil || r.st.ItemsRun[s.Name] != rec.Runs {
		return false
	}
	again := false
	for k, it := range recs {
		if it.Status != StepFailed && it.Status != ItemBlocked {
			continue
		}
		again = true
		it.Status, it.Error, it.Recommendation = StepPending, "", ""
		if it.Current == "" {
			it.Current = s.ForEach.Steps[0].Name
		}
		r.changes.item(s.Name, k)
	}
	if again {
		r.st.ItemsRun[s.Name] = rec.Runs + 1
	}
	return again
}

// restoreItems rebuilds items from the state; an item that was running
// when the run stopped goes back to pending at its current step.
func (r *run) restoreItems(s *lang.Step, recs map[string]*ItemRecord) (map[string]*item, error) {
	items := map[string]*item{}
	for key, rec := range recs {
		val, err := decodeItem(rec.Value, s.ForEach.ItemType)
		if err != nil {
			return nil, fmt.Errorf("item %q in the state: %w", key, err)
		}
		it := &item{parent: s, rec: rec, value: val}
		if rec.Status == StepRunning {
			rec.Status = StepPending
		}
		outs := map[string]cty.Value{}
		for _, ns := range s.ForEach.Steps {
			sr := rec.Steps[ns.Name]
			if sr == nil {
				sr = &StepRecord{Status: StepPending}
				rec.Steps[ns.Name] = sr
			}
			if sr.Status == StepRunning {
				undoAttempt(sr)
			}
			js, err := recordedOutput(r.dir.path, sr)
			if err != nil {
				return nil, fmt.Errorf("item %q, step %q in the state: %w", key, ns.Name, err)
			}
			if len(js) > 0 {
				v, err := decodeOutput(ns, js)
				if err != nil {
					return nil, fmt.Errorf("item %q, step %q in the state: %w", key, ns.Name, err)
				}
				outs[ns.Name] = v
			}
		}
		if r.itemOutputs[s.Name] == nil {
			r.itemOutputs[s.Name] = map[string]map[string]cty.Value{}
		}
		r.itemOutputs[s.Name][key] = outs
		items[key] = it
	}
	return items, nil
}

// itemConds are the expressions computed for each item of a for_each.
func itemConds(fe *lang.ForEach) []*lang.Condition {
	conds := []*lang.Condition{fe.Key, fe.DependsOn, fe.Priority}
	for _, lim := range fe.Limits {
		conds = append(conds, lim.Key)
	}
	return conds
}

func decodeItem(js []byte, t cty.Type) (cty.Value, error) {
	if t == cty.NilType || t == cty.DynamicPseudoType {
		return builtins.JSONToCty(js)
	}
	return agent.Decode(js, t)
}

// decodeOutput reads a recorded output back: by the step's returns type
// when it has one and the output conforms (a failed step may have
// recorded something else), else as it is.
func decodeOutput(s *lang.Step, js []byte) (cty.Value, error) {
	if s.Returns != cty.NilType && s.ForEach == nil {
		if v, err := agent.Decode(js, s.Returns); err == nil {
			return v, nil
		}
	}
	return builtins.JSONToCty(js)
}

// finishedOK reports whether an item ended well: completed, or finished
// with a status of the playbook's own.
func finishedOK(status string) bool {
	switch status {
	case StepPending, StepRunning, StepFailed, ItemBlocked:
		return false
	}
	return true
}

// forEachOutput builds the step's output and lists the items left
// pending (a deadlock), each with what it waits on. halted says the
// scheduler stopped starting items (fail_fast): pending items were not
// started, not deadlocked.
func (r *run) forEachOutput(s *lang.Step, items map[string]*item, halted bool) (cty.Value, []string) {
	vals := map[string]cty.Value{}
	var completed, failed, blocked int
	var stuck []string
	var deadlocked []cty.Value
	keys := make([]string, 0, len(items))
	for k := range items {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return items[keys[i]].rec.Index < items[keys[j]].rec.Index })
	for _, k := range keys {
		it := items[k]
		switch {
		case it.rec.Status == StepFailed:
			failed++
		case it.rec.Status == ItemBlocked:
			blocked++
		case it.rec.Status == StepPending && halted:
		case it.rec.Status == StepPending:
			var waits []string
			for _, d := range it.rec.DependsOn {
				dep, ok := items[d]
				switch {
				case !ok:
					waits = append(waits, fmt.Sprintf("%q (no such item)", d))
				case !finishedOK(dep.rec.Status):
					waits = append(waits, fmt.Sprintf("%q (%s)", d, dep.rec.Status))
				}
			}
			stuck = append(stuck, fmt.Sprintf("item %q waits on %s", k, strings.Join(waits, ", ")))
			deadlocked = append(deadlocked, cty.StringVal(k))
		default:
			completed++
		}
		outs := map[string]cty.Value{}
		for name, v := range r.itemOutputs[s.Name][k] {
			outs[name] = v
		}
		vals[k] = cty.ObjectVal(map[string]cty.Value{
			"key":            cty.StringVal(k),
			"status":         cty.StringVal(it.rec.Status),
			"recommendation": cty.StringVal(it.rec.Recommendation),
			"error":          cty.StringVal(it.rec.Error),
			"outputs":        cty.ObjectVal(outs),
		})
	}
	itemsVal := cty.MapValEmpty(cty.DynamicPseudoType)
	if len(vals) > 0 {
		itemsVal = cty.ObjectVal(vals)
	}
	dl := cty.ListValEmpty(cty.String)
	if len(deadlocked) > 0 {
		dl = cty.ListVal(deadlocked)
	}
	return cty.ObjectVal(map[string]cty.Value{
		"items":      itemsVal,
		"completed":  cty.NumberIntVal(int64(completed)),
		"failed":     cty.NumberIntVal(int64(failed)),
		"blocked":    cty.NumberIntVal(int64(blocked)),
		"deadlocked": dl,
	}), stuck
}

func evalKey(c *lang.Condition, env map[string]any) (string, error) {
	v, err := c.Value(env)
	if err != nil {
		return "", err
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case int:
		return strconv.Itoa(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case nil:
		return "", fmt.Errorf("%q gave null", c.Source)
	}
	return "", fmt.Errorf("%q gave %s; a key is a string or a number", c.Source, lang.Kind(v))
}

func keyList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		if s, ok := v.(string); ok {
			return []string{s}, nil
		}
		return nil, fmt.Errorf("want a list of keys, got %s", lang.Kind(v))
	}
	out := make([]string, 0, len(list))
	for _, x := range list {
		switch x := x.(type) {
		case string:
			out = append(out, x)
		case float64:
			out = append(out, strconv.FormatFloat(x, 'f', -1, 64))
		case int:
			out = append(out, strconv.Itoa(x))
		default:
			return nil, fmt.Errorf("a key is a string or a number, not %s", lang.Kind(x))
		}
	}
	return out, nil
}

func toFloat(v any) (float64, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case int:
		return float64(v), nil
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("want a number, got %s", lang.Kind(v))
}
