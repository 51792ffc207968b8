package interp

import (
	"os"
	"sync"
	"time"
)

// syncWindow is how long the journal syncer gathers commits before one
// fsync covers them all.
const syncWindow = 10 * time.Millisecond

// A groupSyncer fsyncs the journal for the durable commits of a short
// window at once (group commit, as databases do), on its own goroutine,
// so that a step's fsync no longer holds up the next step. A commit is
// written to the journal before it returns, so a killed apl (SIGKILL, a
// panic) loses nothing: the page cache is the kernel's. Only the machine
// crashing or losing power within the window (and the fsync after it)
// can lose the last transitions, which resume then runs again. A failed
// fsync is reported by the next commit.
type groupSyncer struct {
	// fileMu is held across an fsync, so that the file stays open for it;
	// mu guards the rest, and is never held across an fsync: a commit
	// that requests one while another runs does not wait for it.
	fileMu  sync.Mutex
	f       *os.File // the journal; nil between snapshots' journals
	mu      sync.Mutex
	pending bool  // a commit was written since the last fsync
	err     error // the first fsync failure, not yet reported
	fsync   func(*os.File) error

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

func newGroupSyncer() *groupSyncer {
	g := &groupSyncer{wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), fsync: (*os.File).Sync}
	go g.loop()
	return g
}

func (g *groupSyncer) loop() {
	defer close(g.done)
	t := time.NewTimer(0)
	<-t.C
	for {
		select {
		case <-g.wake:
		case <-g.stop:
			return
		}
		t.Reset(syncWindow)
		select {
		case <-t.C:
		case <-g.stop:
			t.Stop()
			return
		}
		g.sync()
	}
}

// sync fsyncs the journal if a commit waits for it. What is written
// while it runs waits for the next.
func (g *groupSyncer) sync() {
	g.fileMu.Lock()
	defer g.fileMu.Unlock()
	g.mu.Lock()
	pending := g.pending && g.f != nil
	g.pending = false
	g.mu.Unlock()
	if !pending {
		return
	}
	if err := g.fsync(g.f); err != nil {
		g.mu.Lock()
		if g.err == nil {
			g.err = err
		}
		g.mu.Unlock()
	}
}

// request asks for an fsync of what the journal holds now, within the
// window. It returns an earlier fsync's failure, once.
func (g *groupSyncer) request() error {
	g.mu.Lock()
	g.pending = true
	err := g.err
	g.err = nil
	g.mu.Unlock()
	select {
	case g.wake <- struct{}{}:
	default:
	}
	return err
}

// setFile makes f the journal to sync. What waited for the journal it
// replaces needs no fsync: a snapshot replaces a journal, and holds all
// of it, synced.
func (g *groupSyncer) setFile(f *os.File) {
	g.fileMu.Lock()
	g.mu.Lock()
	g.f, g.pending = f, false
	g.mu.Unlock()
	g.fileMu.Unlock()
}

// flush syncs what waits now and returns any fsync failure.
func (g *groupSyncer) flush() error {
	g.sync()
	g.mu.Lock()
	defer g.mu.Unlock()
	err := g.err
	g.err = nil
	return err
}

// close flushes, stops the goroutine and returns any fsync failure.
func (g *groupSyncer) close() error {
	err := g.flush()
	close(g.stop)
	<-g.done
	return err
}
