package interp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apl-lang/apl/lang"
)

// chainPlaybook is n shell steps; each appends its name to log.txt and
// takes a little while, so that a kill lands inside some step.
func chainPlaybook(n int) string { return logChain(n, "; sleep 0.02") }

// logChain is n shell steps, s01 to sNN (s001 from 100 on), each
// appending its name to log.txt, then running then.
func logChain(n int, then string) string {
	name := "s%02d"
	if n >= 100 {
		name = "s%03d"
	}
	var b strings.Builder
	b.WriteString("playbook \"chain\" {}\n")
	for i := 1; i <= n; i++ {
		step := fmt.Sprintf(name, i)
		fmt.Fprintf(&b, "step %q {\n  shell { script = \"echo %s >> log.txt%s\" }\n}\n", step, step, then)
	}
	return b.String()
}

// TestHelperChild is not a test: TestResumeAfterKill runs the test binary
// with APL_TEST_CHILD set to start a run in a separate process it can kill.
func TestHelperChild(t *testing.T) {
	work := os.Getenv("APL_TEST_CHILD")
	if work == "" {
		t.Skip("helper process")
	}
	src := chainPlaybook(20)
	if os.Getenv("APL_TEST_ITEMS") != "" {
		src = itemsPlaybook
	}
	if os.Getenv("APL_TEST_REQUEUE") != "" {
		src = requeuePlaybook
	}
	if os.Getenv("APL_TEST_SLOW") != "" {
		src = slowPlaybook
	}
	if os.Getenv("APL_TEST_DOCUMENT") != "" {
		src = docChainPlaybook()
	}
	if os.Getenv("APL_TEST_SELFKILL") != "" {
		src = selfKillPlaybook
	}
	if n, _ := strconv.Atoi(os.Getenv("APL_TEST_QUICK")); n > 0 {
		src = logChain(n, "")
	}
	if at := os.Getenv("APL_TEST_KILL_AT"); at != "" {
		where, nth, _ := strings.Cut(at, "#")
		n, _ := strconv.Atoi(nth)
		killPoint = func(w string) {
			if w == where {
				if n--; n == 0 {
					syscall.Kill(os.Getpid(), syscall.SIGKILL)
					select {}
				}
			}
		}
	}
	pb := load(t, src)
	_, err := Start(context.Background(), pb, "chain", Options{Workdir: work, RunID: "killed"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// killAndResume starts the run of TestHelperChild in a separate process
// with extra env, kills it with SIGKILL up to window after its first step
// began, resumes it in this process and returns the run's log.txt.
func killAndResume(t *testing.T, pb *lang.Playbook, window time.Duration, env ...string) string {
	t.Helper()
	work := killAndResumeWith(t, pb, window, nil, env...)
	log, err := os.ReadFile(filepath.Join(work, "log.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(log)
}

// killRun starts the run of TestHelperChild in work, kills it with
// SIGKILL up to window after its first step began, and says whether the
// kill cut the run short (else the run had completed before it landed).
func killRun(t *testing.T, work string, window time.Duration, env ...string) bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChild$")
	cmd.Env = append(append(os.Environ(), "APL_TEST_CHILD="+work), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the run has begun, then kill it somewhere inside.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(work, "log.txt")); err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(time.Duration(rand.Int64N(int64(window))))
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		if !cmd.ProcessState.Success() {
			t.Fatalf("the run failed before the kill: %v\n%s", cmd.ProcessState, stderr.String())
		}
		return false
	}
	// Killed, but perhaps after the run had ended (its last state
	// written, apl on its way out).
	st, _, err := ReadRun(filepath.Join(work, ".apl", "runs", "killed"))
	return err != nil || st.Meta.Status != StatusCompleted
}

// killAndResumeWith is killAndResume that calls between, if not nil,
// after the kill and before the resume, and returns the project
// directory.
func killAndResumeWith(t *testing.T, pb *lang.Playbook, window time.Duration, between func(work string), env ...string) string {
	t.Helper()
	var work string
	for try := 0; ; try++ {
		work = t.TempDir()
		if killRun(t, work, window, env...) {
			break
		}
		// The run ended before the kill landed: this sample tested
		// nothing, so take another, killing sooner.
		if try == 10 {
			t.Fatal("the run ended before the kill every time")
		}
		window = window * 2 / 3
	}
	if between != nil {
		between(work)
	}

	res, err := Resume(context.Background(), pb, filepath.Join(work, ".apl", "runs", "killed"), Options{NoSync: true})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	return work
}

// ranOnce checks that each of names appears once in log, except at most
// inFlight of them, which may appear twice.
func ranOnce(t *testing.T, log string, names []string, inFlight int) {
	t.Helper()
	counts := map[string]int{}
	for _, l := range strings.Fields(log) {
		counts[l]++
	}
	twice := 0
	for _, name := range names {
		switch n := counts[name]; n {
		case 1:
		case 2:
			twice++
		default:
			t.Errorf("%s ran %d times", name, n)
		}
	}
	if twice > inFlight {
		t.Errorf("%d ran twice; at most the %d in flight may:\n%s", twice, inFlight, log)
	}
}

// TestResumeAfterKill kills a 20-step run with SIGKILL at random moments,
// resumes it, and checks every step ran exactly once, except at most the
// one in flight when the kill landed.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	pb := load(t, chainPlaybook(20))
	var names []string
	for i := 1; i <= 20; i++ {
		names = append(names, fmt.Sprintf("s%02d", i))
	}
	for i := range 6 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ranOnce(t, killAndResume(t, pb, 400*time.Millisecond), names, 1)
		})
	}
}

// TestResumeAfterKillInCompaction kills a run with SIGKILL at each point
// of writing a compaction's snapshot (the run's first snapshot is call 1,
// its compactions 2 and 3), resumes it, and checks every step ran exactly
// once, but the step in flight: a compaction is written while the next
// step's process runs (host.waiting), its start journaled first, and a
// kill then may run that step again, as a kill at any moment a step runs
// does.
func TestResumeAfterKillInCompaction(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const n = 200
	pb := load(t, logChain(n, ""))
	var names []string
	for i := 1; i <= n; i++ {
		names = append(names, fmt.Sprintf("s%03d", i))
	}
	for _, at := range []string{"written#2", "state renamed#2", "journal renamed#2", "snapshot renamed#2", "journal opened#2", "journal renamed#3", "snapshot renamed#3"} {
		t.Run(at, func(t *testing.T) {
			work := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChild$")
			cmd.Env = append(os.Environ(), "APL_TEST_CHILD="+work, fmt.Sprint("APL_TEST_QUICK=", n), "APL_TEST_KILL_AT="+at)
			if err := cmd.Run(); err == nil {
				t.Fatal("the run was not killed")
			} else if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("the run ended with %v, not SIGKILL", err)
			}
			dir := filepath.Join(work, ".apl", "runs", "killed")
			before, err := os.ReadFile(filepath.Join(work, "log.txt"))
			if err != nil {
				t.Fatal(err)
			}
			st, _, err := ReadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			// The step whose process ran while the compaction was written
			// had its start journaled first: it was in flight, and its
			// process, left behind by the kill, may append to the log yet.
			inFlight := 0
			for _, rec := range st.Steps {
				if rec.Status == StepRunning {
					inFlight = 1
				}
			}
			if ran := len(strings.Fields(string(before))); inFlight == 0 && st.Metrics.StepsRun != ran {
				t.Errorf("the state read after the kill has %d steps run, the log %d", st.Metrics.StepsRun, ran)
			}
			res, err := Resume(context.Background(), pb, dir, Options{NoSync: true})
			if err != nil || res.Status != StatusCompleted {
				t.Fatalf("resume: %v %+v", err, res)
			}
			log, err := os.ReadFile(filepath.Join(work, "log.txt"))
			if err != nil {
				t.Fatal(err)
			}
			ranOnce(t, string(log), names, inFlight)
		})
	}
}

// itemsPlaybook runs 12 items, 3 at a time; each appends its key to
// log.txt and takes a little while.
const itemsPlaybook = `
playbook "items" {}
step "work" {
  for_each    = "map(1..12, 'k' + string(#))"
  key         = "item"
  concurrency = 3
  step "do" {
    shell { script = "echo ${item} >> log.txt; sleep 0.03" }
  }
}
`

// TestResumeItemsAfterKill kills a run inside a for_each at random
// moments and resumes it: every item ran once, except at most the three
// in flight.
func TestResumeItemsAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	pb := load(t, itemsPlaybook)
	var names []string
	for i := 1; i <= 12; i++ {
		names = append(names, fmt.Sprintf("k%d", i))
	}
	for i := range 5 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			ranOnce(t, killAndResume(t, pb, 120*time.Millisecond, "APL_TEST_ITEMS=1"), names, 3)
		})
	}
}

// failingPlaybook fails in its second step until need.txt exists.
const failingPlaybook = `
playbook "resume" {}
step "first" {
  shell { script = "echo first >> log.txt" }
}
step "second" {
  shell { script = "test -f need.txt && echo second >> log.txt" }
}
step "third" {
  shell { script = "echo third >> log.txt" }
}
`

func TestResumeRetriesFailedStepAndReusesOthers(t *testing.T) {
	pb := load(t, failingPlaybook)
	res, _, work := start(t, pb, nil)
	if res.Status != StatusFailed {
		t.Fatalf("status %s", res.Status)
	}
	os.WriteFile(filepath.Join(work, "need.txt"), nil, 0o644)
	rec := &recorder{}
	res, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	if got := strings.Join(rec.steps(EventStepReused), ","); got != "first" {
		t.Errorf("reused %q, want first", got)
	}
	if got := strings.Join(rec.steps(EventStepStarted), ","); got != "second,third" {
		t.Errorf("ran %q, want second,third", got)
	}
	log, _ := os.ReadFile(filepath.Join(work, "log.txt"))
	if string(log) != "first\nsecond\nthird\n" {
		t.Errorf("log %q", log)
	}
	st, _, _ := ReadRun(res.Dir)
	if st.Steps["second"].Attempts != 2 || st.Steps["first"].Attempts != 1 {
		t.Errorf("attempts first=%d second=%d", st.Steps["first"].Attempts, st.Steps["second"].Attempts)
	}
}

func TestResumeFallsBackToBackup(t *testing.T) {
	pb := load(t, failingPlaybook)
	res, _, work := start(t, pb, nil)
	if err := os.WriteFile(filepath.Join(res.Dir, stateFile), []byte(`{"_meta": {"run_id": "tru`), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(work, "need.txt"), nil, 0o644)
	rec := &recorder{}
	res, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	found := false
	for _, e := range rec.events {
		if e.Type == EventLog && strings.Contains(e.Message, "resumed from "+backupFile) {
			found = true
		}
	}
	if !found {
		t.Errorf("no event says the backup was used")
	}
	log, _ := os.ReadFile(filepath.Join(work, "log.txt"))
	if strings.Count(string(log), "first") != 1 || !strings.HasSuffix(string(log), "third\n") {
		t.Errorf("log %q", log)
	}
}

func TestResumeRefusesChangedPlaybook(t *testing.T) {
	pb := load(t, failingPlaybook)
	res, _, work := start(t, pb, nil)
	changed := load(t, failingPlaybook+"\n# a comment changes the hash\n")
	_, err := Resume(context.Background(), changed, res.Dir, Options{NoSync: true})
	var ce *ChangedError
	if !errors.As(err, &ce) {
		t.Fatalf("err %v, want ChangedError", err)
	}
	os.WriteFile(filepath.Join(work, "need.txt"), nil, 0o644)
	res, err = Resume(context.Background(), changed, res.Dir, Options{NoSync: true, Force: true})
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("forced resume: %v %v", err, res)
	}
	if _, err := Resume(context.Background(), changed, res.Dir, Options{NoSync: true}); err == nil || !strings.Contains(err.Error(), "nothing to resume") {
		t.Errorf("resuming a completed run: %v", err)
	}
}

func TestInterruptStopsStepAndResumes(t *testing.T) {
	pb := load(t, `
playbook "int" {}
step "slow" {
  shell { script = "if [ -f done.txt ]; then exit 0; fi; sleep 30" }
}
step "after" {
  shell { script = "echo after > after.txt" }
}
`)
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	rec := &recorder{}
	go func() {
		for {
			time.Sleep(10 * time.Millisecond)
			if len(rec.steps(EventStepStarted)) > 0 {
				cancel()
				return
			}
		}
	}()
	begin := time.Now()
	res, err := Start(ctx, pb, "int", Options{Workdir: work, Observer: ObserverFunc(func(e Event) { rec.Event(e) }), NoSync: true})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	if time.Since(begin) > 10*time.Second {
		t.Errorf("interrupt took %s; the step was not stopped", time.Since(begin))
	}
	st, _, _ := ReadRun(res.Dir)
	if st.Meta.Status != StatusInterrupted || st.Meta.CurrentStep != "slow" || st.Steps["slow"].Attempts != 0 {
		t.Fatalf("state after interrupt: %+v slow=%+v", st.Meta, st.Steps["slow"])
	}
	os.WriteFile(filepath.Join(work, "done.txt"), nil, 0o644)
	res, err = Resume(context.Background(), pb, res.Dir, Options{NoSync: true})
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if _, err := os.Stat(filepath.Join(work, "after.txt")); err != nil {
		t.Errorf("step after did not run: %v", err)
	}
}

// slowPlaybook's step outlives the process that starts it when that
// process is killed.
const slowPlaybook = `
playbook "slow" {}
step "s" {
  shell { script = "echo start $$ >> log.txt; sleep 1.5; echo end $$ >> log.txt" }
}
`

// Issue 9: a killed apl left its step running, and apl resume started the
// same step beside it. Resume now stops the process group the killed run
// recorded before it runs the step again.
func TestResumeStopsTheStepAKilledRunLeft(t *testing.T) {
	work := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChild$")
	cmd.Env = append(os.Environ(), "APL_TEST_CHILD="+work, "APL_TEST_SLOW=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Kill once the step's process has started and the run has
		// recorded it (it records the process just after starting it).
		b, _ := os.ReadFile(filepath.Join(work, "log.txt"))
		p, _ := os.ReadFile(filepath.Join(work, ".apl", "runs", "killed", procsLog))
		if strings.Contains(string(b), "start") && strings.Contains(string(p), "start") || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	rec := &recorder{}
	res, err := Resume(context.Background(), load(t, slowPlaybook), filepath.Join(work, ".apl", "runs", "killed"), Options{NoSync: true, Observer: rec})
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("resume: %v %+v", err, res)
	}
	stopped := false
	for _, e := range rec.events {
		stopped = stopped || strings.Contains(e.Message, "stopped process group")
	}
	if !stopped {
		t.Error("resume did not say it stopped the killed run's step")
	}
	// The first process would have ended by now had it survived.
	time.Sleep(300 * time.Millisecond)
	b, _ := os.ReadFile(filepath.Join(work, "log.txt"))
	if n := strings.Count(string(b), "end"); n != 1 {
		t.Errorf("the step ended %d times; the killed run's copy kept running:\n%s", n, b)
	}
	if b, _ := os.ReadFile(filepath.Join(res.Dir, procsLog)); strings.Count(string(b), "start") != strings.Count(string(b), "end") {
		t.Errorf("procs.log lists a process that did not end:\n%s", b)
	}
}
