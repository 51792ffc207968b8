package temporal

import (
	"context"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/google/uuid"
	"go.temporal.io/sdk/workflow"
)

// engine is the scheduling part of interp.Engine inside a Temporal
// workflow (runEngine adds the run's ways to the world). Each of the walk's
// coroutines is a workflow coroutine (workflow.Go), and a blocking call
// must be made with the calling coroutine's own workflow.Context: cur is
// the context of the coroutine that runs now. Only one runs at a time,
// and they switch only inside blocking calls, so each blocking call
// remembers cur and puts it back when it returns (hold).
//
// With a hub (hub.go), the walk's coroutines are the hub's tasks, and cur
// is the context of the hub's coroutine.
type engine struct {
	cur workflow.Context
	hub *hub
	// stops cancel the activities and child workflows under way when the
	// run is cancelled (cancel.go), by their key.
	stops map[int]workflow.CancelFunc
	nstop int
	// interrupt cancels the walk's context, as the run's cancellation
	// does (cancel.go), without cancelling the workflow.
	interrupt func()
	// cont continues the workflow as new when its history grows long
	// (continue.go); nil: it does not.
	cont *continuing
}

// hold is the context of the coroutine that runs now, for a blocking
// call it makes, and back, which makes that coroutine's context current
// again when the call returns (other coroutines ran meanwhile, and set
// cur to theirs): c, back := e.hold(); defer back().
func (e *engine) hold() (c workflow.Context, back func()) {
	c = e.cur
	return c, func() { e.cur = c }
}

func (e *engine) Now() time.Time { return workflow.Now(e.cur) }

func (e *engine) UUID() string {
	var id string
	workflow.SideEffect(e.cur, func(workflow.Context) any { return uuid.NewString() }).Get(&id)
	return id
}

func (e *engine) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c, back := e.hold()
	defer back()
	// Not workflow.Sleep: the run's cancellation reaches the walk through
	// ctx (cancel.go).
	if _, err := e.awaitWithTimeout(c, d, func() bool { return ctx.Err() != nil }); err != nil {
		return err
	}
	return ctx.Err()
}

// WithTimeout's context expires on the workflow's clock: its Err is
// DeadlineExceeded once workflow.Now reaches the deadline, which is the
// same on every replay. An activity started under it gets the time left
// as its own time limit (activity).
func (e *engine) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	dc := &deadlineCtx{Context: ctx, e: e, at: e.Now().Add(d)}
	return dc, func() {
		if dc.Err() == nil {
			dc.cancelled = true
		}
	}
}

func (e *engine) Walk(fn func()) {
	if e.hub != nil {
		e.hub.walk(fn)
		return
	}
	fn()
}

func (e *engine) Spawn(fn func()) {
	if e.hub != nil {
		e.hub.spawn(fn)
		return
	}
	workflow.Go(e.cur, func(c workflow.Context) {
		e.cur = c
		fn()
	})
}

func (e *engine) Block(fn func()) {
	_, back := e.hold()
	defer back()
	fn()
}

func (e *engine) Channel(n int) interp.Channel {
	if e.hub != nil {
		return &hubChannel{h: e.hub, n: n}
	}
	return &channel{e: e, ch: workflow.NewBufferedChannel(e.cur, n)}
}

// channel is a workflow channel used from whichever coroutine runs.
type channel struct {
	e  *engine
	ch workflow.Channel
}

func (ch *channel) Send(v any) {
	c, back := ch.e.hold()
	defer back()
	ch.ch.Send(c, v)
}

func (ch *channel) Receive() any {
	c, back := ch.e.hold()
	defer back()
	var v any
	ch.ch.Receive(c, &v)
	return v
}

// deadlineCtx is a context with a deadline on the workflow's clock.
type deadlineCtx struct {
	context.Context
	e         *engine
	at        time.Time
	cancelled bool
}

func (c *deadlineCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.at) {
		return d, true
	}
	return c.at, true
}

func (c *deadlineCtx) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if c.cancelled {
		return context.Canceled
	}
	if !c.e.Now().Before(c.at) {
		return context.DeadlineExceeded
	}
	return nil
}
