package main

import (
	"bufio"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/cmd/internal/ui"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
)

// uiTestEnv is apl's env as the ui's tests need it: a loader of the
// stdlib and the builtins, output discarded.
func uiTestEnv() *env {
	return &env{stdout: io.Discard, stderr: io.Discard, loader: &lang.Loader{Stdlib: stdlib.FS(), Builtins: builtins.Funcs().Names(),
		Signatures: builtins.Funcs(), DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}}
}

// TestUIPlaybookDryRun: apl ui's playbook page draws stdlib:phase-runner
// with the path of a dry run, as apl graph --dry-run does, and plan's
// worst case per step.
func TestUIPlaybookDryRun(t *testing.T) {
	t.Chdir(t.TempDir())
	e := uiTestEnv()
	opts := e.uiOptions(t.TempDir(), nil)
	opts.Render = func(dot, format string) ([]byte, error) { return []byte("<svg>" + dot + "</svg>"), nil }
	s := ui.New(opts)
	r := httptest.NewRequest("GET", "http://127.0.0.1:1/playbook?ref=stdlib:phase-runner&dry=1", nil)
	r.AddCookie(&http.Cookie{Name: "apl_ui_token", Value: s.Token()})
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	body := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, body)
	}
	for _, want := range []string{
		"Playbook phase-runner",
		"dry run: <span class=\"status s-",
		"run (dry run): ",  // the path's title in the drawing
		`id="node-locate"`, // ids on the nodes
		"Worst case per step",
		"agent calls",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %q:\n%.3000s", want, body)
		}
	}
	if strings.Contains(body, "dry run: input") || strings.Contains(body, `class="err"`) {
		t.Errorf("the page shows an error:\n%.3000s", body)
	}
}

// gatePlaybook asks, then holds in a step until a file "go" exists in
// the project directory, which the test creates.
const gatePlaybook = `
playbook "gate" {}
step "approve" {
  ask {
    question = "Go on?"
    options  = ["yes", "no"]
  }
}
step "hold" {
  shell { command = ["sh", "-c", "while [ ! -e go ]; do sleep 0.02; done; echo through"] }
}
output { said = steps.approve.output }
`

// TestUIAnswerOutlivesUI: a run answered from the page goes on to its
// end after the ui is stopped (Ctrl-C, its process group interrupted):
// the answer starts apl resume as a process of its own, not inside the
// ui's.
func TestUIAnswerOutlivesUI(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("gate.hcl", []byte(gatePlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(dir, "go")
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o644) }) // lets a resumed run end if the test failed early
	var out strings.Builder
	if code := Main([]string{"run", "gate.hcl", "--run-id", "r1"}, &out, &out); code != exitWaiting {
		t.Fatalf("apl run: exit %d\n%s", code, out.String())
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// This test binary acts as apl when called so (TestMain).
	cmd := exec.Command(exe, "ui", "--listen", "127.0.0.1:0")
	cmd.Args[0] = "apl"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	start, ok := strings.CutPrefix(strings.TrimSpace(line), "apl ui: ")
	if err != nil || !ok {
		t.Fatalf("apl ui printed %q %v", line, err)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: time.Minute}
	resp, err := client.Get(start)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	base := strings.Split(start, "/?")[0]
	resp, err = client.Get(base + "/run/r1")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("the run's page has no question:\n%.3000s", page)
	}
	resp, err = client.PostForm(base+"/run/r1/answer", url.Values{"csrf": {string(m[1])}, "key": {"approve"}, "answer": {"yes"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "Answer to approve sent") {
		t.Fatalf("the answer: %d\n%.3000s", resp.StatusCode, body)
	}

	// Ctrl-C in the ui's terminal: its process group is interrupted.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-exited:
	case <-time.After(time.Minute):
		t.Fatal("apl ui did not stop on SIGINT")
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	runDir := filepath.Join(interp.RunsDir("."), "r1")
	deadline := time.Now().Add(time.Minute)
	for {
		// Whether a process holds it, then its state: a run let go
		// before the state was read has written its ending.
		held := interp.RunHeld(runDir)
		st, _, err := interp.ReadRun(runDir)
		if err == nil && st.Meta.Status == interp.StatusCompleted && !held {
			break // ended, its files written
		}
		// No process holds a run that has not ended: it will not end.
		if time.Now().After(deadline) || err == nil && !held && st.Meta.Status != interp.StatusCompleted {
			log, _ := os.ReadFile(filepath.Join(runDir, "resume.log"))
			t.Fatalf("the run did not complete after the ui stopped: %v %+v\nresume.log:\n%s", err, st.Meta, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if b, err := os.ReadFile(filepath.Join(runDir, "output.json")); err != nil || !strings.Contains(strings.ReplaceAll(string(b), " ", ""), `"said":"yes"`) {
		t.Errorf("output: %s %v", b, err)
	}
}

// subAskPlaybook's review step runs sub.hcl (subAskSub), whose approve
// step asks: a run of it waits at review/approve.
const (
	subAskPlaybook = `
playbook "parent" {}
step "prepare" {
  shell { command = ["echo", "v1"] }
}
step "review" {
  playbook { source = "sub.hcl" }
}
step "ship" {
  shell { command = ["echo", "shipped: ${steps.review.output.said}"] }
}
output { said = steps.review.output.said }
`
	subAskSub = `
playbook "sub" {}
step "approve" {
  ask {
    question = "Ship it?"
    options  = ["yes", "no"]
  }
}
output { said = steps.approve.output }
`
)

// TestUISubRunQuestion: a run whose sub-run asks (a sub-playbook step's
// ask) shows that question in the runs list and on its page, with the
// step that runs the sub-run waiting on the graph, and the page answers
// it as apl resume --answer review/approve=CHOICE does, with the same
// check of the options.
func TestUISubRunQuestion(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for name, text := range map[string]string{"main.hcl": subAskPlaybook, "sub.hcl": subAskSub} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out strings.Builder
	if code := Main([]string{"run", "main.hcl", "--run-id", "p1"}, &out, &out); code != exitWaiting {
		t.Fatalf("apl run: exit %d\n%s", code, out.String())
	}
	e := uiTestEnv()
	runsDir := interp.RunsDir(".")
	opts := e.uiOptions(runsDir, nil)
	opts.Render = func(dot, format string) ([]byte, error) {
		return []byte("<svg>" + html.EscapeString(dot) + "</svg>"), nil
	}
	s := ui.New(opts)
	do := func(r *http.Request) (int, string) {
		r.AddCookie(&http.Cookie{Name: "apl_ui_token", Value: s.Token()})
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code, html.UnescapeString(w.Body.String())
	}
	get := func(path string) string {
		t.Helper()
		code, body := do(httptest.NewRequest("GET", "http://127.0.0.1:1"+path, nil))
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		return body
	}
	if list := get("/"); !strings.Contains(list, "review/approve: Ship it?") {
		t.Errorf("the runs list lacks the sub-run's question:\n%.3000s", list)
	}
	page := get("/run/p1")
	for _, want := range []string{`id="q-where">review/approve</b>`, `value="yes"`, `"node-review":"waiting"`, `<tr data-step="review"><td><a href="/run/p1/step/review">review</a></td><td><span class="state st-waiting">`} {
		if !strings.Contains(page, want) {
			t.Errorf("the run's page lacks %q:\n%.5000s", want, page)
		}
	}
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no CSRF token")
	}
	answer := func(choice string) (int, string) {
		form := url.Values{"csrf": {m[1]}, "key": {"review/approve"}, "answer": {choice}}
		r := httptest.NewRequest("POST", "http://127.0.0.1:1/run/p1/answer", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return do(r)
	}
	if code, body := answer("maybe"); code != http.StatusBadRequest || !strings.Contains(body, "takes one of: yes, no") {
		t.Errorf("an answer not among the options: %d %s", code, body)
	}
	if code, body := answer("yes"); code != http.StatusSeeOther {
		t.Fatalf("the answer: %d %s", code, body)
	}
	runDir := filepath.Join(runsDir, "p1")
	deadline := time.Now().Add(time.Minute)
	for {
		held := interp.RunHeld(runDir)
		st, _, err := interp.ReadRun(runDir)
		if err == nil && st.Meta.Status == interp.StatusCompleted && !held {
			break
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(runDir, "resume.log"))
			t.Fatalf("the run did not complete: %v %+v\nresume.log:\n%s", err, st.Meta, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if b, err := os.ReadFile(filepath.Join(runDir, "output.json")); err != nil || !strings.Contains(strings.ReplaceAll(string(b), " ", ""), `"said":"yes"`) {
		t.Errorf("output: %s %v", b, err)
	}
}
