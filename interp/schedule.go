package interp

import (
	"container/heap"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/apl-lang/apl/lang"
)

// forEach runs a for_each step: it computes the items once (they are kept
// in the state, so resume runs the same items), then schedules them as a
// task graph. An item is ready when every item it depends on completed;
// ready items start in order of priority (lower first), then list order,
// while fewer than concurrency run and every limit has room; items a gate
// requeued start after them. An item that fails does not stop the others
// (unless on_item_failure is fail_fast); items that depend on it are
// blocked, and the step fails at the end (unless on_item_failure is
// continue). When nothing runs, nothing is ready and items remain, the
// graph is deadlocked: the step fails and says which items wait on what.
//
// Each item walks its own frame as a coroutine (see host) and hands its
// outcome back to the scheduler, which alone decides what it means: the
// item's status, the items it releases or blocks, and whether the run
// stops.
func (r *run) forEach(ctx context.Context, f *frame, s *lang.Step) outcome {
	items, err := r.items(s)
	if err != nil {
		return failWith(err)
	}
	sc := &scheduler{r: r, step: s, g: newItemGraph(items), inUse: map[string]int{},
		done: r.host.channel(s.ForEach.ConcurrencyIn(r.fixed)), stop: make(chan struct{})}
	for _, it := range items {
		sc.queued = max(sc.queued, it.rec.Queued)
	}
	sc.blockDependents(sc.g.failedKeys())
	// The items' walks carry the scheduler: a question that waits for a
	// person in one of them holds it (holdItems).
	ictx := withAskLink(ctx, &askLink{sc: sc})
	// Item checkpoints write the documents only when due (writeDocuments).
	r.docs.inForEach++
	defer func() { r.docs.inForEach-- }()
	for {
		// Once the run decided to end (a cap crossed anywhere in it, the
		// breaker open), no item starts, even before the item that
		// decided it reports.
		if ctx.Err() == nil && sc.stopped == nil && sc.waiting == nil && sc.failing == "" && r.stopped() == nil {
			if sc.asks == 0 {
				sc.startReady(ictx)
			} else if sc.g.ready.Len() > 0 {
				// A person is asked in an item: the answer wakes the
				// scheduler (letGo).
				sc.heldBack = true
			}
		}
		if sc.live == 0 {
			break
		}
		var d itemDone
		r.host.block(func() { d = sc.done.Receive().(itemDone) })
		if d.wake {
			continue
		}
		if d.release {
			sc.release(d.it)
			continue
		}
		sc.settle(d, true)
		if err := r.commit(nil, nil, true); err != nil && sc.stopped == nil {
			// Start nothing more; let the running items end first.
			sc.halt(abort(err))
		}
	}
	switch {
	case sc.stopped != nil && sc.stopped.kind == outAbort:
		return *sc.stopped
	case ctx.Err() != nil:
		return interrupted
	case sc.waiting != nil:
		return waitFor(sc.waiting)
	}
	out, stuck := r.forEachOutput(s, items, sc.failing != "")
	if sc.stopped != nil {
		return sc.stopped.withOut(out)
	}
	if t := r.stopped(); t != nil {
		// The run decided to end where no item's outcome carries it: a
		// cap crossed outside the items (a sub-run of another item's
		// parent), the breaker opened at a step whose gate ended its
		// item. Items were left not started.
		return tripWith(t).withOut(out)
	}
	if sc.failing != "" {
		notStarted := 0
		for _, it := range items {
			if it.rec.Status == StepPending {
				notStarted++
			}
		}
		return done(out, fmt.Errorf("item %q failed; %d item(s) not started (on_item_failure = %q)", sc.failing, notStarted, lang.ItemFailFast))
	}
	if len(stuck) > 0 {
		r.event(Event{Type: EventDeadlock, Step: s.Name, Message: "deadlock: " + strings.Join(stuck, "; "),
			Details: map[string]any{"items": len(stuck)}})
		return done(out, fmt.Errorf("deadlock: nothing runs and nothing is ready: %s (needs intervention)", strings.Join(stuck, "; ")))
	}
	if failed := failedItems(items); len(failed) > 0 && s.ForEach.OnItemFailure != lang.ItemFailContinue {
		return done(out, fmt.Errorf("%d item(s) failed: %s (on_item_failure = %q)", len(failed), strings.Join(failed, "; "), s.ForEach.OnItemFailure))
	}
	return done(out, nil)
}

// failedItems describes the failed items, in list order: key and error.
func failedItems(items map[string]*item) []string {
	var its []*item
	for _, it := range items {
		if it.rec.Status == StepFailed {
			its = append(its, it)
		}
	}
	sort.Slice(its, func(i, j int) bool { return its[i].rec.Index < its[j].rec.Index })
	out := make([]string, len(its))
	for i, it := range its {
		out[i] = fmt.Sprintf("%q: %s", it.rec.Key, it.rec.Error)
	}
	return out
}

// scheduler runs the items of one for_each step. It is the only writer of
// the items' lifecycle (pending, running, how each ended) and the one that
// stops the run for them; an item's walk writes only its own frame.
type scheduler struct {
	r       *run
	step    *lang.Step
	g       *itemGraph
	running int            // items holding a slot
	live    int            // items whose walk goes on, with a slot or not
	inUse   map[string]int // "limit=value" → items holding a place
	done    Channel        // of itemDone
	// stop is closed when the run must stop (a cap tripped in an item, a
	// checkpoint failed): running items go back to pending at their next
	// step.
	stop    chan struct{}
	stopped *outcome
	// waiting is the first decision an item waits for; no new item starts
	// once one waits.
	waiting *Waiting
	// failing is the key of the item whose failure stopped new items from
	// starting (on_item_failure = "fail_fast").
	failing string
	// asks counts the questions that wait for a person in the items, at
	// any depth (holdItems): no new item starts while one does. heldBack
	// is set when a ready item was held back for them, for the last
	// answer to wake the scheduler.
	asks     int
	heldBack bool
	// queued is the last place given in the queue of requeued items.
	queued int
}

// itemDone is an item's walk reporting how it ended, or, with release,
// that it gave back its slot and goes on; wake (no item) is a question's
// answer, after which held-back items may start.
type itemDone struct {
	it      *item
	o       outcome
	release bool
	wake    bool
}

// startReady starts ready items while concurrency and limits allow.
func (sc *scheduler) startReady(ctx context.Context) {
	r, fe := sc.r, sc.step.ForEach
	var held []*item // ready, but a limit is full
	for sc.running < fe.ConcurrencyIn(r.fixed) && sc.g.ready.Len() > 0 {
		it := heap.Pop(&sc.g.ready).(*item)
		if it.rec.Status != StepPending {
			continue
		}
		if err := sc.limitKeys(it); err != nil {
			sc.settle(itemDone{it: it, o: outcome{kind: outFail, reason: err.Error()}}, false)
			continue
		}
		if !limitsAllow(fe, r.fixed, it, sc.inUse) {
			held = append(held, it)
			continue
		}
		done, ok := r.holdStarts(ctx)
		if !ok {
			// The run decided to end since the scheduler looked.
			held = append(held, it)
			break
		}
		sc.running++
		sc.live++
		for name, v := range it.rec.Limits {
			sc.inUse[name+"="+v]++
		}
		it.rec.Status = StepRunning
		r.changes.item(sc.step.Name, it.rec.Key)
		r.event(Event{Type: EventItemStarted, Step: sc.step.Name, Item: it.rec.Key})
		done()
		release := func() {
			it.released = true
			sc.done.Send(itemDone{it: it, release: true})
		}
		r.host.spawn(func() {
			o := r.walkItem(ctx, it, sc.stop, release)
			// Sent without holding the walk: with items that released
			// their slots, more may be live than the channel holds.
			r.host.block(func() { sc.done.Send(itemDone{it: it, o: o}) })
		})
	}
	for _, it := range held {
		heap.Push(&sc.g.ready, it)
	}
}

// limitKeys computes the item's value of each limit's key as it starts or
// restarts, so that a key reading vars or the item's own steps (a model
// escalated on a requeue) counts the item where it runs now.
func (sc *scheduler) limitKeys(it *item) error {
	fe := sc.step.ForEach
	if len(fe.Limits) == 0 {
		return nil
	}
	conds := make([]*lang.Condition, len(fe.Limits))
	for i, lim := range fe.Limits {
		conds[i] = lim.Key
	}
	env := sc.r.exprEnv(sc.r.itemFrame(it), conds...)
	if it.rec.Limits == nil {
		it.rec.Limits = map[string]string{}
	}
	for _, lim := range fe.Limits {
		k, err := evalKey(lim.Key, env)
		if err != nil {
			return fmt.Errorf("limit %q: %w", lim.Name, err)
		}
		it.rec.Limits[lim.Name] = k
	}
	return nil
}

// release gives back the slot and the limit places of an item that
// reached its for_each's release_slot step; its walk goes on.
func (sc *scheduler) release(it *item) {
	sc.running--
	for name, v := range it.rec.Limits {
		sc.inUse[name+"="+v]--
	}
}

// settle applies an item's outcome: its status, the items it releases or
// blocks, and whether the run stops. ran is false for an item that never
// started (its limit key could not be computed).
func (sc *scheduler) settle(d itemDone, ran bool) {
	r, it, o := sc.r, d.it, d.o
	if ran {
		sc.live--
		if !it.released {
			sc.release(it)
		}
		it.released = false
	}
	rec := it.rec
	switch o.kind {
	case outNext:
		rec.Status, rec.Current = StepCompleted, ""
		r.event(Event{Type: EventItemCompleted, Step: sc.step.Name, Item: rec.Key})
		sc.g.finished(it)
	case outFinish:
		rec.Status, rec.Error, rec.Current = o.status, o.reason, ""
		r.event(Event{Type: EventItemCompleted, Step: sc.step.Name, Item: rec.Key, Message: "finished: " + o.status})
		sc.g.finished(it)
	case outFail, outTrip:
		rec.Status, rec.Error, rec.Recommendation = StepFailed, o.reason, o.recommendation
		r.event(Event{Type: EventItemFailed, Step: sc.step.Name, Item: rec.Key, Message: o.reason})
		sc.blockDependents([]string{rec.Key})
		if o.kind == outTrip {
			sc.halt(o)
		} else if sc.step.ForEach.OnItemFailure == lang.ItemFailFast && sc.failing == "" {
			sc.failing = rec.Key
		}
	case outRequeue:
		// Behind every item that never started, and every item requeued
		// before it; it restarts at next with its records and caps.
		sc.queued++
		rec.Status, rec.Current, rec.Queued = StepPending, o.next, sc.queued
		rec.Requeues++
		r.event(Event{Type: EventItemRequeued, Step: sc.step.Name, Item: rec.Key,
			Message: fmt.Sprintf("requeued; restarts at %s (attempt %d)", o.next, rec.Requeues+1),
			Details: map[string]any{"attempt": rec.Requeues + 1}})
		heap.Push(&sc.g.ready, it)
	case outWait:
		// It asks again when the run resumes with an answer.
		rec.Status = StepPending
		if sc.waiting == nil {
			sc.waiting = o.waiting
		}
	case outInterrupt:
		// Interrupted, or stopped for another item's trip: it runs again on
		// resume, from the step it was in.
		rec.Status = StepPending
	case outAbort:
		rec.Status = StepPending
		sc.halt(o)
	default:
		rec.Status = StepPending
		sc.halt(abort(fmt.Errorf("internal error: item %q of step %q came to %s", rec.Key, sc.step.Name, o.kind)))
	}
	r.changes.item(sc.step.Name, rec.Key)
}

// halt stops the run for o (the first reason wins): no item starts, and
// running ones stop at their next step.
func (sc *scheduler) halt(o outcome) {
	if sc.stopped != nil {
		return
	}
	sc.stopped = &o
	close(sc.stop)
}

// blockDependents marks the pending items that wait, directly or not, on
// the failed or blocked items from, as blocked.
func (sc *scheduler) blockDependents(from []string) {
	g := sc.g
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
			sc.r.changes.item(sc.step.Name, it.rec.Key)
			sc.r.event(Event{Type: EventItemBlocked, Step: sc.step.Name, Item: it.rec.Key, Message: it.rec.Error})
			queue = append(queue, dk)
		}
	}
}

// limitsAllow reports whether starting it keeps every limit.
func limitsAllow(fe *lang.ForEach, fixed lang.FixedSettings, it *item, inUse map[string]int) bool {
	for _, lim := range fe.Limits {
		v := it.rec.Limits[lim.Name]
		if max := lim.CapIn(fixed, v); max > 0 && inUse[lim.Name+"="+v] >= max {
			return false
		}
	}
	return true
}

// walkItem runs an item's steps until its frame ends or the run stops,
// and returns how it ended. It writes only the item's own frame: what the
// ending means is for the scheduler to apply. Before the first step at or
// after its for_each's release_slot step, it calls release once.
func (r *run) walkItem(ctx context.Context, it *item, stop <-chan struct{}, release func()) outcome {
	before := func(s *lang.Step) (outcome, bool) {
		select {
		case <-stop:
			return interrupted, true
		default:
		}
		if ctx.Err() != nil || r.stopped() != nil {
			// Interrupted, or the run decided to end elsewhere (a cap
			// crossed, the breaker opened): this item stops before its
			// next step, as for another item's trip.
			return interrupted, true
		}
		if rel := it.parent.ForEach.ReleaseFrom; rel != nil && !it.released && s.Index >= rel.Index {
			r.host.block(release)
		}
		return outcome{}, false
	}
	// The item ends; the scheduler commits that.
	end := func(outcome) bool { return false }
	return r.walkFrame(ctx, frameWalk{f: r.itemFrame(it), at: &it.rec.Current, before: before, end: end})
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

// readyQueue is a heap of ready items: items never requeued before
// requeued ones, which go in the order they were requeued; then lower
// priority first, then list order.
type readyQueue []*item

func (q readyQueue) Len() int { return len(q) }
func (q readyQueue) Less(i, j int) bool {
	a, b := q[i].rec, q[j].rec
	if a.Queued != b.Queued {
		// Items never requeued (0) first, then requeued ones in order.
		if a.Queued == 0 || b.Queued == 0 {
			return a.Queued == 0
		}
		return a.Queued < b.Queued
	}
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
