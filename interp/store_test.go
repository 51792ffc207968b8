package interp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

func newTestState() *State {
	return &State{
		Meta:  Meta{Version: stateVersion, RunID: "r", Status: StatusRunning},
		Steps: map[string]*StepRecord{},
		Caps:  map[string]int{},
		Vars:  map[string]json.RawMessage{},
	}
}

// transition changes the state the way a step does and commits it.
func transition(t testing.TB, s *store, st *State, i int) {
	t.Helper()
	name := fmt.Sprintf("s%d", i%7)
	rec := st.Steps[name]
	if rec == nil {
		rec = &StepRecord{}
		st.Steps[name] = rec
	}
	rec.Attempts++
	rec.Status = StepCompleted
	rec.Output = json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))
	st.Meta.CurrentStep = name
	st.Caps[name+"/again"] = i % 3
	st.Vars["last"] = json.RawMessage(fmt.Sprint(i))
	st.Events = append(st.Events, Event{Type: EventStepCompleted, Step: name, Attempt: rec.Attempts})
	st.Metrics.StepsRun++
	var ch changes
	ch.step(name)
	if err := s.commit(st, &ch, i%2 == 0); err != nil {
		t.Fatal(err)
	}
}

func TestStoreJournalAndCompaction(t *testing.T) {
	for _, tc := range []struct {
		n      int
		always bool
	}{{1, true}, {compactEvery - 1, true}, {compactEvery + 2, true}, {3*compactEvery + 5, true}, {1, false}, {3*compactEvery + 5, false}} {
		n := tc.n
		t.Run(fmt.Sprintf("%d/always=%v", n, tc.always), func(t *testing.T) {
			dir := t.TempDir()
			s := newStore(filesFor(filepath.Join(dir, stateFile)), true, tc.always)
			st := newTestState()
			if err := s.snapshot(st, &changes{}); err != nil {
				t.Fatal(err)
			}
			for i := range n {
				transition(t, s, st, i)
			}
			s.close()
			got, rep, err := readState(dir)
			used := rep.Used
			if err != nil {
				t.Fatal(err)
			}
			if used != stateFile {
				t.Errorf("read %s", used)
			}
			if diff := cmp.Diff(asJSON(t, st), asJSON(t, got)); diff != "" {
				t.Errorf("state read back differs (-want +got):\n%s", diff)
			}
			// A snapshot lost after compaction: the backup and both journals
			// still give the same state.
			if n > compactEvery {
				os.WriteFile(filepath.Join(dir, stateFile), []byte("{torn"), 0o644)
				got, rep, err := readState(dir)
				used := rep.Used
				if err != nil {
					t.Fatal(err)
				}
				if used != backupFile {
					t.Errorf("read %s, want the backup", used)
				}
				if diff := cmp.Diff(asJSON(t, st), asJSON(t, got)); diff != "" {
					t.Errorf("state from backup differs (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestStoreIgnoresTornLastLine(t *testing.T) {
	dir := t.TempDir()
	s := newStore(filesFor(filepath.Join(dir, stateFile)), false, false)
	st := newTestState()
	s.snapshot(st, &changes{})
	for i := range 5 {
		transition(t, s, st, i)
	}
	want, _, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	transition(t, s, st, 5)
	s.close()
	// Tear the last entry in half, as a crash mid-write would.
	p := stateFiles(dir).journal
	b, _ := os.ReadFile(p)
	last := len(b) - 1
	for last > 0 && b[last-1] != '\n' {
		last--
	}
	os.WriteFile(p, b[:last+(len(b)-last)/2], 0o644)
	got, _, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(asJSON(t, want), asJSON(t, got)); diff != "" {
		t.Errorf("torn entry was not ignored (-want +got):\n%s", diff)
	}
}

// asJSON renders a state compactly, so that states that differ only in the
// layout of raw JSON compare equal.
func asJSON(t testing.TB, st *State) string {
	t.Helper()
	b, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	var v any
	json.Unmarshal(b, &v)
	b, _ = json.MarshalIndent(v, "", " ")
	return string(b)
}

// TestJournalOmitsInputs guards against journal entries repeating the
// run's inputs: they never change during a run, and with a large input
// (a task list) every transition re-wrote it, making a 1,000-item graph
// ten times slower.
func TestJournalOmitsInputs(t *testing.T) {
	pb := load(t, `
playbook "big" {}
input "blob" { type = string }
step "a" { shell { command = ["true"] } }
step "b" { shell { command = ["true"] } }
`)
	blob := strings.Repeat("x", 10000)
	res, _, _ := start(t, pb, map[string]cty.Value{"blob": cty.StringVal(blob)})
	st, _, err := ReadRun(res.Dir)
	if err != nil || !strings.Contains(string(st.Meta.Inputs["blob"]), blob) {
		t.Fatalf("inputs not restored from the snapshot: %v", err)
	}
	j, _ := os.ReadFile(stateFiles(res.Dir).journalBackup)
	j2, _ := os.ReadFile(stateFiles(res.Dir).journal)
	if strings.Contains(string(j)+string(j2), blob) {
		t.Error("a journal entry repeats the inputs")
	}
}

// TestJournalKeepsItemValues guards the journal leaving out an item's
// value once written: reading back must restore it from the earlier
// record (a "null" read as a value once made every resumed item null).
func TestJournalKeepsItemValues(t *testing.T) {
	dir := t.TempDir()
	s := newStore(filesFor(filepath.Join(dir, stateFile)), false, false)
	st := newTestState()
	s.snapshot(st, &changes{})
	st.Items = map[string]map[string]*ItemRecord{"work": {
		"k1": {Key: "k1", Status: StepPending, Value: json.RawMessage(`{"id":"k1"}`), Steps: map[string]*StepRecord{}},
	}}
	ch := changes{}
	ch.item("work", "k1")
	if err := s.commit(st, &ch, false); err != nil {
		t.Fatal(err)
	}
	st.Items["work"]["k1"].Status = StepRunning
	ch = changes{}
	ch.item("work", "k1")
	if err := s.commit(st, &ch, false); err != nil {
		t.Fatal(err)
	}
	s.close()
	b, _ := os.ReadFile(stateFiles(dir).journal)
	if strings.Count(string(b), `{"id":"k1"}`) != 1 {
		t.Errorf("the item's value was journaled %d times, want once:\n%s", strings.Count(string(b), `{"id":"k1"}`), b)
	}
	got, _, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if it := got.Items["work"]["k1"]; it.Status != StepRunning || string(it.Value) != `{"id":"k1"}` {
		t.Errorf("item read back: %+v value %s", it, it.Value)
	}
}

// By default durable commits are fsynced in groups: a burst of completed
// steps costs a few fsyncs, not one each, and every commit is synced by
// the time the store closes (the end of the run). --sync=always fsyncs
// each before it returns.
func TestGroupCommit(t *testing.T) {
	for _, always := range []bool{false, true} {
		t.Run(fmt.Sprintf("always=%v", always), func(t *testing.T) {
			dir := t.TempDir()
			s := newStore(filesFor(filepath.Join(dir, stateFile)), true, always)
			var mu sync.Mutex
			syncs, syncedSize := 0, int64(0)
			if s.group != nil {
				s.group.fsync = func(f *os.File) error {
					mu.Lock()
					defer mu.Unlock()
					syncs++
					fi, err := f.Stat()
					if err == nil {
						syncedSize = fi.Size()
					}
					return err
				}
			}
			st := newTestState()
			if err := s.snapshot(st, &changes{}); err != nil {
				t.Fatal(err)
			}
			const n = 40 // under compactEvery: one journal
			for i := range n {
				st.Steps[fmt.Sprint("s", i)] = &StepRecord{Status: StatusCompleted}
				var ch changes
				ch.step(fmt.Sprint("s", i))
				if err := s.commit(st, &ch, true); err != nil {
					t.Fatal(err)
				}
			}
			if always {
				if s.group != nil {
					t.Fatal("--sync=always has a group syncer")
				}
				s.close()
				return
			}
			journal := s.f.journal
			if err := s.close(); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(journal)
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if syncs == 0 || syncs >= n {
				t.Errorf("%d fsyncs for %d durable commits in a burst, want at least one and fewer", syncs, n)
			}
			if syncedSize != fi.Size() {
				t.Errorf("last fsync covered %d bytes of the journal's %d", syncedSize, fi.Size())
			}
		})
	}
}

// A compaction's snapshot is fsynced by the group syncer, with its
// directory and the journal it replaced, not before the next step starts;
// and no snapshot becomes the backup before it is on disk, since a crash
// that tears the new state.json falls back to it.
func TestCompactionSyncedInTheGroup(t *testing.T) {
	dir := t.TempDir()
	s := newStore(filesFor(filepath.Join(dir, stateFile)), true, false)
	inode := func(path string) uint64 {
		fi, err := os.Stat(path)
		if err != nil {
			return 0
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	var mu sync.Mutex
	synced := map[uint64]int{}
	s.group.fsync = func(f *os.File) error {
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		mu.Lock()
		synced[fi.Sys().(*syscall.Stat_t).Ino]++
		mu.Unlock()
		return nil
	}
	isSynced := func(ino uint64) bool {
		mu.Lock()
		defer mu.Unlock()
		return synced[ino] > 0
	}
	st := newTestState()
	if err := s.snapshot(st, &changes{}); err != nil {
		t.Fatal(err)
	}
	first := inode(s.f.state) // fsynced before snapshot returned
	compactions := 0
	for i := 0; compactions < 4; i++ {
		prev := inode(s.f.state)
		transition(t, s, st, i)
		if s.sinceSnap != 0 {
			continue
		}
		compactions++
		if bak := inode(s.f.backup); bak != prev {
			t.Fatalf("compaction %d: the backup is not the last snapshot", compactions)
		} else if bak != first && !isSynced(bak) {
			t.Fatalf("compaction %d: the last snapshot became the backup before it was synced", compactions)
		}
		if i > 10000 {
			t.Fatal("no compaction")
		}
	}
	snap, jbak := inode(s.f.state), inode(s.f.journalBackup)
	if err := s.close(); err != nil {
		t.Fatal(err)
	}
	if !isSynced(snap) {
		t.Error("the last compaction's snapshot was never synced")
	}
	if !isSynced(jbak) {
		t.Error("the journal the last compaction replaced was never synced")
	}
	if !isSynced(inode(dir)) {
		t.Error("the directory was never synced after a compaction's renames")
	}
	got, _, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st, got, cmp.AllowUnexported(StepRecord{})); diff != "" {
		t.Errorf("state read back differs (-want +got):\n%s", diff)
	}
}

// TestCompactionWaitsForAProcess: a compaction that a commit finds due
// is left for the walk's next wait on a process (waiting), which writes
// it, the changes made since journaled first, unless a coroutine holds
// the walk's turn; with no such wait, the next commit writes it.
func TestCompactionWaitsForAProcess(t *testing.T) {
	dir := t.TempDir()
	s := newStore(filesFor(filepath.Join(dir, stateFile)), false, false)
	h := &localHost{store: s}
	st := newTestState()
	if err := s.snapshot(st, &changes{}); err != nil {
		t.Fatal(err)
	}
	i := 0
	for ; !s.compactDue; i++ {
		transition(t, s, st, i)
	}
	if s.sinceSnap == 0 {
		t.Fatal("the commit that found the compaction due wrote it")
	}
	// The next step started, not yet committed (a quick command's start).
	st.Steps["next"] = &StepRecord{Status: StepRunning, Attempts: 1}
	var ch changes
	ch.step("next")

	h.baton.Lock() // another coroutine's turn
	h.waiting(st, &ch)
	h.baton.Unlock()
	if !s.compactDue || s.sinceSnap == 0 {
		t.Fatal("compacted while another coroutine held the walk's turn")
	}
	h.waiting(st, &ch)
	if s.compactDue || s.sinceSnap != 0 {
		t.Fatalf("waiting left the compaction due (since the snapshot: %d lines)", s.sinceSnap)
	}
	if err := h.checkpoint(st, &ch, false); err != nil {
		t.Fatal(err)
	}
	s.close()
	for _, torn := range []bool{false, true} {
		if torn {
			// The new snapshot lost: the backup pair holds the started step.
			os.WriteFile(filepath.Join(dir, stateFile), []byte("{torn"), 0o644)
		}
		got, _, err := readState(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got.Steps["next"] == nil || got.Steps["next"].Status != StepRunning {
			t.Errorf("torn=%v: the step started before the compaction is %+v", torn, got.Steps["next"])
		}
	}

	// No wait on a process: the commit after the one that found it due
	// compacts.
	dir = t.TempDir()
	s = newStore(filesFor(filepath.Join(dir, stateFile)), false, false)
	st = newTestState()
	s.snapshot(st, &changes{})
	for i = 0; !s.compactDue; i++ {
		transition(t, s, st, i)
	}
	transition(t, s, st, i)
	if s.compactDue || s.sinceSnap != 0 {
		t.Errorf("the next commit left the compaction due (since the snapshot: %d lines)", s.sinceSnap)
	}
	s.close()
}

// TestCompactionBesideConcurrentItems runs quick commands in many items
// at once, so that compactions fall due while several processes run
// (under -race, the check for one reads nothing another coroutine
// writes), and reads the state back whole.
func TestCompactionBesideConcurrentItems(t *testing.T) {
	pb := load(t, `
playbook "p" {}
step "work" {
  for_each    = "map(1..200, 'k' + string(#))"
  key         = "item"
  concurrency = 4
  step "do" {
    shell { command = ["true"] }
  }
}
`)
	res, _ := startWith(t, pb, Options{})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	st, _, err := ReadRun(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(st.Items["work"]); n != 200 || st.Metrics.StepsRun < 200 {
		t.Errorf("state read back: %d items, %d steps run; want 200 items, 200 steps or more", n, st.Metrics.StepsRun)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, backupFile)); err != nil {
		t.Errorf("no compaction happened: %v", err)
	}
}
