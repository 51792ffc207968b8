package interp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/apl-lang/apl/builtins"
)

// A run's state is kept as a snapshot (state.json) plus a journal
// (state.journal): every transition appends one line holding what changed,
// and after compactEvery transitions or more, once the journal has grown
// to snapRatio times the snapshot, the whole state is written as a new
// snapshot. A transition then costs one small append (and one fsync when
// durable), not a rewrite of a state that grows with its event log.
//
// Snapshots are written atomically: a temp file, fsync, then the current
// snapshot and journal become state.json.bak and state.journal.bak and the
// temp file takes the snapshot's place. Every journal line carries a
// sequence number; reading applies the lines newer than the snapshot and
// stops at a torn last line. If state.json is unreadable, the backup pair
// plus the current journal give the same state.
const compactEvery = 64

// snapRatio is how many times the size of the last snapshot the journal
// grows to before the next one. A long chain's state grows with every
// step, and each snapshot re-encodes all of it: at 1 (one snapshot per
// journal of its own size) a 500-step chain spent as much on snapshots as
// on its journal lines. At 4 the snapshots cost a quarter of the journal;
// a resume replays at most four snapshots' worth of lines, milliseconds.
const snapRatio = 4

// killPoint, set only by tests, is called at each point of writing a
// snapshot where a SIGKILL must lose nothing (TestResumeAfterKillInCompaction).
var killPoint func(where string)

func atKillPoint(where string) {
	if killPoint != nil {
		killPoint(where)
	}
}

// statePointer, in a run directory, holds the path of a state file that a
// playbook's state block put elsewhere.
const statePointer = "state.path"

// files names a state file and its companions: state.json,
// state.json.bak, state.journal and state.journal.bak for the default.
type files struct{ state, backup, journal, journalBackup, events string }

func filesFor(statePath string) files {
	base := strings.TrimSuffix(statePath, filepath.Ext(statePath))
	return files{statePath, statePath + ".bak", base + ".journal", base + ".journal.bak", base + ".events.jsonl"}
}

// keepEvents is how many events the state keeps; older ones are moved to
// the events archive when a snapshot is written, so that a long run's
// snapshots do not grow with its history.
const keepEvents = 1000

// stateFiles finds the state files of the run in dir.
func stateFiles(dir string) files {
	if b, err := os.ReadFile(filepath.Join(dir, statePointer)); err == nil {
		if p := strings.TrimSpace(string(b)); p != "" {
			return filesFor(p)
		}
	}
	return filesFor(filepath.Join(dir, stateFile))
}

// journalEntry is one transition: the records that changed and the events
// added since the previous entry.
type journalEntry struct {
	Seq      int                               `json:"seq"`
	Items    map[string]map[string]*ItemRecord `json:"items,omitempty"`
	ItemsRun map[string]int                    `json:"items_run,omitempty"`
	Breaker  BreakerState                      `json:"circuit_breaker"`
	Waiting  *Waiting                          `json:"waiting,omitempty"`
	Meta     Meta                              `json:"meta"`
	Steps    map[string]*StepRecord            `json:"steps,omitempty"`
	Caps     map[string]int                    `json:"caps,omitempty"`
	Vars     map[string]json.RawMessage        `json:"vars,omitempty"`
	Events   []Event                           `json:"events,omitempty"`
	Metrics  Metrics                           `json:"metrics"`
	Output   json.RawMessage                   `json:"output,omitempty"`
}

// store persists one run's state.
type store struct {
	dir       string
	f         files
	sync      bool
	journal   *os.File
	sinceSnap int
	// snapBytes and journalBytes size the last snapshot and the journal
	// since: a snapshot is written once the journal has grown snapRatio
	// times as large as it, so that rewriting a large state stays a
	// fraction of the cost of the changes made.
	snapBytes, journalBytes int
	events                  int // events already persisted
	// itemsWritten are the items whose value the snapshot or journal
	// already holds.
	itemsWritten map[[2]string]bool
	buf          []byte   // the journal line being written
	snapBuf      []byte   // the last snapshot's encoding, reused by the next
	keys         []string // the encoder's scratch, kept between lines
	// steps holds the step records a line writes, kept between lines.
	steps map[string]*StepRecord
	// redact removes secrets from everything written.
	redact *builtins.Redactor
	// archiveChecked is set once the events archive is known to hold
	// exactly the events the state says it archived.
	archiveChecked bool
	// lockFile holds the state file's lock, when the state is shared.
	lockFile *os.File
	// compactDue is set when a commit found the journal due for a
	// compaction and left it for the walk's next wait on a process
	// (compactIfDue); the next commit compacts if none came.
	compactDue bool
	// group, when set, fsyncs durable commits in groups (Options.SyncAlways
	// unset); nil: each durable commit is fsynced before it returns.
	group *groupSyncer
}

// newStore returns the store of the state files f. Without sync nothing
// is fsynced; with it, always fsyncs every durable commit before it
// returns, and otherwise a groupSyncer covers the durable commits of a
// short window with one fsync.
func newStore(f files, sync, always bool) *store {
	s := &store{dir: filepath.Dir(f.state), f: f, sync: sync}
	if sync && !always {
		s.group = newGroupSyncer()
	}
	return s
}

// newStoreFor is newStore as opts ask.
func newStoreFor(f files, opts Options) *store { return newStore(f, !opts.NoSync, opts.SyncAlways) }

// changes names the records of a state that changed since it was last
// persisted: the journal writes only those.
type changes struct {
	steps map[string]bool
	items map[[2]string]bool
}

func (c *changes) step(name string) {
	if c.steps == nil {
		c.steps = map[string]bool{}
	}
	c.steps[name] = true
}

// item marks an item of a for_each step as changed.
func (c *changes) item(step, key string) {
	if c.items == nil {
		c.items = map[[2]string]bool{}
	}
	c.items[[2]string{step, key}] = true
}

func (c *changes) reset() {
	clear(c.steps)
	clear(c.items)
}

// commit persists the state's changes since the last commit, which ch
// names. durable asks for an fsync; without it the write still survives
// the process being killed, only not the machine losing power.
func (s *store) commit(st *State, ch *changes, durable bool) error {
	if s.journal == nil {
		return s.snapshot(st, ch)
	}
	if err := s.appendEntry(st, ch, durable); err != nil {
		return err
	}
	// Compact after journaling, so that the journal that becomes the
	// backup holds every transition up to the new snapshot. A compaction
	// first waits one commit for a moment the walk waits on a process
	// anyway (compactIfDue): between one step and the next it is the
	// costliest thing a chain of quick commands does.
	if s.sinceSnap >= compactEvery && s.journalBytes >= snapRatio*s.snapBytes {
		if !s.compactDue {
			s.compactDue = true
			return nil
		}
		return s.writeSnapshot(st, ch, true)
	}
	return nil
}

// compactIfDue writes the snapshot a commit left due (compactDue). The
// state's changes since that commit are journaled first, as snapshot
// does, so that here too the journal that becomes the backup holds every
// transition up to the new snapshot.
func (s *store) compactIfDue(st *State, ch *changes) error {
	if !s.compactDue || s.journal == nil {
		return nil
	}
	if err := s.appendEntry(st, ch, false); err != nil {
		return err
	}
	return s.writeSnapshot(st, ch, true)
}

// appendEntry writes one journal entry: the changes ch names, with the
// run-wide parts whole.
func (s *store) appendEntry(st *State, ch *changes, durable bool) error {
	st.Meta.Seq++
	meta := st.Meta
	meta.Inputs = nil // fixed for the run; the snapshot has them
	e := journalEntry{Seq: st.Meta.Seq, Meta: meta, Caps: st.Caps, Metrics: st.Metrics, Output: st.Output,
		Breaker: st.Breaker, Waiting: st.Waiting, ItemsRun: st.ItemsRun}
	for k := range ch.items {
		if e.Items == nil {
			e.Items = map[string]map[string]*ItemRecord{}
		}
		if e.Items[k[0]] == nil {
			e.Items[k[0]] = map[string]*ItemRecord{}
		}
		// An item's value never changes; once written it is left out
		// (the encoder skips the values of s.itemsWritten).
		e.Items[k[0]][k[1]] = st.Items[k[0]][k[1]]
	}
	if len(ch.steps) > 0 {
		if s.steps == nil {
			s.steps = map[string]*StepRecord{}
		}
		clear(s.steps)
		for name := range ch.steps {
			s.steps[name] = st.Steps[name]
		}
		e.Steps = s.steps
	}
	if len(st.Vars) > 0 {
		e.Vars = st.Vars
	}
	e.Events = st.Events[s.events:]
	enc := stateEncoder{b: s.buf[:0], keys: s.keys[:0]}
	enc.entry(&e, s.itemsWritten)
	if enc.err != nil {
		return fmt.Errorf("encode state: %w", enc.err)
	}
	s.buf, s.keys = append(enc.b, '\n'), enc.keys
	line := s.redact.Bytes(s.buf)
	s.journalBytes += len(line)
	if _, err := s.journal.Write(line); err != nil {
		return fmt.Errorf("append to %s: %w", s.f.journal, err)
	}
	if durable && s.sync {
		sync := s.journal.Sync
		if s.group != nil {
			sync = s.group.request
		}
		if err := sync(); err != nil {
			return fmt.Errorf("sync %s: %w", s.f.journal, err)
		}
	}
	s.events = len(st.Events)
	s.markWritten(ch.items)
	ch.reset()
	s.sinceSnap++
	return nil
}

// snapshot writes the whole state and starts a new journal; every change
// ch names is in it. The changes go to the journal first, so that the
// journal that becomes the backup ends where the new snapshot begins: a
// damaged snapshot loses nothing that the backup pair cannot give back.
func (s *store) snapshot(st *State, ch *changes) error {
	if s.journal != nil {
		if err := s.appendEntry(st, ch, true); err != nil {
			return err
		}
	}
	return s.writeSnapshot(st, ch, false)
}

// writeSnapshot writes the whole state as the new snapshot, keeps the old
// one and its journal as the backup pair, and starts a new journal.
//
// A compaction (grouped set, the group syncer in use) leaves its fsyncs
// to the syncer: the snapshot file, the directory and the journal it
// replaced are synced with the next group, before any line of the new
// journal. Where a kill (SIGKILL of apl) or a machine crash lands, and
// what it loses:
//
//   - The temporary file written: state.json and the journal are whole; a
//     crash loses the journal lines not yet synced.
//   - Before the renames the last snapshot, which becomes the backup, is
//     synced if its group has not run yet (settle): the backup is always
//     on disk before recovery can need it.
//   - state.json renamed to its backup, the journal to its backup, the
//     temporary file to state.json, each in turn: a kill leaves, at each
//     of these points, a snapshot and journal that readState puts
//     together (state.json, else the backup with both journals), and so
//     loses nothing. A crash before the group's fsyncs may leave any of
//     the renames undone or the new state.json empty or torn: readState
//     then takes the backup (on disk) with what of the journals reached
//     the disk, and stops at the first gap.
//
// So a crash still loses at most what was written after the last group's
// fsync, as for the journal alone; a kill loses nothing. Without grouped
// (a run's first snapshot and every stop: a pause, an interruption, the
// end) and with --sync=always, the snapshot and directory are fsynced
// before this returns.
func (s *store) writeSnapshot(st *State, ch *changes, grouped bool) error {
	if err := s.archiveEvents(st); err != nil {
		return err
	}
	st.Meta.Seq++
	// Compact, not indented: the state of a large task graph is rewritten
	// often enough for indenting to show in profiles.
	enc := stateEncoder{b: slices.Grow(s.snapBuf[:0], s.snapBytes+s.snapBytes/4+4096), keys: s.keys[:0]}
	enc.state(st)
	s.keys, s.snapBuf = enc.keys, enc.b
	if enc.err != nil {
		return fmt.Errorf("encode state: %w", enc.err)
	}
	data := s.redact.Bytes(enc.b)
	grouped = grouped && s.sync && s.group != nil
	tmp, err := os.CreateTemp(s.dir, ".state-*.tmp")
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil && s.sync && !grouped {
		err = tmp.Sync()
	}
	if err != nil || !grouped {
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	atKillPoint("written")
	if s.group != nil {
		if err := s.group.settle(); err != nil {
			if grouped {
				tmp.Close()
			}
			return fmt.Errorf("sync %s: %w", s.f.state, err)
		}
	}
	if s.journal != nil {
		if s.group != nil {
			s.group.retire(s.journal, grouped)
		} else {
			s.journal.Close()
		}
		s.journal = nil
	}
	if grouped {
		s.group.hold(tmp)
	}
	cur := s.f.state
	if err := os.Rename(cur, s.f.backup); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("keep state backup: %w", err)
	}
	atKillPoint("state renamed")
	if err := os.Rename(s.f.journal, s.f.journalBackup); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("keep journal backup: %w", err)
	}
	atKillPoint("journal renamed")
	if err := os.Rename(tmp.Name(), cur); err != nil {
		return fmt.Errorf("write state: %w", err)
	}
	atKillPoint("snapshot renamed")
	if s.sync {
		if d, err := os.Open(s.dir); err == nil {
			if grouped {
				s.group.hold(d)
			} else {
				d.Sync()
				d.Close()
			}
		}
	}
	j, err := os.OpenFile(s.f.journal, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", s.f.journal, err)
	}
	s.journal = j
	if s.group != nil {
		s.group.setFile(j)
	}
	atKillPoint("journal opened")
	s.sinceSnap, s.compactDue = 0, false
	s.snapBytes, s.journalBytes = len(data), 0
	s.events = len(st.Events)
	ch.reset()
	for step, recs := range st.Items {
		for k := range recs {
			s.markWritten(map[[2]string]bool{{step, k}: true})
		}
	}
	return nil
}

// archiveEvents moves all but the newest keepEvents events to the events
// archive, once twice that many have gathered. It runs before a snapshot
// is written, and the archive is synced first, so that no event is ever
// only in memory.
func (s *store) archiveEvents(st *State) error {
	if st.Meta.Seq == 0 {
		// A new state: an archive left there by an earlier run (a shared
		// state path) is not this run's.
		os.Remove(s.f.events)
	}
	if len(st.Events) < 2*keepEvents {
		return nil
	}
	old := st.Events[:len(st.Events)-keepEvents]
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, e := range old {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("archive events: %w", err)
		}
	}
	// A state read back from its backup may have archived fewer events
	// than the archive holds: what it holds beyond that, the state has
	// again, so it is cut off. Checked once per process: after that, this
	// store wrote every line itself.
	if !s.archiveChecked {
		if err := s.trimArchive(st.Meta.EventsArchived); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(s.f.events, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("archive events: %w", err)
	}
	_, err = f.Write(s.redact.Bytes(b.Bytes()))
	if err == nil && s.sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("archive events: %w", err)
	}
	s.archiveChecked = true
	st.Meta.EventsArchived += len(old)
	st.Events = append([]Event(nil), st.Events[len(old):]...)
	return nil
}

// trimArchive cuts the events archive back to the first n events, the
// ones the state says it archived.
func (s *store) trimArchive(n int) error {
	prev, err := os.ReadFile(s.f.events)
	if err != nil || bytes.Count(prev, []byte("\n")) <= n {
		return nil
	}
	keep := 0 // bytes of the first n lines
	for lines := 0; lines < n; lines++ {
		keep += bytes.IndexByte(prev[keep:], '\n') + 1
	}
	if err := os.WriteFile(s.f.events, prev[:keep], 0o644); err != nil {
		return fmt.Errorf("archive events: %w", err)
	}
	return nil
}

// ReadEvents returns the whole event log of the run in dir, whose state
// (from ReadRun) is st: the events archived out of the state, then the
// state's own.
func ReadEvents(dir string, st *State) ([]Event, error) {
	var out []Event
	if st.Meta.EventsArchived > 0 {
		f, err := os.Open(stateFiles(dir).events)
		if err != nil {
			return nil, fmt.Errorf("events archive: %w", err)
		}
		defer f.Close()
		dec := json.NewDecoder(f)
		for len(out) < st.Meta.EventsArchived {
			var e Event
			if err := dec.Decode(&e); err != nil {
				return nil, fmt.Errorf("events archive: %w", err)
			}
			out = append(out, e)
		}
	}
	return append(out, st.Events...), nil
}

func (s *store) markWritten(items map[[2]string]bool) {
	if s.itemsWritten == nil {
		s.itemsWritten = map[[2]string]bool{}
	}
	for k := range items {
		s.itemsWritten[k] = true
	}
}

// lock takes the state file for run id, so that a second run cannot share
// it: a playbook's state block puts one state file where every run of it
// finds it (the orchestrator's .autopilot/state.json). The lock file holds the id
// of the run that has it; the kernel releases it if the process dies.
func (s *store) lock(id string) error {
	p := s.f.state + ".lock"
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("lock state file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 200))
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return &StateInUseError{Path: s.f.state, RunID: strings.TrimSpace(string(holder))}
		}
		return fmt.Errorf("lock state file: %w", err)
	}
	f.Truncate(0)
	f.WriteAt([]byte(id+"\n"), 0)
	s.lockFile = f
	return nil
}

// StateInUseError is returned when another run holds the state file a
// playbook's state block names.
type StateInUseError struct{ Path, RunID string }

func (e *StateInUseError) Error() string {
	holder := "another run"
	if e.RunID != "" {
		holder = "run " + e.RunID
	}
	return fmt.Sprintf("the state file %s is in use by %s; wait for it to end, or give this playbook its own state path", e.Path, holder)
}

func (s *store) close() error {
	var err error
	if s.group != nil {
		// The last transitions are synced before the run returns.
		if err = s.group.close(); err != nil {
			err = fmt.Errorf("sync %s: %w", s.f.journal, err)
		}
		s.group = nil
	}
	if s.lockFile != nil {
		s.lockFile.Close() // releases the lock
		s.lockFile = nil
	}
	if s.journal == nil {
		return err
	}
	if cerr := s.journal.Close(); err == nil {
		err = cerr
	}
	s.journal = nil
	return err
}

// readState reads a run's state: the snapshot and its journal, or, when
// the snapshot is missing, corrupt or inconsistent, the backup snapshot
// with both journals. It says which snapshot it used and what of the
// journals it had to leave out.
func readState(dir string) (*State, readReport, error) {
	var firstErr error
	f := stateFiles(dir)
	candidates := []struct {
		snap     string
		journals []string
	}{
		{f.state, []string{f.journal}},
		{f.backup, []string{f.journalBackup, f.journal}},
	}
	for _, c := range candidates {
		rep := readReport{Used: filepath.Base(c.snap)}
		st, err := readSnapshot(c.snap)
		if err == nil {
			err = replayAll(st, c.journals, &rep)
		}
		if err == nil {
			err = checkState(st)
			if err != nil {
				err = fmt.Errorf("%s: %w", filepath.Base(c.snap), err)
			}
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		return st, rep, nil
	}
	return nil, readReport{}, fmt.Errorf("no readable state in %s: %w", dir, firstErr)
}

// readReport says how a state was read.
type readReport struct {
	// Used is the snapshot the state came from: state.json, or its backup.
	Used string
	// Lost describes journal records that were left out because the
	// journal was damaged before them; what they recorded runs again.
	Lost []string
}

func readSnapshot(path string) (*State, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("%s is corrupt: %w", filepath.Base(path), err)
	}
	if st.Meta.Version != stateVersion {
		return nil, fmt.Errorf("%s has state format %d; this apl reads format %d", filepath.Base(path), st.Meta.Version, stateVersion)
	}
	st.fillMaps()
	return &st, nil
}

// fillMaps gives a decoded state the empty maps that its JSON left out,
// which the walk writes to.
func (st *State) fillMaps() {
	if st.Steps == nil {
		st.Steps = map[string]*StepRecord{}
	}
	if st.Caps == nil {
		st.Caps = map[string]int{}
	}
	if st.Vars == nil {
		st.Vars = map[string]json.RawMessage{}
	}
}

// checkState rejects a state that was damaged or edited into a shape no
// run writes, before anything relies on it: a null record, an item
// without its steps.
func checkState(st *State) error {
	if st.Meta.RunID == "" {
		return errors.New("the state names no run")
	}
	for name, rec := range st.Steps {
		if rec == nil {
			return fmt.Errorf("step %q has a null record", name)
		}
	}
	for step, recs := range st.Items {
		for key, rec := range recs {
			if rec == nil {
				return fmt.Errorf("item %q of step %q has a null record", key, step)
			}
			if rec.Steps == nil {
				rec.Steps = map[string]*StepRecord{}
			}
			if rec.Caps == nil {
				rec.Caps = map[string]int{}
			}
			for name, sr := range rec.Steps {
				if sr == nil {
					return fmt.Errorf("step %q of item %q of step %q has a null record", name, key, step)
				}
			}
		}
	}
	return nil
}

// replayAll applies the journals in order. Their records must follow one
// another without a gap: the only gap allowed is the one sequence number a
// snapshot takes, where one journal ends and the next begins. Where a
// journal is damaged (a line that does not parse with valid lines after
// it, or a gap), replay stops at the last record it can prove and reports
// the rest as lost.
func replayAll(st *State, journals []string, rep *readReport) error {
	for i, path := range journals {
		stopped, err := replay(st, path, i > 0, rep)
		if err != nil {
			return err
		}
		if stopped {
			break
		}
	}
	return nil
}

// replay applies the journal's entries newer than the state. It reports
// whether it stopped at damage, after which nothing later can be applied.
func replay(st *State, path string, afterSnapshot bool, rep *readReport) (stopped bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 256*1024*1024)
	name := filepath.Base(path)
	line, bad, first := 0, 0, true
	lost := 0
	for sc.Scan() {
		line++
		var e journalEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			if bad == 0 {
				bad = line
			}
			continue
		}
		if e.Seq <= st.Meta.Seq {
			continue
		}
		if bad != 0 || stopped {
			// A valid record after damage: the damage is not a torn last
			// write, and what lies after it cannot be trusted in order.
			lost++
			continue
		}
		want := st.Meta.Seq + 1
		if first && afterSnapshot {
			want = st.Meta.Seq + 2 // the snapshot between the journals
		}
		if e.Seq > want {
			rep.Lost = append(rep.Lost, fmt.Sprintf("%s line %d: records %d to %d are missing", name, line, want, e.Seq-1))
			stopped = true
			lost++
			continue
		}
		first = false
		applyEntry(st, &e)
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	if bad != 0 && lost > 0 {
		rep.Lost = append(rep.Lost, fmt.Sprintf("%s line %d does not parse, and %d later records were left out", name, bad, lost))
		stopped = true
	} else if stopped && lost > 1 {
		rep.Lost[len(rep.Lost)-1] += fmt.Sprintf(", and %d later records were left out", lost)
	}
	return stopped, nil
}

// applyEntry applies one journal entry to the state.
func applyEntry(st *State, e *journalEntry) {
	inputs := st.Meta.Inputs
	st.Meta = e.Meta
	st.Meta.Inputs = inputs
	for name, rec := range e.Steps {
		st.Steps[name] = rec
	}
	if e.Caps != nil {
		st.Caps = e.Caps
	}
	for k, v := range e.Vars {
		st.Vars[k] = v
	}
	st.Events = append(st.Events, e.Events...)
	st.Metrics = e.Metrics
	st.Breaker = e.Breaker
	if e.ItemsRun != nil {
		st.ItemsRun = e.ItemsRun
	}
	st.Waiting = e.Waiting
	for step, recs := range e.Items {
		if st.Items == nil {
			st.Items = map[string]map[string]*ItemRecord{}
		}
		if st.Items[step] == nil {
			st.Items[step] = map[string]*ItemRecord{}
		}
		for k, rec := range recs {
			if rec != nil && (len(rec.Value) == 0 || string(rec.Value) == "null") {
				if prev := st.Items[step][k]; prev != nil {
					rec.Value = prev.Value
				}
			}
			st.Items[step][k] = rec
		}
	}
	if e.Output != nil {
		st.Output = e.Output
	}
}
