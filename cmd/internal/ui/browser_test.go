package ui

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/cmd/internal/ui/browsertest"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/draw"
	"github.com/apl-lang/apl/lang"
)

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
	browsertest.Chromium(t)
	p := newProject(t)
	s, url := uiServer(t, p)
	b := browsertest.New(t)
	b.Open(url + "/?token=" + s.Token())
	b.Until("the runs list", `document.querySelector('#runs a[href="/run/r1"]')`)
	if got := b.Eval(`document.querySelector('#runs tbody tr').innerText`); !strings.Contains(got, "What now?") || !strings.Contains(got, "waiting") {
		t.Errorf("the run's row: %s", got)
	}
	b.Eval(`document.querySelector('select[name=status]').value = 'waiting'; document.querySelector('.filters button').click()`)
	b.Until("the list filtered by status", `location.search.includes('status=waiting') && document.querySelector('#runs a[href="/run/r1"]')`)
	b.Open(url + "/?status=completed")
	b.Until("the list filtered to no run", `location.search.includes('status=completed') && document.body.innerText.includes('No runs match')`)
	b.NoErrors()
}

// TestBrowserLiveRun opens a waiting run, sees its state from the live
// stream, opens a step's output, then watches the run complete (resumed
// elsewhere) without reloading.
func TestBrowserLiveRun(t *testing.T) {
	browsertest.Chromium(t)
	p := newProject(t)
	s, url := uiServer(t, p)
	b := browsertest.New(t)
	b.Open(url + "/run/r1?token=" + s.Token())
	b.Until("an update from the live stream", `Number(document.body.dataset.updates) >= 1`)
	withGraph := b.Eval(`!!document.getElementById('node-escalate')`) == "true"
	if withGraph {
		b.Until("the waiting step painted", `document.getElementById('node-escalate').classList.contains('st-waiting')`)
	} else {
		t.Log("graphviz not installed (no dot command): the graph's nodes are not checked")
	}
	b.Until("the question shown", `!document.getElementById('question').hidden && document.querySelector('#q-options button[value=skip]')`)
	b.Eval(`window.__sameDocument = true`)
	// A click on a step shows its attempts and what it printed.
	b.Eval(`document.querySelector('#steps tr[data-step=review] a').click()`)
	b.Until("the step's detail", `document.getElementById('detail').innerText.includes('Attempt 1')`)
	if got := b.Eval(`document.getElementById('detail').innerText`); !strings.Contains(got, "high") {
		t.Errorf("the detail lacks the step's stdout: %s", got)
	}
	if _, err := interp.Resume(context.Background(), p.pb, filepath.Join(p.runs, "r1"), interp.Options{Workdir: p.dir, NoSync: true, Answers: map[string]string{"escalate": "retry"}}); err != nil {
		t.Fatal(err)
	}
	b.Until("the run completed on the page", `document.body.dataset.status === 'completed'`)
	if withGraph {
		b.Until("the last step painted done", `document.getElementById('node-after').classList.contains('st-done')`)
		b.Until("the graph redrawn with the run's end", `document.querySelector('#graph svg').textContent.includes('run r1: completed')`)
	}
	b.Until("the steps table", `document.querySelector('#steps tr[data-step=after] .st-done')`)
	if b.Eval(`window.__sameDocument === true`) != "true" {
		t.Errorf("the page reloaded")
	}
	if b.Eval(`document.getElementById('question').hidden`) != "true" {
		t.Errorf("the question is still shown")
	}
	if dir := os.Getenv("APL_UI_SCREENSHOTS"); dir != "" {
		os.WriteFile(filepath.Join(dir, "live-run.png"), b.Screenshot(true), 0o644)
	}
	b.NoErrors()
}

// TestBrowserAnswer answers the question with a click: the run goes on
// to the end, and its output has the choice.
func TestBrowserAnswer(t *testing.T) {
	browsertest.Chromium(t)
	p := newProject(t)
	s, url := uiServer(t, p)
	b := browsertest.New(t)
	b.Open(url + "/run/r1?token=" + s.Token())
	b.Until("the question", `document.querySelector('#q-options button[value=abort]')`)
	b.Eval(`document.querySelector('#q-options button[value=abort]').click()`)
	b.Until("the run completed", `document.body.dataset.status === 'completed'`)
	out, err := os.ReadFile(filepath.Join(p.runs, "r1", "output.json"))
	if err != nil || !strings.Contains(strings.ReplaceAll(string(out), " ", ""), `"choice":"abort"`) {
		t.Errorf("output: %s %v", out, err)
	}
	if n := p.answered.Load(); n != 1 {
		t.Errorf("%d answers", n)
	}
	b.NoErrors()
}

// TestBrowserPlaybook opens a playbook before any run, with a dry run's
// path drawn.
func TestBrowserPlaybook(t *testing.T) {
	browsertest.Chromium(t)
	p := newProject(t)
	s, url := uiServer(t, p)
	b := browsertest.New(t)
	b.Open(fmt.Sprintf("%s/playbook?ref=esc.hcl&token=%s", url, s.Token()))
	b.Until("the playbook's graph", `document.querySelector('#graph svg')`)
	if got := b.Eval(`document.querySelector('h1').innerText`); !strings.Contains(got, "esc") {
		t.Errorf("title: %s", got)
	}
	b.NoErrors()
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
	browsertest.Chromium(t)
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
	b := browsertest.New(t)
	b.Open(url + "/run/g1?token=" + s.Token())
	b.Until("an update from the live stream", `Number(document.body.dataset.updates) >= 1`)
	b.Until("the gate step shown running", `document.querySelector('#steps tr[data-step=gate] .st-running')`)
	withGraph := b.Eval(`!!document.getElementById('node-gate')`) == "true"
	if withGraph {
		b.Until("the gate node painted running", `document.getElementById('node-gate').classList.contains('st-running')`)
		// Each node says how often its step ran, and how.
		b.Until("the first node's count", `document.querySelector('#node-first text[data-badge]').textContent === 'completed ×1'`)
		b.Until("the gate node's count", `document.querySelector('#node-gate text[data-badge]').textContent.startsWith('running ×1')`)
		if got := b.Eval(`document.querySelector('#node-last text[data-badge]').textContent`); got != `"\u00a0"` && got != "\"\u00a0\"" {
			t.Errorf("the last node's count before it ran: %s", got)
		}
		if b.Eval(`document.getElementById('node-last').classList.contains('st-done')`) == "true" {
			t.Errorf("the last step is painted done before it ran")
		}
		b.Until("the edge into the gate marked taken", `document.getElementById('edge-first--gate').classList.contains('taken')`)
		if b.Eval(`document.getElementById('edge-gate--last').classList.contains('taken')`) == "true" {
			t.Errorf("the edge out of the gate is marked taken before the gate step ended")
		}
	} else {
		t.Log("graphviz not installed (no dot command): the graph's nodes are not checked")
	}
	if got := b.Eval(`document.body.dataset.status`); got != `"running"` {
		t.Errorf("the run's status on the page: %s", got)
	}
	b.StepTurnsDone("gate", gate, withGraph)
	b.Until("the run completed on the page", `document.body.dataset.status === 'completed'`)
	if withGraph {
		b.Until("the last node painted done", `document.getElementById('node-last').classList.contains('st-done')`)
		b.Until("the edge out of the gate marked taken", `document.getElementById('edge-gate--last').classList.contains('taken')`)
		b.Until("the end marked reached", `document.getElementById('node-outcome_completed').classList.contains('reached')`)
		b.Until("the graph's title", `document.querySelector('#graph svg').textContent.includes('run g1: completed')`)
	}
	if b.Eval(`window.__sameDocument === true`) != "true" {
		t.Errorf("the page reloaded")
	}
	b.NoErrors()
}

// TestBrowserItemsUpdate follows a for_each run: each update redraws only
// the rows of the items that moved on (a run of 1,000 items would redraw
// 1,000 rows each time otherwise), and the table ends with every item
// done, in order, without a reload.
func TestBrowserItemsUpdate(t *testing.T) {
	browsertest.Chromium(t)
	keys := []string{"a", "b", "c", "d", "e"}
	p, open := gatedItemsRun(t, keys)
	s, url := uiServer(t, p)
	b := browsertest.New(t)
	b.Open(url + "/run/r1?token=" + s.Token())
	b.Until("an update from the live stream", `Number(document.body.dataset.updates) >= 1`)
	b.Until("item a shown running", `document.querySelector('#items tr[data-key=a] .st-running')`)
	b.Eval(`window.__sameDocument = true; window.__rowC = document.querySelector('#items tr[data-key=c]')`)
	open("a")
	b.Until("item a shown done", `document.querySelector('#items tr[data-key=a] .st-completed')`)
	b.Until("item b shown running", `document.querySelector('#items tr[data-key=b] .st-running')`)
	if b.Eval(`!!window.__rowC && window.__rowC === document.querySelector('#items tr[data-key=c]')`) != "true" {
		t.Errorf("item c's row was redrawn though c did not change")
	}
	for _, k := range keys[1:] {
		open(k)
	}
	b.Until("the run completed on the page", `document.body.dataset.status === 'completed'`)
	b.Until("every item done", `document.querySelectorAll('#items tbody .st-completed').length === 5`)
	if got := b.Eval(`Array.from(document.querySelectorAll('#items tbody tr')).map(function (tr) { return tr.dataset.key; }).join(',')`); got != `"a,b,c,d,e"` {
		t.Errorf("the items' rows: %s", got)
	}
	if b.Eval(`window.__sameDocument === true`) != "true" {
		t.Errorf("the page reloaded")
	}
	b.NoErrors()
}
