package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/draw"
	"github.com/apl-lang/apl/lang"
)

// The browser tests drive headless Chromium over the DevTools protocol on
// a pipe (--remote-debugging-pipe: commands on fd 3, replies on fd 4, each
// message ending in a NUL), which needs nothing beyond the standard
// library. They fail on any error the page's console reports.

// chromium finds a Chromium to drive, or skips the test saying how to get
// one.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium not installed; apt-get install chromium to run the browser tests")
	return ""
}

// browser is one headless Chromium with one page open.
type browser struct {
	t       testing.TB
	cmd     *exec.Cmd
	in      *os.File
	mu      sync.Mutex
	next    int
	waiting map[int]chan json.RawMessage
	session string
	// errors are what the page's console reported as errors and the
	// exceptions its scripts threw.
	errors []string
}

func newBrowser(t testing.TB) *browser {
	t.Helper()
	bin := chromium(t)
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	b := &browser{t: t, in: cmdW, waiting: map[int]chan json.RawMessage{}}
	// The profile is not a t.TempDir: chromium's helper processes may
	// still be writing to it as the test ends, and the test's cleanup
	// would then fail on a directory that is not empty.
	profile, err := os.MkdirTemp("", "apl-ui-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	b.cmd = exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir="+profile, "--remote-debugging-pipe", "about:blank")
	b.cmd.ExtraFiles = []*os.File{cmdR, outW}
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	cmdR.Close()
	outW.Close()
	t.Cleanup(func() {
		cmdW.Close()
		// The whole group: chromium's helpers too.
		syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		b.cmd.Wait()
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	go b.read(outR)
	var target struct{ TargetID string }
	b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target)
	var att struct{ SessionID string }
	b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att)
	b.session = att.SessionID
	b.call(b.session, "Runtime.enable", nil, nil)
	b.call(b.session, "Page.enable", nil, nil)
	b.call(b.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": false}, nil)
	return b
}

func (b *browser) read(r *os.File) {
	rd := bufio.NewReader(r)
	for {
		msg, err := rd.ReadBytes(0)
		if err != nil {
			return
		}
		var m struct {
			ID     int
			Method string
			Result json.RawMessage
			Error  *struct{ Message string }
			Params json.RawMessage
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil {
			continue
		}
		b.mu.Lock()
		switch {
		case m.ID != 0:
			if ch := b.waiting[m.ID]; ch != nil {
				if m.Error != nil {
					m.Result, _ = json.Marshal(map[string]string{"cdpError": m.Error.Message})
				}
				ch <- m.Result
			}
		case m.Method == "Runtime.exceptionThrown":
			b.errors = append(b.errors, "exception: "+string(m.Params))
		case m.Method == "Runtime.consoleAPICalled" && strings.Contains(string(m.Params), `"type":"error"`):
			b.errors = append(b.errors, "console.error: "+string(m.Params))
		}
		b.mu.Unlock()
	}
}

// call sends a DevTools command and decodes its result into out.
func (b *browser) call(session, method string, params any, out any) {
	b.t.Helper()
	if err := b.try(session, method, params, out); err != nil {
		b.t.Fatal(err)
	}
}

// try is call that returns chromium's error instead of failing the test.
func (b *browser) try(session, method string, params any, out any) error {
	b.t.Helper()
	b.mu.Lock()
	b.next++
	id := b.next
	ch := make(chan json.RawMessage, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	data, _ := json.Marshal(msg)
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return fmt.Errorf("%s: %v", method, err)
	}
	select {
	case res := <-ch:
		if strings.Contains(string(res), `"cdpError"`) {
			return fmt.Errorf("%s: %s", method, res)
		}
		if out != nil {
			if err := json.Unmarshal(res, out); err != nil {
				return fmt.Errorf("%s: %v: %s", method, err, res)
			}
		}
		return nil
	case <-time.After(time.Minute):
		return fmt.Errorf("%s: no reply from chromium", method)
	}
}

// eval evaluates a JavaScript expression in the page and returns its
// value as JSON text.
func (b *browser) eval(expr string) string {
	b.t.Helper()
	var res struct {
		Result struct {
			Value json.RawMessage
		}
		ExceptionDetails json.RawMessage
	}
	b.call(b.session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res)
	if res.ExceptionDetails != nil {
		b.t.Fatalf("%s: %s", expr, res.ExceptionDetails)
	}
	return string(res.Result.Value)
}

// until waits for a JavaScript condition to hold in the page. The limit
// only ends a test that would otherwise hang; nothing is timed.
func (b *browser) until(what, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	// A page being replaced has no body for a moment, and a page being
	// navigated away from cannot evaluate at all: both are "not yet".
	holds := func() bool {
		var res struct {
			Result struct{ Value json.RawMessage }
		}
		err := b.try(b.session, "Runtime.evaluate", map[string]any{
			"expression":    "(function () { try { return !!(" + expr + "); } catch (e) { return false; } })()",
			"returnByValue": true,
		}, &res)
		return err == nil && string(res.Result.Value) == "true"
	}
	for !holds() {
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: %s never held; the page (%s) says:\n%.3000s", what, expr, b.eval("location.href"), b.eval("document.documentElement ? document.documentElement.outerHTML : ''"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *browser) open(url string) {
	b.t.Helper()
	b.call(b.session, "Page.navigate", map[string]any{"url": url}, nil)
}

// noErrors fails the test on any console error the page reported.
func (b *browser) noErrors() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		b.t.Errorf("the page's console: %.500s", e)
	}
}

// screenshot writes the page as a PNG into dir (for looking at it).
func (b *browser) screenshot(path string) {
	var shot struct{ Data []byte }
	b.call(b.session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &shot)
	os.WriteFile(path, shot.Data, 0o644)
}

// uiServer serves the project's ui on a real socket for the browser.
func uiServer(t *testing.T, p *project) (*Server, string) {
	s := p.server()
	if _, err := exec.LookPath("dot"); err == nil {
		s.opts.Render = draw.Render // the graph as apl draws it, with its node ids
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts.URL
}

// TestBrowserRunsList opens the runs list: the waiting run is there with
// its question, and the status filter hides it.
func TestBrowserRunsList(t *testing.T) {
	chromium(t)
	p := newProject(t)
	s, url := uiServer(t, p)
	b := newBrowser(t)
	b.open(url + "/?token=" + s.Token())
	b.until("the runs list", `document.querySelector('#runs a[href="/run/r1"]')`)
	if got := b.eval(`document.querySelector('#runs tbody tr').innerText`); !strings.Contains(got, "What now?") || !strings.Contains(got, "waiting") {
		t.Errorf("the run's row: %s", got)
	}
	b.eval(`document.querySelector('select[name=status]').value = 'waiting'; document.querySelector('.filters button').click()`)
	b.until("the list filtered by status", `location.search.includes('status=waiting') && document.querySelector('#runs a[href="/run/r1"]')`)
	b.open(url + "/?status=completed")
	b.until("the list filtered to no run", `location.search.includes('status=completed') && document.body.innerText.includes('No runs match')`)
	b.noErrors()
}

// TestBrowserLiveRun opens a waiting run, sees its state from the live
// stream, opens a step's output, then watches the run complete (resumed
// elsewhere) without reloading.
func TestBrowserLiveRun(t *testing.T) {
	chromium(t)
	p := newProject(t)
	s, url := uiServer(t, p)
	b := newBrowser(t)
	b.open(url + "/run/r1?token=" + s.Token())
	b.until("an update from the live stream", `Number(document.body.dataset.updates) >= 1`)
	withGraph := b.eval(`!!document.getElementById('node-escalate')`) == "true"
	if withGraph {
		b.until("the waiting step painted", `document.getElementById('node-escalate').classList.contains('st-waiting')`)
	} else {
		t.Log("graphviz not installed (no dot command): the graph's nodes are not checked")
	}
	b.until("the question shown", `!document.getElementById('question').hidden && document.querySelector('#q-options button[value=skip]')`)
	b.eval(`window.__sameDocument = true`)
	// A click on a step shows its attempts and what it printed.
	b.eval(`document.querySelector('#steps tr[data-step=review] a').click()`)
	b.until("the step's detail", `document.getElementById('detail').innerText.includes('Attempt 1')`)
	if got := b.eval(`document.getElementById('detail').innerText`); !strings.Contains(got, "high") {
		t.Errorf("the detail lacks the step's stdout: %s", got)
	}
	if _, err := interp.Resume(context.Background(), p.pb, filepath.Join(p.runs, "r1"), interp.Options{Workdir: p.dir, NoSync: true, Answers: map[string]string{"escalate": "retry"}}); err != nil {
		t.Fatal(err)
	}
	b.until("the run completed on the page", `document.body.dataset.status === 'completed'`)
	if withGraph {
		b.until("the last step painted done", `document.getElementById('node-after').classList.contains('st-done')`)
		b.until("the graph redrawn with the run's end", `document.querySelector('#graph svg').textContent.includes('run r1: completed')`)
	}
	b.until("the steps table", `document.querySelector('#steps tr[data-step=after] .st-done')`)
	if b.eval(`window.__sameDocument === true`) != "true" {
		t.Errorf("the page reloaded")
	}
	if b.eval(`document.getElementById('question').hidden`) != "true" {
		t.Errorf("the question is still shown")
	}
	if dir := os.Getenv("APL_UI_SCREENSHOTS"); dir != "" {
		b.screenshot(filepath.Join(dir, "live-run.png"))
	}
	b.noErrors()
}

// TestBrowserAnswer answers the question with a click: the run goes on
// to the end, and its output has the choice.
func TestBrowserAnswer(t *testing.T) {
	chromium(t)
	p := newProject(t)
	s, url := uiServer(t, p)
	b := newBrowser(t)
	b.open(url + "/run/r1?token=" + s.Token())
	b.until("the question", `document.querySelector('#q-options button[value=abort]')`)
	b.eval(`document.querySelector('#q-options button[value=abort]').click()`)
	b.until("the run completed", `document.body.dataset.status === 'completed'`)
	out, err := os.ReadFile(filepath.Join(p.runs, "r1", "output.json"))
	if err != nil || !strings.Contains(strings.ReplaceAll(string(out), " ", ""), `"choice":"abort"`) {
		t.Errorf("output: %s %v", out, err)
	}
	if n := p.answered.Load(); n != 1 {
		t.Errorf("%d answers", n)
	}
	b.noErrors()
}

// TestBrowserPlaybook opens a playbook before any run, with a dry run's
// path drawn.
func TestBrowserPlaybook(t *testing.T) {
	chromium(t)
	p := newProject(t)
	s, url := uiServer(t, p)
	b := newBrowser(t)
	b.open(fmt.Sprintf("%s/playbook?ref=esc.hcl&token=%s", url, s.Token()))
	b.until("the playbook's graph", `document.querySelector('#graph svg')`)
	if got := b.eval(`document.querySelector('h1').innerText`); !strings.Contains(got, "esc") {
		t.Errorf("title: %s", got)
	}
	b.noErrors()
}

// gatedPlaybook's middle step waits until a file named "go" exists in the
// project directory, which the test creates: the run is held at a running
// step for as long as the test needs, with no timing involved.
const gatedPlaybook = `
playbook "gated" {}
step "first" {
  shell { command = ["echo", "one"] }
}
step "gate" {
  shell { command = ["sh", "-c", "while [ ! -e go ]; do sleep 0.02; done; echo through"] }
}
step "last" {
  shell { command = ["echo", "three"] }
}
`

// TestBrowserStepTurnsDone opens a run while its step runs and watches,
// without a reload, that step turn done and the run go on to the end.
func TestBrowserStepTurnsDone(t *testing.T) {
	chromium(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gated.hcl"), []byte(gatedPlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	pb, diags := (&lang.Loader{}).Load(filepath.Join(dir, "gated.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := &project{dir: dir, runs: interp.RunsDir(dir), pb: pb}
	done := make(chan error, 1)
	go func() {
		_, err := interp.Start(context.Background(), pb, "gated.hcl", interp.Options{Workdir: dir, RunID: "g1", NoSync: true})
		done <- err
	}()
	gate := filepath.Join(dir, "go")
	t.Cleanup(func() {
		os.WriteFile(gate, nil, 0o644) // lets the run end if the test failed early
		<-done
	})
	s, url := uiServer(t, p)
	// The run's page exists once the run has written its state.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if st, _, err := interp.ReadRun(filepath.Join(p.runs, "g1")); err == nil && st.Steps["gate"] != nil && st.Steps["gate"].Status == interp.StepRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never reached its gate step")
		}
		time.Sleep(20 * time.Millisecond)
	}
	b := newBrowser(t)
	b.open(url + "/run/g1?token=" + s.Token())
	b.until("an update from the live stream", `Number(document.body.dataset.updates) >= 1`)
	b.until("the gate step shown running", `document.querySelector('#steps tr[data-step=gate] .st-running')`)
	withGraph := b.eval(`!!document.getElementById('node-gate')`) == "true"
	if withGraph {
		b.until("the gate node painted running", `document.getElementById('node-gate').classList.contains('st-running')`)
		if b.eval(`document.getElementById('node-last').classList.contains('st-done')`) == "true" {
			t.Errorf("the last step is painted done before it ran")
		}
		b.until("the edge into the gate marked taken", `document.getElementById('edge-first--gate').classList.contains('taken')`)
		if b.eval(`document.getElementById('edge-gate--last').classList.contains('taken')`) == "true" {
			t.Errorf("the edge out of the gate is marked taken before the gate step ended")
		}
	} else {
		t.Log("graphviz not installed (no dot command): the graph's nodes are not checked")
	}
	if got := b.eval(`document.body.dataset.status`); got != `"running"` {
		t.Errorf("the run's status on the page: %s", got)
	}
	b.eval(`window.__sameDocument = true`)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b.until("the gate step shown done", `document.querySelector('#steps tr[data-step=gate] .st-done')`)
	if withGraph {
		b.until("the gate node painted done", `document.getElementById('node-gate').classList.contains('st-done')`)
	}
	b.until("the run completed on the page", `document.body.dataset.status === 'completed'`)
	if withGraph {
		b.until("the last node painted done", `document.getElementById('node-last').classList.contains('st-done')`)
		b.until("the edge out of the gate marked taken", `document.getElementById('edge-gate--last').classList.contains('taken')`)
		b.until("the end marked reached", `document.getElementById('node-outcome_completed').classList.contains('reached')`)
		b.until("the graph's title", `document.querySelector('#graph svg').textContent.includes('run g1: completed')`)
	}
	if b.eval(`window.__sameDocument === true`) != "true" {
		t.Errorf("the page reloaded")
	}
	b.noErrors()
}

// TestBrowserItemsUpdate follows a for_each run: each update redraws only
// the rows of the items that moved on (a run of 1,000 items would redraw
// 1,000 rows each time otherwise), and the table ends with every item
// done, in order, without a reload.
func TestBrowserItemsUpdate(t *testing.T) {
	chromium(t)
	keys := []string{"a", "b", "c", "d", "e"}
	p, open := gatedItemsRun(t, keys)
	s, url := uiServer(t, p)
	b := newBrowser(t)
	b.open(url + "/run/r1?token=" + s.Token())
	b.until("an update from the live stream", `Number(document.body.dataset.updates) >= 1`)
	b.until("item a shown running", `document.querySelector('#items tr[data-key=a] .st-running')`)
	b.eval(`window.__sameDocument = true; window.__rowC = document.querySelector('#items tr[data-key=c]')`)
	open("a")
	b.until("item a shown done", `document.querySelector('#items tr[data-key=a] .st-completed')`)
	b.until("item b shown running", `document.querySelector('#items tr[data-key=b] .st-running')`)
	if b.eval(`!!window.__rowC && window.__rowC === document.querySelector('#items tr[data-key=c]')`) != "true" {
		t.Errorf("item c's row was redrawn though c did not change")
	}
	for _, k := range keys[1:] {
		open(k)
	}
	b.until("the run completed on the page", `document.body.dataset.status === 'completed'`)
	b.until("every item done", `document.querySelectorAll('#items tbody .st-completed').length === 5`)
	if got := b.eval(`Array.from(document.querySelectorAll('#items tbody tr')).map(function (tr) { return tr.dataset.key; }).join(',')`); got != `"a,b,c,d,e"` {
		t.Errorf("the items' rows: %s", got)
	}
	if b.eval(`window.__sameDocument === true`) != "true" {
		t.Errorf("the page reloaded")
	}
	b.noErrors()
}
