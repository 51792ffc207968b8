package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apl-lang/apl/cmd/internal/ui"
	"github.com/apl-lang/apl/cmd/internal/ui/browsertest"
	"github.com/apl-lang/apl/interp"
)

// screenshotPath is the README's picture of apl ui.
const screenshotPath = "../internal/ui/screenshot.png"

// conductorTasks are the tasks of the screenshot's run: T2 waits for T1.
const conductorTasks = `{"tasks": [
  {"id": "T1", "title": "User model", "objective": "Add a user model", "status": "pending", "model": "haiku", "blocked_by": [],
   "acceptance_criteria": [{"id": "AC-1", "criterion": "a user has an email"}], "test_file": "tests/user.test.txt"},
  {"id": "T2", "title": "Sessions", "objective": "Add sessions", "status": "pending", "model": "sonnet", "blocked_by": ["T1"],
   "acceptance_criteria": [{"id": "AC-2", "criterion": "sessions expire"}]},
  {"id": "T3", "title": "Password reset", "objective": "Add password reset", "status": "pending", "model": "haiku", "blocked_by": [],
   "acceptance_criteria": [{"id": "AC-3", "criterion": "a reset link expires"}]},
  {"id": "T4", "title": "Audit log", "objective": "Log sign-ins", "status": "pending", "model": "haiku", "blocked_by": [],
   "acceptance_criteria": [{"id": "AC-4", "criterion": "each sign-in is logged"}]}
]}
`

// holdingAgent is the agent of the screenshot's run: the stdlib tests'
// stand-in agent (which knows only its prompt), held while T1's review
// and T3's implementation run until the file $HOLD exists, so that the
// picture is of a run under way. Reviews are one at a time: T1's
// implementation waits for T4 to end ($HOLD.t4), so that T4's review is
// not behind T1's.
const holdingAgent = `#!/bin/sh
case "$APL_STEP:$APL_ITEM_KEY" in
implement:T1) while [ ! -e "$HOLD.t4" ]; do sleep 0.05; done ;;
review:T1|implement:T3) while [ ! -e "$HOLD" ]; do sleep 0.05; done ;;
esac
exec "$STANDIN"
`

// TestUIScreenshot draws the README's screenshot of apl ui again
// (cmd/internal/ui/screenshot.png): a live run of stdlib:conductor in a
// scratch git project, its agents the stdlib tests' stand-in, shown in
// Chromium while T1 is in review and T3 being implemented. It runs only
// when APL_UI_SCREENSHOT names the stand-in's binary, as make screenshot
// does (go test -c ./stdlib builds it).
func TestUIScreenshot(t *testing.T) {
	standin := os.Getenv("APL_UI_SCREENSHOT")
	if standin == "" {
		t.Skip("make screenshot draws the README's screenshot (APL_UI_SCREENSHOT=the stdlib tests' binary)")
	}
	browsertest.Chromium(t)
	for _, tool := range []string{"dot", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the screenshot needs %s", tool)
		}
	}
	standin, err := filepath.Abs(standin)
	if err != nil {
		t.Fatal(err)
	}
	picture, err := filepath.Abs(screenshotPath)
	if err != nil {
		t.Fatal(err)
	}
	dir, scratch := t.TempDir(), t.TempDir()
	for name, text := range map[string]string{
		"docs/tasks.json":                 conductorTasks,
		"docs/specs/TECHNICAL_DESIGN.md":  "# Design\n",
		"docs/specs/ADR.md":               "# ADR\n",
		".gitignore":                      "state.json\nstate.json.bak\n.apl/\n",
		filepath.Join(scratch, "agent"):   holdingAgent,
		filepath.Join(scratch, "calls"):   "",
		filepath.Join(scratch, ".keep"):   "",
		filepath.Join(scratch, "started"): "",
	} {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	for _, env := range [][2]string{{"GIT_AUTHOR_NAME", "stand-in"}, {"GIT_AUTHOR_EMAIL", "standin@example.com"},
		{"GIT_COMMITTER_NAME", "stand-in"}, {"GIT_COMMITTER_EMAIL", "standin@example.com"},
		{"STANDIN", standin}, {"STANDIN_AGENT_LOG", filepath.Join(scratch, "calls")}, {"HOLD", filepath.Join(scratch, "hold")}} {
		t.Setenv(env[0], env[1])
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-q", "-m", "start"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}

	// The run, in a process of its own: this test binary acts as apl
	// when called so (TestMain).
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var runOut bytes.Buffer
	run := exec.Command(exe, "run", "stdlib:conductor", "--agent-cmd", filepath.Join(scratch, "agent"), "--run-id", "20261127T091500-conductor")
	run.Args[0] = "apl"
	run.Stdout, run.Stderr = &runOut, &runOut
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() { run.Wait(); close(ended) }()
	t.Cleanup(func() {
		os.WriteFile(os.Getenv("HOLD"), nil, 0o644)
		os.WriteFile(os.Getenv("HOLD")+".t4", nil, 0o644)
		select {
		case <-ended:
		case <-time.After(time.Minute):
			syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
			<-ended
		}
	})
	runDir := filepath.Join(interp.RunsDir("."), "20261127T091500-conductor")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, _, err := interp.ReadRun(runDir)
		if err == nil && itemIs(st, "T4", interp.StepCompleted) {
			os.WriteFile(os.Getenv("HOLD")+".t4", nil, 0o644)
		}
		if err == nil && stepIs(st, "T1", "review", interp.StepRunning) && stepIs(st, "T3", "implement", interp.StepRunning) && itemIs(st, "T4", interp.StepCompleted) {
			break
		}
		select {
		case <-ended:
			t.Fatalf("the run ended before the picture:\n%s", runOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never got to the picture's moment (T1 in review, T3 implementing, T4 completed) (%v):\n%s", err, runOut.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	e := uiTestEnv()
	opts := e.uiOptions(interp.RunsDir("."), nil)
	opts.Where = ".apl/runs"
	s := ui.New(opts)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	b := browsertest.New(t)
	b.Open(ts.URL + "/run/20261127T091500-conductor?token=" + s.Token())
	b.Until("the run's page, live", `Number(document.body.dataset.updates) >= 1 && document.querySelector('#node-review.st-running')`)
	b.Until("the items", `document.querySelectorAll('#items tbody tr').length === 4`)
	png := b.Screenshot(true)
	b.NoErrors()
	b.Open("about:blank") // ends the live stream, so the server can close
	if err := os.WriteFile(picture, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", picture, len(png))

	os.WriteFile(os.Getenv("HOLD"), nil, 0o644)
	<-ended
	if !strings.Contains(runOut.String(), "completed: run") {
		t.Errorf("the run did not complete once let go:\n%s", runOut.String())
	}
}

// stepIs says whether item's step is in status.
func stepIs(st *interp.State, item, step, status string) bool {
	for _, items := range st.Items {
		if it := items[item]; it != nil && it.Steps[step] != nil && it.Steps[step].Status == status {
			return true
		}
	}
	return false
}

// itemIs says whether item is in status.
func itemIs(st *interp.State, item, status string) bool {
	for _, items := range st.Items {
		if it := items[item]; it != nil && it.Status == status {
			return true
		}
	}
	return false
}
