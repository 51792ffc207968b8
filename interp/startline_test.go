package interp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A quick step's start and end are one journal line: a chain of short
// commands wrote two lines a step, the start's only to be superseded a
// millisecond later.
func TestQuickStepsWriteOneJournalLine(t *testing.T) {
	// /bin/true is quick, but on a loaded machine not always within 50 ms.
	defer func(w time.Duration) { startWindow = w }(startWindow)
	startWindow = time.Minute
	pb := load(t, truePlaybook(5))
	res, _, _ := start(t, pb, nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	// The run's end wrote a snapshot, which kept the run's journal as the
	// backup: one line a step, and the line the snapshot ends.
	b, err := os.ReadFile(filepath.Join(res.Dir, "state.journal.bak"))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte("\n")); n != 5+1 {
		t.Errorf("the journal has %d lines for 5 quick steps, want 6:\n%s", n, b)
	}
	// Both events of every step are in it.
	if s, c := bytes.Count(b, []byte(`"step_started"`)), bytes.Count(b, []byte(`"step_completed"`)); s != 5 || c != 5 {
		t.Errorf("%d step_started and %d step_completed events, want 5 of each", s, c)
	}
}

// A step that lasts shows as running in the state on disk (what apl show
// reads) while it runs, though its start waited for startWindow.
func TestLastingStepShowsRunning(t *testing.T) {
	pb := load(t, `
playbook "slow" {}
step "quick" {
  shell { command = ["true"] }
}
step "lasting" {
  shell { script = "touch started; while [ ! -f release ]; do sleep 0.01; done" }
}
`)
	work := t.TempDir()
	done := make(chan *Result, 1)
	go func() {
		res, err := Start(context.Background(), pb, "slow", Options{Workdir: work, RunID: "slow", NoSync: true})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	defer os.WriteFile(filepath.Join(work, "release"), nil, 0o644)
	dir := filepath.Join(work, ".apl", "runs", "slow")
	var running bool
	for deadline := time.Now().Add(30 * time.Second); !running && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(work, "started")); err != nil {
			continue
		}
		st, _, err := ReadRun(dir)
		running = err == nil && st.Steps["lasting"] != nil && st.Steps["lasting"].Status == StepRunning &&
			st.Steps["lasting"].Attempts == 1 && st.Steps["quick"].Status == StepCompleted
	}
	if !running {
		t.Fatal("the state never showed the lasting step running")
	}
	os.WriteFile(filepath.Join(work, "release"), nil, 0o644)
	if res := <-done; res == nil || res.Status != StatusCompleted {
		t.Fatalf("run: %+v", res)
	}
}

// selfKillPlaybook's step, the first time, kills the apl running it as
// soon as procs.log records the step's process, well within startWindow:
// the journal has not yet said the step started. Run again, it ends at
// once.
const selfKillPlaybook = `
playbook "selfkill" {}
step "first" {
  shell { command = ["true"] }
}
step "s" {
  shell { script = "if [ -f first.pid ]; then echo again >> log.txt; exit 0; fi; echo $$ > first.pid; until grep -q \" $$ \" .apl/runs/killed/procs.log; do sleep 0.005; done; kill -KILL $PPID; sleep 30" }
}
`

// A step whose start the journal does not hold yet is still stopped by
// resume when apl is killed: procs.log records its process as it starts.
func TestResumeStopsAStepKilledBeforeItsStartWasWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	work := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChild$")
	cmd.Env = append(os.Environ(), "APL_TEST_CHILD="+work, "APL_TEST_SELFKILL=1")
	if err := cmd.Run(); err == nil {
		t.Fatal("the run was not killed")
	} else if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the run ended with %v, not SIGKILL", err)
	}
	b, err := os.ReadFile(filepath.Join(work, "first.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, ".apl", "runs", "killed")
	st, _, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Steps["first"].Status != StepCompleted || st.Meta.CurrentStep != "s" {
		t.Fatalf("state after the kill: current %q, first %+v", st.Meta.CurrentStep, st.Steps["first"])
	}

	rec := &recorder{}
	res, err := Resume(context.Background(), load(t, selfKillPlaybook), dir, Options{NoSync: true, Observer: rec})
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("resume: %v %+v", err, res)
	}
	stopped := false
	for _, e := range rec.events {
		stopped = stopped || strings.Contains(e.Message, fmt.Sprintf("stopped process group %d", pid))
	}
	if !stopped {
		t.Errorf("resume did not say it stopped process group %d, the killed run's step", pid)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		if stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); !bytes.Contains(stat, []byte(") Z")) {
			t.Errorf("the killed run's step (pid %d) still runs: %s", pid, stat)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(work, "log.txt")); string(b) != "again\n" {
		t.Errorf("log.txt = %q, want the resumed step's line", b)
	}
}

// A step's "end" line in procs.log waits for the next step's start, to
// be written with it; the last is written as the run ends, so a finished
// run lists no process as running.
func TestProcsLogEndsEveryStep(t *testing.T) {
	res, _, _ := start(t, load(t, truePlaybook(3)), nil)
	b, err := os.ReadFile(filepath.Join(res.Dir, procsLog))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		got = append(got, f[0]+" "+f[1])
	}
	want := "start s0-1,end s0-1,start s1-1,end s1-1,start s2-1,end s2-1"
	if strings.Join(got, ",") != want {
		t.Errorf("procs.log:\n%s\nwant %s", b, want)
	}
}
