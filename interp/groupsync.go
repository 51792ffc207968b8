package interp

import (
	"os"
	"sync"
	"time"
)

// syncWindow is how long the journal syncer gathers commits before one
// fsync covers them all, and so about what a machine crash can lose.
//
// Each fsync made here costs the process about 1 ms of its own CPU
// beyond the disk's own work (about 0.15 ms of CPU for an fsync made
// alone): while it runs, this goroutine and the walk, waiting for its
// command, each hold one of Go's processors in a system call, so on two
// cores the runtime takes one back and hands it to another thread, and
// its monitor thread then polls every 20 µs for a millisecond or more.
// At 10 ms a chain of quick steps fsynced every ten steps or so; at 50
// ms it pays that a fifth as often (Chain500's own CPU 189–206 → 143–166
// ms, two rounds on a quiet machine), and a crash can still lose only
// the last twentieth of a second. fdatasync instead of fsync saves
// nothing here: every append changes the journal's size, which both
// must write.
const syncWindow = 50 * time.Millisecond

// A groupSyncer fsyncs the journal for the durable commits of a short
// window at once (group commit, as databases do), on its own goroutine,
// so that a step's fsync no longer holds up the next step. A commit is
// written to the journal before it returns, so a killed apl (SIGKILL, a
// panic) loses nothing: the page cache is the kernel's. Only the machine
// crashing or losing power within the window (and the fsync after it)
// can lose the last transitions, which resume then runs again. A failed
// fsync is reported by the next commit.
//
// A compaction's snapshot is synced the same way: the snapshot file, its
// directory (the renames) and the journal it replaced are held here and
// fsynced with the next group, before the new journal's lines. What a
// machine crash can then lose is still the last window: see
// store.writeSnapshot for each point.
type groupSyncer struct {
	// fileMu is held across an fsync, so that the file stays open for it;
	// mu guards the rest, and is never held across an fsync: a commit
	// that requests one while another runs does not wait for it.
	fileMu  sync.Mutex
	f       *os.File // the journal; nil between snapshots' journals
	mu      sync.Mutex
	pending bool // a commit was written since the last fsync
	// held are files a compaction left to be fsynced with the next
	// group, then closed: its snapshot, the directory, the old journal.
	held  []*os.File
	err   error // the first fsync failure, not yet reported
	fsync func(*os.File) error

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

// sync fsyncs the held files, then the journal if a commit waits for it.
// What is written while it runs waits for the next.
func (g *groupSyncer) sync() {
	g.fileMu.Lock()
	defer g.fileMu.Unlock()
	g.mu.Lock()
	pending := g.pending && g.f != nil
	held := g.held
	g.pending, g.held = false, nil
	g.mu.Unlock()
	g.syncHeld(held)
	if pending {
		g.failed(g.fsync(g.f))
	}
}

// syncHeld fsyncs and closes held files, with fileMu held, and returns
// the first failure.
func (g *groupSyncer) syncHeld(held []*os.File) error {
	var first error
	for _, f := range held {
		err := g.fsync(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil && first == nil {
			first = err
		}
	}
	g.failed(first)
	return first
}

// failed keeps err, if any, for the next commit to report.
func (g *groupSyncer) failed(err error) {
	if err == nil {
		return
	}
	g.mu.Lock()
	if g.err == nil {
		g.err = err
	}
	g.mu.Unlock()
}

// request asks for an fsync of what the journal holds now, within the
// window. It returns an earlier fsync's failure, once.
func (g *groupSyncer) request() error {
	g.mu.Lock()
	g.pending = true
	err := g.err
	g.err = nil
	g.mu.Unlock()
	g.nudge()
	return err
}

func (g *groupSyncer) nudge() {
	select {
	case g.wake <- struct{}{}:
	default:
	}
}

// hold hands files to the next group: each is fsynced, then closed.
func (g *groupSyncer) hold(files ...*os.File) {
	g.mu.Lock()
	g.held = append(g.held, files...)
	g.mu.Unlock()
	g.nudge()
}

// settle fsyncs the held files now, waiting for a group under way to
// end first: a compaction calls it before its snapshot makes the last
// one the backup, which must be on disk by then. It returns their
// fsync's failure.
func (g *groupSyncer) settle() error {
	g.fileMu.Lock()
	defer g.fileMu.Unlock()
	g.mu.Lock()
	held := g.held
	g.held = nil
	g.mu.Unlock()
	return g.syncHeld(held)
}

// retire ends f's turn as the journal to sync. If keep is set and a
// commit waits for its fsync, f is held for the next group; otherwise
// (a synced snapshot holds all of it) it is closed now.
func (g *groupSyncer) retire(f *os.File, keep bool) {
	g.fileMu.Lock()
	g.mu.Lock()
	wait := g.pending && g.f == f
	if g.f == f {
		g.f, g.pending = nil, false
	}
	if keep && wait {
		g.held = append(g.held, f)
	}
	g.mu.Unlock()
	g.fileMu.Unlock()
	if !(keep && wait) {
		f.Close()
	}
}

// setFile makes f the journal to sync.
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
