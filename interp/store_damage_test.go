package interp

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// journalLines splits a journal into its lines (each with its newline).
func journalLines(t *testing.T, p string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))
}

// Issue 9: garbage in the middle of state.journal silently dropped every
// later record. Now replay stops at the last record it can prove, and the
// report says what was left out.
func TestJournalGarbageInTheMiddleIsReported(t *testing.T) {
	dir := t.TempDir()
	s := newStore(filesFor(filepath.Join(dir, stateFile)), false, false)
	st := newTestState()
	s.snapshot(st, &changes{})
	for i := range 3 {
		transition(t, s, st, i)
	}
	want, _, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := 3; i < 8; i++ {
		transition(t, s, st, i)
	}
	s.close()
	p := stateFiles(dir).journal
	lines := journalLines(t, p)
	lines[3] = []byte("{garbage\n") // the 4th record
	os.WriteFile(p, bytes.Join(lines, nil), 0o644)

	got, rep, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(asJSON(t, want), asJSON(t, got)); diff != "" {
		t.Errorf("the state is not the one before the damage (-want +got):\n%s", diff)
	}
	if len(rep.Lost) != 1 || !strings.Contains(rep.Lost[0], "line 4 does not parse, and 4 later records were left out") {
		t.Errorf("report %q", rep.Lost)
	}
}

// Issue 9: with state.json and the journal backup both damaged, replay
// crossed a gap in sequence numbers and the run ended completed with
// steps recorded pending. Now a gap stops the replay and is reported.
func TestJournalGapAcrossBackupIsReported(t *testing.T) {
	dir := t.TempDir()
	s := newStore(filesFor(filepath.Join(dir, stateFile)), false, false)
	st := newTestState()
	s.snapshot(st, &changes{})
	for i := range 4 {
		transition(t, s, st, i)
	}
	// The state as the journal backup's third record leaves it.
	f := stateFiles(dir)
	s.snapshot(st, &changes{})
	for i := 4; i < 7; i++ {
		transition(t, s, st, i)
	}
	s.close()
	// state.json is lost, and the journal backup loses its last records.
	os.WriteFile(f.state, []byte("{not json"), 0o644)
	lines := journalLines(t, f.journalBackup)
	os.WriteFile(f.journalBackup, bytes.Join(lines[:2], nil), 0o644)

	got, rep, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Used != backupFile {
		t.Errorf("used %s, want the backup", rep.Used)
	}
	if len(rep.Lost) == 0 || !strings.Contains(rep.Lost[0], "are missing") {
		t.Fatalf("the gap was not reported: %q", rep.Lost)
	}
	// Nothing after the gap was applied: s4..s6 were recorded only there.
	for _, name := range []string{"s4", "s5", "s6"} {
		if rec := got.Steps[name]; rec != nil {
			t.Errorf("step %s from after the gap was applied: %+v", name, rec)
		}
	}
	if got.Steps["s1"] == nil || got.Steps["s1"].Status != StepCompleted {
		t.Errorf("records before the damage were lost too: %+v", got.Steps)
	}
}

// Issue 9: a hand-edited state with a null item record or null steps
// panicked (recovered). Now reading it says what is wrong.
func TestDamagedStateShapesAreRefused(t *testing.T) {
	for name, edit := range map[string]func(m map[string]any){
		"null step record": func(m map[string]any) { m["steps"].(map[string]any)["s0"] = nil },
		"null item record": func(m map[string]any) {
			m["items"] = map[string]any{"work": map[string]any{"k": nil}}
		},
		"no run id": func(m map[string]any) { m["_meta"].(map[string]any)["run_id"] = "" },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := newStore(filesFor(filepath.Join(dir, stateFile)), false, false)
			st := newTestState()
			s.snapshot(st, &changes{})
			transition(t, s, st, 0)
			s.snapshot(st, &changes{})
			s.close()
			f := stateFiles(dir)
			for _, p := range []string{f.state, f.backup} {
				b, _ := os.ReadFile(p)
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				edit(m)
				b, _ = json.Marshal(m)
				os.WriteFile(p, b, 0o644)
			}
			os.Remove(f.journal)
			os.Remove(f.journalBackup)
			_, _, err := readState(dir)
			if err == nil {
				t.Fatal("a damaged state was read")
			}
			t.Log(err)
		})
	}
}

// A state without steps reads as one with none.
func TestStateWithoutStepsReads(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, stateFile), []byte(`{"_meta":{"version":1,"run_id":"r","status":"running"}}`), 0o644)
	st, _, err := readState(dir)
	if err != nil || st.Steps == nil {
		t.Fatalf("%v %+v", err, st)
	}
}

// Issue 9: the event log grew without bound, and every snapshot rewrote
// all of it. The state keeps the newest events; ReadEvents still gives
// the whole log, in order.
func TestEventLogIsArchived(t *testing.T) {
	dir := t.TempDir()
	s := newStore(filesFor(filepath.Join(dir, stateFile)), false, false)
	st := newTestState()
	s.snapshot(st, &changes{})
	const n = 5000
	for i := range n {
		st.Events = append(st.Events, Event{Type: EventLog, Message: strconv.Itoa(i)})
		var ch changes
		if err := s.commit(st, &ch, false); err != nil {
			t.Fatal(err)
		}
	}
	s.snapshot(st, &changes{})
	s.close()
	got, _, err := readState(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) >= 2*keepEvents {
		t.Errorf("the state holds %d events", len(got.Events))
	}
	all, err := ReadEvents(dir, got)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n {
		t.Fatalf("ReadEvents gave %d events, want %d", len(all), n)
	}
	for i, e := range all {
		if e.Message != strconv.Itoa(i) {
			t.Fatalf("event %d is %q", i, e.Message)
		}
	}
}

// A state read back from its backup may have archived fewer events than
// the archive holds; the next archiving cuts the archive back to them, so
// that ReadEvents never gives an event twice.
func TestArchiveCutBackToTheState(t *testing.T) {
	dir := t.TempDir()
	s := newStore(filesFor(filepath.Join(dir, stateFile)), false, false)
	if err := os.WriteFile(s.f.events, []byte("{\"event\":\"a\"}\n{\"event\":\"b\"}\n{\"event\":\"c\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.trimArchive(2); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(s.f.events); string(b) != "{\"event\":\"a\"}\n{\"event\":\"b\"}\n" {
		t.Errorf("archive after the cut: %q", b)
	}
}
