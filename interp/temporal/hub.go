package temporal

import (
	"runtime"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"
)

// The walk runs one coroutine per step or item under way. As workflow
// coroutines (workflow.Go), the SDK's dispatcher resumes every one of
// them at each pass of each workflow task, each resume a switch of
// goroutines and a walk of the coroutine's stack, whether or not what it
// waits for has come: a for_each of concurrency 64 paid 64 resumes a
// pass, most of them for nothing.
//
// The hub is one workflow coroutine in place of those. The walk's
// coroutines are plain goroutines (tasks) that run only while the hub
// hands them its turn: exactly one runs at a time, and the SDK calls it
// makes are made inside the hub's coroutine, as deterministic as the
// hub's own. A task never makes a blocking SDK call: where it waits (an
// activity's or child workflow's future, a channel between tasks, a
// timer, an answer) it parks with the condition it waits for and hands
// the turn back. The hub resumes the tasks whose condition holds in the
// order they were spawned, pass after pass, as the dispatcher resumes
// coroutines, and when none can go on, waits with one workflow.Await
// over all their conditions.
//
// hubVersion marks the workflows whose walk runs on the hub: a workflow
// started before replays with a coroutine per task.
const hubVersion = "apl.hub"

// hub runs the walk's tasks, one at a time, in one workflow coroutine.
type hub struct {
	e *engine
	// c is the context of the workflow coroutine that runs the hub now.
	c workflow.Context
	// tasks are those not ended, in the order they were spawned.
	tasks []*task
	// cur is the task that runs now.
	cur *task
	// back takes the turn back from a task that parked or ended.
	back chan struct{}
	// idle are the goroutines whose task ended, each waiting on its
	// channel for the next task to run (nil: none comes). A new
	// goroutine's stack grows to the walk's depth at each task.
	idle []chan *task
	// closing: the hub's coroutine is going away (the workflow ended or
	// left the worker's cache); a task woken now ends (runtime.Goexit),
	// as the SDK ends a coroutine's goroutine.
	closing bool
}

// task is one of the walk's coroutines.
type task struct {
	fn func()
	// ready is the condition the task waits for; nil: it may run (it has
	// not started).
	ready          func() bool
	wake           chan struct{}
	started, ended bool
	// panicked is what the task panicked with, for the hub to panic with.
	panicked any
}

func newHub(e *engine) *hub { return &hub{e: e, back: make(chan struct{})} }

// spawn adds a task that runs fn; the hub starts it in its next turn,
// in the pass under way if it has not passed the end yet.
func (h *hub) spawn(fn func()) *task {
	t := &task{fn: fn, wake: make(chan struct{})}
	h.tasks = append(h.tasks, t)
	return t
}

// runnable: t has not ended and what it waits for has come.
func (t *task) runnable() bool { return !t.ended && (t.ready == nil || t.ready()) }

// serve runs the tasks from workflow coroutine c until done holds, and
// reports whether it did (false: the coroutine is going away, and the
// tasks have ended with it).
func (h *hub) serve(c workflow.Context, done func() bool) {
	h.c = c
	served := false
	defer func() {
		if !served {
			h.close()
		}
	}()
	for !done() {
		ran := false
		for i := 0; i < len(h.tasks) && !done(); i++ {
			if t := h.tasks[i]; t.runnable() {
				h.resume(t)
				ran = true
			}
		}
		h.tasks = slices.DeleteFunc(h.tasks, func(t *task) bool { return t.ended })
		if !ran && !done() {
			workflow.Await(c, func() bool { return done() || slices.ContainsFunc(h.tasks, (*task).runnable) })
		}
	}
	served = true
	if !h.live() {
		h.release()
	}
}

// live: a task has not ended.
func (h *hub) live() bool {
	return slices.ContainsFunc(h.tasks, func(t *task) bool { return !t.ended })
}

// resume hands t the turn until it parks or ends.
func (h *hub) resume(t *task) {
	h.cur, h.e.cur, t.ready = t, h.c, nil
	switch n := len(h.idle); {
	case t.started:
		t.wake <- struct{}{}
	case n > 0:
		t.started = true
		next := h.idle[n-1]
		h.idle = h.idle[:n-1]
		next <- t
	default:
		t.started = true
		go h.run(t)
	}
	<-h.back
	h.cur = nil
	if p := t.panicked; p != nil {
		// The SDK fails the workflow task with it, as a coroutine's.
		panic(p)
	}
}

// run runs t, then the tasks the hub hands it, in one goroutine.
func (h *hub) run(t *task) {
	next := make(chan *task)
	for t != nil && h.runTask(t) {
		h.idle = append(h.idle, next)
		h.back <- struct{}{}
		t = <-next
	}
}

// runTask runs t's function: false if it did not return (it panicked,
// or its goroutine ends with runtime.Goexit as the hub closes), and the
// turn is back with the hub.
func (h *hub) runTask(t *task) (returned bool) {
	defer func() {
		// While the hub closes, a task ends with runtime.Goexit, which
		// recover does not stop; a panic then is dropped, as the SDK
		// drops a closing coroutine's.
		if r := recover(); !h.closing {
			t.panicked = r
		}
		t.ended = true
		if !returned {
			h.back <- struct{}{}
		}
	}()
	t.fn()
	return true
}

// release ends the idle goroutines.
func (h *hub) release() {
	for _, next := range h.idle {
		close(next)
	}
	h.idle = nil
}

// park hands the turn back until ready holds; the task that runs now
// calls it where it waits. It returns at once if ready holds already.
// Outside the tasks (before or after the walk), the workflow coroutine
// that runs waits.
func (h *hub) park(ready func() bool) {
	if h.cur == nil && !h.closing {
		workflow.Await(h.e.cur, ready)
		return
	}
	if h.closing {
		runtime.Goexit()
	}
	if ready() {
		return
	}
	t := h.cur
	t.ready = ready
	h.back <- struct{}{}
	<-t.wake
	if h.closing {
		runtime.Goexit()
	}
}

// close ends the parked tasks' goroutines one at a time (their deferred
// calls run, as a coroutine's do when the SDK ends it).
func (h *hub) close() {
	h.closing = true
	h.release()
	for _, t := range h.tasks {
		if t.started && !t.ended {
			h.cur = t
			t.wake <- struct{}{}
			<-h.back
		}
	}
	h.tasks, h.cur = nil, nil
}

// walk runs fn as the first task, from the workflow coroutine that
// calls it, until fn returns. Tasks still under way then go on in a hub
// coroutine of their own, as the walk's coroutines went on after it.
func (h *hub) walk(fn func()) {
	root := h.spawn(fn)
	c := h.e.cur
	h.serve(c, func() bool { return root.ended })
	h.e.cur = c
	if h.live() {
		workflow.Go(c, func(c workflow.Context) {
			h.serve(c, func() bool { return !h.live() })
		})
	}
}

// tasked: a task of the hub runs now, and must park where a coroutine
// would block.
func (e *engine) tasked() bool { return e.hub != nil && e.hub.cur != nil }

// await waits in the running coroutine or task until ready holds.
func (e *engine) await(c workflow.Context, ready func() bool) error {
	if !e.tasked() {
		return workflow.Await(c, ready)
	}
	e.hub.park(ready)
	return nil
}

// get waits in the running coroutine or task for f and takes its value,
// as f.Get does.
func (e *engine) get(c workflow.Context, f workflow.Future, v any) error {
	if e.tasked() {
		e.hub.park(f.IsReady)
	}
	return f.Get(c, v)
}

// awaitWithTimeout waits in the running coroutine or task until ready
// holds or d passes on the workflow's clock, as workflow.AwaitWithTimeout
// does: false when d passed first.
func (e *engine) awaitWithTimeout(c workflow.Context, d time.Duration, ready func() bool) (bool, error) {
	if !e.tasked() {
		return workflow.AwaitWithTimeout(c, d, ready)
	}
	if ready() {
		return true, nil
	}
	tc, cancel := workflow.WithCancel(c)
	timer := workflow.NewTimer(tc, d)
	e.hub.park(func() bool { return ready() || timer.IsReady() })
	if !ready() {
		return false, nil
	}
	cancel()
	return true, nil
}

// hubChannel is a channel between the hub's tasks.
type hubChannel struct {
	h *hub
	n int
	// buf holds what was sent and not received; sent and taken count
	// sends and receives, for an unbuffered channel's sender to wait
	// until its value is taken.
	buf         []any
	sent, taken int
}

func (ch *hubChannel) Send(v any) {
	if ch.n > 0 {
		ch.h.park(func() bool { return len(ch.buf) < ch.n })
	}
	ch.buf = append(ch.buf, v)
	ch.sent++
	if ch.n == 0 {
		n := ch.sent
		ch.h.park(func() bool { return ch.taken >= n })
	}
}

func (ch *hubChannel) Receive() any {
	ch.h.park(func() bool { return len(ch.buf) > 0 })
	v := ch.buf[0]
	ch.buf[0] = nil
	ch.buf = ch.buf[1:]
	ch.taken++
	return v
}
