package interp

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"time"

	"github.com/apl-lang/apl/builtins"
)

// host is everything the walk needs from the world outside the playbook:
// the clock, timers, concurrency, persistence and the observer. The walk
// calls nothing else that depends on time or scheduling, so given the same
// step results it takes the same path: what a durable-execution engine
// (Temporal) needs of a workflow, and what lets a test run a whole run,
// for_each and retries included, without real time passing.
//
// The walk is a set of coroutines: the run's main walk and one per
// running for_each item. Exactly one of them runs walk code at a time; a
// coroutine gives the others their turn only inside block, sleep and while
// it waits for another to finish. So the walk's data needs no locks, and
// what a step did is applied in an order the walk itself decides.
type host interface {
	// now is the time for records, traces and caps, and timestamp().
	now() time.Time
	// uuid is a new random UUID, for uuid().
	uuid() string
	// sleep waits d (a retry's backoff), or until ctx is done.
	sleep(ctx context.Context, d time.Duration) error
	// withTimeout is context.WithTimeout on the host's clock: a step's or
	// the run's time limit.
	withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc)
	// walk runs fn as the first coroutine and returns when it returns.
	walk(fn func())
	// spawn starts fn as another coroutine: a for_each item's walk.
	spawn(fn func())
	// block runs fn, which waits on the world (a process, a backend, a
	// person, another coroutine), letting the other coroutines go on.
	block(fn func())
	// channel makes a channel of capacity n for coroutines to hand each
	// other values through: an item's outcome to its scheduler, a serial
	// step's turn. Receive, and Send on a full channel, wait: only
	// inside block.
	channel(n int) Channel
	// checkpoint persists the state's changes since the last checkpoint,
	// which ch names, and clears ch; durable asks that they survive a
	// power cut. snapshot writes the whole state.
	checkpoint(st *State, ch *changes, durable bool) error
	snapshot(st *State, ch *changes) error
	// writeDocument writes a playbook's document, f.Path under the
	// project root, atomically, keeping the previous one as f.Backup;
	// moveDocument moves one to its archive.
	writeDocument(root string, f DocumentFile, data []byte) error
	moveDocument(root, from, to string) error
	// after calls fn in the walk's turn once d has passed, unless stop
	// (called in the walk's turn) was called first. An engine host, whose walk must take the same path on
	// every replay, never calls fn: it has no timers outside the walk.
	after(d time.Duration, fn func()) (stop func())
	// waiting is called, outside the walk's turn, while a step's
	// process runs and its coroutine waits on it: the local host does
	// the store's due compaction then (compactIfDue), in the walk's turn
	// if no coroutine holds it, so that it runs beside the process and
	// not between one step and the next. st and ch are the run's.
	waiting(st *State, ch *changes)
	// heartbeat calls beat every `every` until stop is called; beat runs
	// outside the walk's turn, so it may only emit. It keeps a long agent
	// call visibly alive.
	heartbeat(every time.Duration, beat func()) (stop func())
	// emit tells the observer about an event. It may be called outside
	// the walk's turn: Observer calls are made one at a time.
	emit(e Event)
	// close releases what the host holds for the run once its walk ended.
	close() error
}

// localHost runs the walk in this process: the system clock (or
// Options.Clock), goroutines for coroutines with a mutex as the baton
// between them, and the run's store for persistence.
type localHost struct {
	clock    func() time.Time
	sync     bool // fsync documents (Options.NoSync unset)
	store    *store
	observer Observer

	baton sync.Mutex
	// waitErr is a failure of the work done in waiting, which the walk's
	// next checkpoint or snapshot returns.
	waitErr error
	// idle are after's timers that were stopped before they fired, to be
	// armed again; used only in the walk's turn.
	idle []*afterTimer
}

func newLocalHost(opts Options) *localHost {
	return &localHost{clock: clock(opts), sync: !opts.NoSync, observer: opts.Observer}
}

// clock is the clock a run on this machine uses: Options.Clock, or the
// system's.
func clock(opts Options) func() time.Time {
	if opts.Clock != nil {
		return opts.Clock
	}
	return time.Now
}

func (h *localHost) now() time.Time { return h.clock() }

func (h *localHost) uuid() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (h *localHost) sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	var err error
	h.block(func() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-t.C:
		}
	})
	return err
}

func (h *localHost) withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

func (h *localHost) walk(fn func()) {
	h.baton.Lock()
	defer h.baton.Unlock()
	fn()
}

func (h *localHost) spawn(fn func()) {
	go func() {
		h.baton.Lock()
		defer h.baton.Unlock()
		fn()
	}()
}

// enter runs fn in the walk's turn from outside it: a sub-run's walk in
// this process, whose own turn is another host's, while this run's
// coroutine waits for it in block.
func (h *localHost) enter(fn func()) {
	h.baton.Lock()
	defer h.baton.Unlock()
	fn()
}

func (h *localHost) block(fn func()) {
	h.baton.Unlock()
	defer h.baton.Lock()
	fn()
}

func (h *localHost) channel(n int) Channel { return make(goChannel, n) }

func (h *localHost) after(d time.Duration, fn func()) func() {
	// Every quick step arms one and stops it: a timer that never fired
	// is armed again rather than made anew.
	var a *afterTimer
	if n := len(h.idle); n > 0 {
		a, h.idle = h.idle[n-1], h.idle[:n-1]
		a.fn, a.stopped = fn, false
		a.t.Reset(d)
	} else {
		a = &afterTimer{h: h, fn: fn}
		a.stopFn = a.stop
		a.t = time.AfterFunc(d, a.fire)
	}
	return a.stopFn
}

// An afterTimer calls fn in the walk's turn once its time has passed,
// unless stopped first. stop is called in the walk's turn, once per
// after, and fire runs in it: the baton orders them.
type afterTimer struct {
	h       *localHost
	t       *time.Timer
	fn      func()
	stopped bool
	stopFn  func()
}

func (a *afterTimer) fire() {
	a.h.baton.Lock()
	defer a.h.baton.Unlock()
	if !a.stopped {
		a.fn()
	}
}

func (a *afterTimer) stop() {
	a.stopped = true
	if a.t.Stop() {
		// It never fired and never will: free to arm again. One that
		// fired (fire waits for the baton, or ran) is left alone.
		a.fn = nil
		a.h.idle = append(a.h.idle, a)
	}
}

// goChannel is a Channel of this process.
type goChannel chan any

func (c goChannel) Send(v any)   { c <- v }
func (c goChannel) Receive() any { return <-c }

func (h *localHost) checkpoint(st *State, ch *changes, durable bool) error {
	if err := h.waitErr; err != nil {
		return err
	}
	return h.store.commit(st, ch, durable)
}

func (h *localHost) snapshot(st *State, ch *changes) error {
	if err := h.waitErr; err != nil {
		return err
	}
	return h.store.snapshot(st, ch)
}

func (h *localHost) waiting(st *State, ch *changes) {
	if h.store == nil || !h.baton.TryLock() {
		// A coroutine holds the walk's turn: the next commit compacts.
		return
	}
	defer h.baton.Unlock()
	if h.waitErr == nil && h.store.compactDue {
		// The walk learns of a failure at its next commit.
		h.waitErr = h.store.compactIfDue(st, ch)
	}
}

func (h *localHost) writeDocument(root string, f DocumentFile, data []byte) error {
	return writeDocumentFile(root, f, data, h.sync)
}

func (h *localHost) moveDocument(root, from, to string) error {
	return moveDocumentFile(root, from, to, h.sync)
}

func (h *localHost) emit(e Event) {
	if h.observer != nil {
		h.observer.Event(e)
	}
}

func (h *localHost) heartbeat(every time.Duration, beat func()) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				beat()
			}
		}
	})
	// No beat after stop returns.
	return func() { close(done); wg.Wait() }
}

func (h *localHost) close() error {
	if h.store == nil {
		return nil
	}
	return h.store.close()
}

// Channel is a channel between the walk's coroutines (Engine.Channel).
type Channel interface {
	Send(v any)
	Receive() any
}

// Engine runs a run's walk somewhere other than this process's
// goroutines: on a durable-execution engine, where the walk is a
// workflow (interp/temporal). It supplies every part of the run that
// depends on time, scheduling or the world, so that none is left to a
// local default: a part running locally in a workflow would make it take
// another path on a replay. The rules are the host's (see host): the
// walk's coroutines take turns only inside Sleep, Block and a Channel's
// Receive and Send, and given the same results from the world the walk
// takes the same path. Start refuses a run whose engine leaves a part
// nil, or whose Options set one of the parts the engine supplies.
//
// A run on an engine keeps no state on disk: the engine's history is its
// durable state, so checkpoints are skipped and it cannot be resumed
// with apl resume. Its run directory (Options.RunsDir) still receives
// artifacts and the playbook's sources.
type Engine interface {
	// Now is the engine's clock.
	Now() time.Time
	// UUID is a new random UUID, the same on a replay.
	UUID() string
	// Sleep waits d on the engine's clock.
	Sleep(ctx context.Context, d time.Duration) error
	// WithTimeout is ctx with a deadline d from Now on the engine's
	// clock.
	WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc)
	// Walk runs fn as the first coroutine; Spawn starts another.
	Walk(fn func())
	Spawn(fn func())
	// Block runs fn, which waits on the world or another coroutine.
	Block(fn func())
	// Channel makes a channel of capacity n between coroutines.
	Channel(n int) Channel

	// Shell, Funcs and Drivers are the actions' ways to the engine's
	// workers, in place of Options' Shell, Funcs and Drivers.
	Shell() ShellRunner
	Funcs() builtins.Registry
	Drivers() DriverFactory
	// WriteDocument and MoveDocument write a playbook's documents where
	// the run's actions reach the project (a worker), instead of the
	// process that runs the walk. Paths are relative to the project
	// root, or absolute, and lie in it (openDocuments checked them); the
	// writes are WriteDocumentFile's and MoveDocumentFile's.
	WriteDocument(f DocumentFile, data []byte) error
	MoveDocument(from, to string) error
	// SubRun runs a sub-playbook step's run on the engine (a child
	// workflow) and returns how it ended, with its output, the decision
	// it waits for and its metrics, as Start's result does.
	SubRun(ctx context.Context, sub SubRun) (*Result, error)
}

// engineParts checks that opts' engine supplies every part, and that
// opts sets none of those it supplies.
func engineParts(opts Options) error {
	e := opts.Engine
	switch {
	case opts.Shell != nil || opts.Funcs != nil || opts.Drivers != nil:
		return fmt.Errorf("internal error: Options set Shell, Funcs or Drivers beside an Engine, which supplies them")
	case e.Shell() == nil:
		return fmt.Errorf("internal error: the engine %T supplies no Shell", e)
	case e.Funcs() == nil:
		return fmt.Errorf("internal error: the engine %T supplies no Funcs", e)
	case e.Drivers() == nil:
		return fmt.Errorf("internal error: the engine %T supplies no Drivers", e)
	}
	return nil
}

// engineHost is the host of a run on an Engine: the engine's time,
// scheduling and documents, no checkpoints (the engine's history is the
// durable state) and no heartbeat (the engine has its own), and the
// local host's observer. It embeds nothing, so that a host method it
// lacks is a compile error, not a local call.
type engineHost struct {
	e Engine
	// local holds the run's observer and the store it closes.
	local *localHost
}

var _ host = (*engineHost)(nil)

func (h *engineHost) now() time.Time        { return h.e.Now() }
func (h *engineHost) uuid() string          { return h.e.UUID() }
func (h *engineHost) walk(fn func())        { h.e.Walk(fn) }
func (h *engineHost) spawn(fn func())       { h.e.Spawn(fn) }
func (h *engineHost) block(fn func())       { h.e.Block(fn) }
func (h *engineHost) channel(n int) Channel { return h.e.Channel(n) }
func (h *engineHost) sleep(ctx context.Context, d time.Duration) error {
	return h.e.Sleep(ctx, d)
}
func (h *engineHost) withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return h.e.WithTimeout(ctx, d)
}
func (h *engineHost) writeDocument(_ string, f DocumentFile, data []byte) error {
	return h.e.WriteDocument(f, data)
}
func (h *engineHost) moveDocument(_, from, to string) error { return h.e.MoveDocument(from, to) }
func (h *engineHost) checkpoint(st *State, _ *changes, _ bool) error {
	h.keep(st)
	return nil
}
func (h *engineHost) snapshot(st *State, _ *changes) error {
	h.keep(st)
	return nil
}
func (h *engineHost) waiting(*State, *changes)               {}
func (h *engineHost) heartbeat(time.Duration, func()) func() { return func() {} }
func (h *engineHost) after(time.Duration, func()) func()     { return func() {} }
func (h *engineHost) emit(e Event)                           { h.local.emit(e) }
func (h *engineHost) close() error                           { return h.local.close() }

// keep hands st to an engine that keeps it (StateKeeper).
func (h *engineHost) keep(st *State) {
	if k, ok := h.e.(StateKeeper); ok {
		k.KeepState(st)
	}
}

// retry calls try up to n times, every d, until it says it is done. It
// waits outside any walk (taking a run's lock), so it sleeps for real.
func retry(n int, d time.Duration, try func() (done bool)) {
	for i := 0; i < n && !try(); i++ {
		time.Sleep(d)
	}
}
