package interp

import (
	"container/heap"
	"context"
	"encoding/json"
	"errors"
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

// forEach runs a for_each step: it computes the items once (they are kept
// in the state, so resume runs the same items), then schedules them as a
// task graph. An item is ready when every item it depends on completed;
// ready items start in order of priority (lower first), then list order,
// while fewer than concurrency run and every limit has room. An item that
// fails does not stop the others; items that depend on it are blocked.
// When nothing runs, nothing is ready and items remain, the graph is
// deadlocked: the step fails and says which items wait on what.
//
// Each item runs in its own goroutine; the run's lock is held except while
// an action waits, so state changes stay serialized.
func (r *run) forEach(ctx context.Context, s *lang.Step) (cty.Value, error) {
	items, err := r.items(s)
	if err != nil {
		return cty.NilVal, err
	}
	fe := s.ForEach
	g := newItemGraph(items)
	r.blockDependents(s, g, g.failedKeys())

	done := make(chan *item, fe.Concurrency)
	running := 0
	var commitErr error
	inUse := map[string]int{} // "limit=value" → items running
	var waiting bool
	for {
		if ctx.Err() == nil && !waiting && r.tripped == nil && commitErr == nil {
			var held []*item // ready, but a limit is full
			for running < fe.Concurrency && g.ready.Len() > 0 {
				it := heap.Pop(&g.ready).(*item)
				if it.rec.Status != StepPending {
					continue
				}
				if !r.limitsAllow(fe, it, inUse) {
					held = append(held, it)
					continue
				}
				running++
				for name, v := range it.rec.Limits {
					inUse[name+"="+v]++
				}
				it.rec.Status = StepRunning
				r.store.touchItem(s.Name, it.rec.Key)
				r.event(Event{Type: EventItemStarted, Step: s.Name, Item: it.rec.Key})
				go func(it *item) {
					r.mu.Lock()
					err := r.runItem(ctx, it)
					if errors.Is(err, errWaiting) {
						waiting = true
					}
					r.mu.Unlock()
					done <- it
				}(it)
			}
			for _, it := range held {
				heap.Push(&g.ready, it)
			}
		}
		if running == 0 {
			break
		}
		var it *item
		r.unlocked(func() { it = <-done })
		running--
		for name, v := range it.rec.Limits {
			inUse[name+"="+v]--
		}
		switch {
		case finishedOK(it.rec.Status):
			g.finished(it)
		case it.rec.Status == StepFailed:
			r.blockDependents(s, g, []string{it.rec.Key})
		case it.rec.Status == StepPending:
			// Interrupted or waiting: it runs again on resume.
		}
		if err := r.commit(true); err != nil && commitErr == nil {
			// Start nothing more; let the running items end first.
			commitErr = err
		}
	}
	if commitErr != nil {
		return cty.NilVal, commitErr
	}
	if ctx.Err() != nil {
		return cty.NilVal, ctx.Err()
	}
	if waiting {
		return cty.NilVal, errWaiting
	}
	out, stuck := r.forEachOutput(s, items)
	if r.tripped != nil {
		return out, r.tripped
	}
	if len(stuck) > 0 {
		r.event(Event{Type: EventDeadlock, Step: s.Name, Message: "deadlock: " + strings.Join(stuck, "; "),
			Details: map[string]any{"items": len(stuck)}})
		return out, fmt.Errorf("deadlock: nothing runs and nothing is ready: %s (needs intervention)", strings.Join(stuck, "; "))
	}
	return out, nil
}

// itemGraph tracks which items can run: each item's count of
// dependencies not yet finished, who depends on whom, and a queue of
// ready items ordered by priority, then list order.
type itemGraph struct {
	items      map[string]*item
	waitingOn  map[string]int
	dependents map[string][]string
	ready      readyQueue
}

func newItemGraph(items map[string]*item) *itemGraph {
	g := &itemGraph{items: items, waitingOn: map[string]int{}, dependents: map[string][]string{}}
	for k, it := range items {
		for _, d := range it.rec.DependsOn {
			g.dependents[d] = append(g.dependents[d], k)
			if dep, ok := items[d]; !ok || !finishedOK(dep.rec.Status) {
				g.waitingOn[k]++
			}
		}
	}
	for k, it := range items {
		if it.rec.Status == StepPending && g.waitingOn[k] == 0 {
			g.ready = append(g.ready, it)
		}
	}
	heap.Init(&g.ready)
	return g
}

// finished releases the items that waited on it.
func (g *itemGraph) finished(it *item) {
	for _, k := range g.dependents[it.rec.Key] {
		g.waitingOn[k]--
		if dep := g.items[k]; g.waitingOn[k] == 0 && dep.rec.Status == StepPending {
			heap.Push(&g.ready, dep)
		}
	}
}

func (g *itemGraph) failedKeys() []string {
	var out []string
	for k, it := range g.items {
		if it.rec.Status == StepFailed || it.rec.Status == ItemBlocked {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// readyQueue is a heap of ready items: lower priority first, then list
// order.
type readyQueue []*item

func (q readyQueue) Len() int { return len(q) }
func (q readyQueue) Less(i, j int) bool {
	a, b := q[i].rec, q[j].rec
	if a.Priority != b.Priority {
		return a.Priority < b.Priority
	}
	return a.Index < b.Index
}
func (q readyQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *readyQueue) Push(x any)   { *q = append(*q, x.(*item)) }
func (q *readyQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// runItem runs an item's steps until it ends, fails or is interrupted.
// The caller holds the run's lock.
func (r *run) runItem(ctx context.Context, it *item) error {
	f := r.itemFrame(it)
	for it.rec.Status == StepRunning && it.rec.Current != "" {
		if r.tripped != nil {
			it.rec.Status = StepPending
			return nil
		}
		ns := r.pb.Step(it.rec.Current)
		if ns == nil {
			it.rec.Status = StepFailed
			it.rec.Error = fmt.Sprintf("state names step %q, which the playbook does not have", it.rec.Current)
			break
		}
		next, err := r.step(ctx, f, ns)
		if r.tripped != nil && it.rec.Status == StepRunning {
			// A run-wide cap or the breaker tripped in this item's step:
			// the item failed with it, and the run stops.
			it.rec.Status = StepFailed
			it.rec.Error = r.tripped.msg
		}
		if err != nil {
			// Interrupted or waiting: the item goes back to pending at the
			// same step.
			it.rec.Status = StepPending
			r.store.touchItem(it.parent.Name, it.rec.Key)
			r.commit(false)
			return err
		}
		if it.rec.Status == StepRunning {
			it.rec.Current = next
		}
		r.store.touchItem(it.parent.Name, it.rec.Key)
		if it.rec.Status != StepRunning || it.rec.Current == "" {
			break // the item ends; the scheduler commits that
		}
		if err := r.commit(true); err != nil {
			return err
		}
	}
	switch it.rec.Status {
	case StepRunning:
		it.rec.Status = StepCompleted
		it.rec.Current = ""
		r.event(Event{Type: EventItemCompleted, Step: it.parent.Name, Item: it.rec.Key})
	case StepFailed:
		r.event(Event{Type: EventItemFailed, Step: it.parent.Name, Item: it.rec.Key, Message: it.rec.Error})
	default:
		it.rec.Current = ""
		r.event(Event{Type: EventItemCompleted, Step: it.parent.Name, Item: it.rec.Key, Message: "finished: " + it.rec.Status})
	}
	r.store.touchItem(it.parent.Name, it.rec.Key)
	return nil
}

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
	v, err := fe.List.Value(r.exprEnv(r.top()))
	if err != nil {
		return nil, fmt.Errorf("for_each %q: %w", fe.List.Source, err)
	}
	list, ok := v.([]any)
	if !ok {
		if v == nil {
			list = nil
		} else {
			return nil, fmt.Errorf("for_each %q gave %T, not a list", fe.List.Source, v)
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
			base = r.exprEnv(&frame{item: it, recs: it.rec.Steps, outputs: map[string]cty.Value{}})
		}
		env := maps.Clone(base)
		env[lang.RootItem] = goValue(val)
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
		r.store.touchItem(s.Name, k)
	}
	return items, r.commit(true)
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
				sr.Status = StepPending
				if sr.Attempts > 0 {
					sr.Attempts--
					sr.Runs = max(sr.Runs-1, 0)
				}
			}
			if len(sr.Output) > 0 {
				v, err := decodeOutput(ns, sr.Output)
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

// blockDependents marks the pending items that wait, directly or not, on
// the failed or blocked items from, as blocked.
func (r *run) blockDependents(s *lang.Step, g *itemGraph, from []string) {
	queue := append([]string(nil), from...)
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		cause := g.items[k]
		for _, dk := range g.dependents[k] {
			it := g.items[dk]
			if it.rec.Status != StepPending {
				continue
			}
			it.rec.Status = ItemBlocked
			it.rec.Error = fmt.Sprintf("blocked: item %q %s", k, cause.rec.Status)
			r.store.touchItem(s.Name, it.rec.Key)
			r.event(Event{Type: EventItemBlocked, Step: s.Name, Item: it.rec.Key, Message: it.rec.Error})
			queue = append(queue, dk)
		}
	}
}

// limitsAllow reports whether starting it keeps every limit.
func (r *run) limitsAllow(fe *lang.ForEach, it *item, inUse map[string]int) bool {
	for _, lim := range fe.Limits {
		v := it.rec.Limits[lim.Name]
		max, ok := lim.Max[v]
		if !ok {
			max = lim.Default
		}
		if max > 0 && inUse[lim.Name+"="+v] >= max {
			return false
		}
	}
	return true
}

// forEachOutput builds the step's output and lists the items left
// pending (a deadlock), each with what it waits on.
func (r *run) forEachOutput(s *lang.Step, items map[string]*item) (cty.Value, []string) {
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
			"key":     cty.StringVal(k),
			"status":  cty.StringVal(it.rec.Status),
			"error":   cty.StringVal(it.rec.Error),
			"outputs": cty.ObjectVal(outs),
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
	return "", fmt.Errorf("%q gave %T; a key is a string or a number", c.Source, v)
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
		return nil, fmt.Errorf("want a list of keys, got %T", v)
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
			return nil, fmt.Errorf("a key is a string or a number, not %T", x)
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
	return 0, fmt.Errorf("want a number, got %T", v)
}
