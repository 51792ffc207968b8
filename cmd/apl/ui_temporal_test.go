//go:build !race && !notemporal

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apl-lang/apl/cmd/internal/ui"
	"github.com/apl-lang/apl/cmd/internal/ui/browsertest"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/temporal"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// uiAskPlaybook holds in its gate step until a file "go" exists in the
// worker's checkout, which the test creates, then asks, then prints what
// was chosen.
const uiAskPlaybook = `
playbook "tship" {}
step "prepare" {
  shell { command = ["echo", "v1.2"] }
}
step "gate" {
  shell { command = ["sh", "-c", "while [ ! -e go ]; do sleep 0.05; done; echo through"] }
}
step "approve" {
  ask {
    question = "Ship ${trimspace(steps.prepare.output)}?"
    options  = ["yes", "no"]
  }
}
step "ship" {
  shell { command = ["echo", "shipped: ${steps.approve.output}"] }
}
output { approved = steps.approve.output }
`

// temporalUI is a namespace of a real Temporal server with a worker
// whose checkout is dir (the test's working directory), and apl ui over
// it and a runs directory of the project's.
type temporalUI struct {
	t        *testing.T
	e        *env
	cl       client.Client
	addr, ns string
	dir      string
	// stopWorker stops the worker (once).
	stopWorker func()
	srv        *ui.Server
	url        string
}

const uiQueue = "ui"

// newTemporalUI starts the server and the worker.
func newTemporalUI(t *testing.T) *temporalUI {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	u := &temporalUI{t: t, dir: t.TempDir()}
	u.addr, u.ns = devServer(t)
	t.Chdir(u.dir)
	u.e = uiTestEnv()
	cl, err := client.Dial(client.Options{HostPort: u.addr, Namespace: u.ns, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	u.cl = cl
	w, err := temporal.NewWorker(cl, uiQueue, temporal.Config{Loader: u.e.loader, Workdir: u.dir, Name: "w1"}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	var stop sync.Once
	u.stopWorker = func() { stop.Do(w.Stop) }
	t.Cleanup(u.stopWorker)
	return u
}

// start starts run id of the playbook in files (NAME, TEXT, ...; the
// first named is the one run) on the cluster. The files are removed
// once it started: the ui may run anywhere, and draws the playbook from
// the sources the run started with, not from a file of its directory.
func (u *temporalUI) start(id string, opts interp.Options, files ...string) {
	u.t.Helper()
	for i := 0; i < len(files); i += 2 {
		if err := os.WriteFile(files[i], []byte(files[i+1]), 0o644); err != nil {
			u.t.Fatal(err)
		}
	}
	pb, diags := u.e.loader.Load(files[0])
	if diags.HasErrors() {
		u.t.Fatal(diags)
	}
	opts.RunID = id
	if _, err := temporal.Start(context.Background(), u.cl, uiQueue, pb, files[0], opts); err != nil {
		u.t.Fatal(err)
	}
	for i := 0; i < len(files); i += 2 {
		if err := os.Remove(files[i]); err != nil {
			u.t.Fatal(err)
		}
	}
}

// waitAsked waits until run id (or one of its sub-runs) asks.
func (u *temporalUI) waitAsked(id string) {
	u.t.Helper()
	deadline := time.Now().Add(runWait)
	for {
		if qs, err := temporal.Questions(context.Background(), u.cl, id); err == nil && len(qs) > 0 {
			return
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("run %s never came to wait", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitEnded waits until run id's workflow ended, and says how.
// runWait is how long a test run on the dev server may take to ask or
// end: its few steps take seconds, but a machine loaded by other tests
// once took a minute (TestUITemporalSubRunAndSpend, at load 12).
const runWait = 3 * time.Minute

func (u *temporalUI) waitEnded(id string) string {
	u.t.Helper()
	deadline := time.Now().Add(runWait)
	for {
		st, err := temporal.WorkflowStatus(context.Background(), u.cl, id)
		if err == nil && st != "" && st != "running" {
			return st
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("run %s never ended: %s %v", id, st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serve serves apl ui --engine temporal beside runsDir on a real
// socket; render lays its graphs out (nil: Graphviz's).
func (u *temporalUI) serve(runsDir string, render func(dot, format string) ([]byte, error)) {
	u.t.Helper()
	opts := u.e.uiOptions(runsDir, nil)
	closeRuns, err := u.e.uiTemporal(temporalFlags{Engine: engineTemporal, TemporalAddress: u.addr, Namespace: u.ns}, &opts)
	if err != nil {
		u.t.Fatal(err)
	}
	u.t.Cleanup(closeRuns)
	if render != nil {
		opts.Render = render
	}
	u.srv = ui.New(opts)
	ts := httptest.NewServer(u.srv)
	u.t.Cleanup(ts.Close)
	u.url = ts.URL
}

// get is a page of the ui, unescaped.
func (u *temporalUI) get(path string) string {
	u.t.Helper()
	req, _ := http.NewRequest("GET", u.url+path, nil)
	req.AddCookie(&http.Cookie{Name: "apl_ui_token", Value: u.srv.Token()})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		u.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		u.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return html.UnescapeString(string(b))
}

// answer posts the answer form of run id's page (whose CSRF token page
// holds).
func (u *temporalUI) answer(page, id, key, choice string) *http.Response {
	u.t.Helper()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		u.t.Fatal("the page has no CSRF token")
	}
	form := url.Values{"csrf": {m[1]}, "key": {key}, "answer": {choice}}
	req, _ := http.NewRequest("POST", u.url+"/run/"+id+"/answer", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "apl_ui_token", Value: u.srv.Token()})
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		u.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// contains fails t for each of wants that body lacks.
func contains(t *testing.T, what, body string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(body, want) {
			t.Errorf("%s lacks %q:\n%.4000s", what, want, body)
		}
	}
}

// dotAsSVG stands in for Graphviz: the graph is its DOT.
func dotAsSVG(dot, format string) ([]byte, error) {
	return []byte("<svg>" + html.EscapeString(dot) + "</svg>"), nil
}

// TestUITemporalRuns: apl ui --engine temporal lists the runs of a
// namespace of a real Temporal server, with a waiting run's question;
// opening the run shows its steps, its path on the graph and what its
// steps printed (fetched from the worker); answering from the page lets
// the run go on to the end on the cluster, as apl resume --answer
// --engine temporal does.
func TestUITemporalRuns(t *testing.T) {
	u := newTemporalUI(t)
	ctx := context.Background()
	if err := os.WriteFile("go", nil, 0o644); err != nil { // its gate lets it through
		t.Fatal(err)
	}
	u.start("t1", interp.Options{}, "tship.hcl", uiAskPlaybook)
	u.waitAsked("t1")

	// A run of the project's own, which the page lists beside the
	// namespace's.
	runsDir := t.TempDir()
	localPB, diags := u.e.loader.LoadSources(map[string][]byte{"here.hcl": []byte(`playbook "here" {}
step "only" {
  shell {
    command = ["echo", "local"]
  }
}
`)}, u.dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := interp.Start(ctx, localPB, "here.hcl", interp.Options{RunID: "l1", Workdir: u.dir, RunsDir: runsDir, NoSync: true}); err != nil {
		t.Fatal(err)
	}
	u.serve(runsDir, dotAsSVG)
	get, cl, ns := u.get, u.cl, u.ns
	contains := func(what, body string, wants ...string) {
		t.Helper()
		contains(t, what, body, wants...)
	}

	list := get("/")
	contains("the runs list", list, `href="/run/t1"`, "tship", `class="status s-waiting"`, "approve: Ship v1.2?", "namespace "+ns,
		`href="/run/l1"`, `class="status s-completed"`)
	contains("the local run's page", get("/run/l1"), `id="status">completed`, `<tr data-step="only">`)
	// A run's duration is the cluster's: the time since it started, for
	// one still waiting.
	if row, _, _ := strings.Cut(list[strings.Index(list, `href="/run/t1"`):], "</tr>"); strings.Contains(row, "<td>0ms</td>") {
		t.Errorf("run t1's row has no duration: %s", row)
	}

	page := get("/run/t1")
	contains("the run's page", page,
		`id="status">waiting`,
		`<tr data-step="prepare">`, "v1.2?", // its step, its question
		`value="yes"`,
		`<svg>digraph "tship"`,                              // its graph
		"run t1: waiting",                                   // the graph's title, the run over it
		`"node-prepare":"done"`, `"node-approve":"waiting"`, // the steps' states on the graph
	)
	contains("the step's page", get("/run/t1/step/prepare"), "Attempt 1", "v1.2")

	post := func(choice string) *http.Response {
		t.Helper()
		return u.answer(page, "t1", "approve", choice)
	}
	if resp := post("maybe"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an answer not among the options: %d, want 400", resp.StatusCode)
	}
	// The live stream follows the run on the cluster.
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", u.url+"/run/t1/live", nil)
	req.AddCookie(&http.Cookie{Name: "apl_ui_token", Value: u.srv.Token()})
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	statuses := make(chan string)
	go func() {
		defer close(statuses)
		sc := bufio.NewScanner(stream.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var v struct{ Status string }
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && json.Unmarshal([]byte(d), &v) == nil {
				statuses <- v.Status
			}
		}
	}()
	if st := <-statuses; st != interp.StatusWaiting {
		t.Errorf("the stream's first update: %s, want waiting", st)
	}
	if resp := post("yes"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the answer: %d", resp.StatusCode)
	}
	seen := false
	for st := range statuses {
		if seen = st == interp.StatusCompleted; seen {
			break
		}
	}
	if !seen {
		t.Fatal("the live stream ended before it showed the run completed")
	}
	if st, err := temporal.WorkflowStatus(ctx, cl, "t1"); err != nil || st != "completed" {
		t.Fatalf("run t1's workflow is %s %v, want completed", st, err)
	}
	page = get("/run/t1")
	contains("the run's page once it completed", page, `id="status">completed`, `<tr data-step="ship">`)
	contains("the last step's page", get("/run/t1/step/ship"), "shipped: yes")

	// With no worker to answer for its steps, the page has what the
	// cluster keeps, and says why it has no more.
	u.stopWorker()
	contains("the run's page with no worker up", get("/run/t1"), `id="status">completed`, "its steps are not shown: no worker answered for the run")

	// A run on a queue no worker polls: its page says what it waits for,
	// as apl show does.
	if err := os.WriteFile("lone.hcl", []byte(uiAskPlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	lone, diags := u.e.loader.Load("lone.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := temporal.Start(ctx, cl, "nobody", lone, "lone.hcl", interp.Options{RunID: "t2"}); err != nil {
		t.Fatal(err)
	}
	contains("the page of a run no worker serves", get("/run/t2"), `id="status">running`, "no worker polls task queue nobody: run t2 waits for one")
}

// spendPlaybook's one agent step reports 1,234 tokens and $0.002.
const spendPlaybook = `
playbook "spend" {}
driver "local" {
  type    = "command"
  command = ["sh", "-c", "cat >/dev/null; echo '{\"answer\": \"ok\", \"usage\": {\"in\": 1000, \"out\": 234}, \"usd\": 0.002}'"]
  output  = "json"
  fields = {
    text          = "answer"
    input_tokens  = "usage.in"
    output_tokens = "usage.out"
    cost_usd      = "usd"
  }
}
agent "helper" { driver = driver.local }
step "say" {
  agent "helper" { prompt = "Say ok." }
}
`

// spendThenAskPlaybook spends as spendPlaybook does, then waits for an
// answer.
const spendThenAskPlaybook = spendPlaybook + `
step "confirm" {
  ask {
    question = "Keep it?"
    options  = ["yes", "no"]
  }
}
`

// TestUITemporalSubRunAndSpend: on Temporal, the runs list gives a
// run's tokens and cost, once it ended and while it goes on (from its
// workflow's memo, in the list's one call), and a run whose sub-run asks (a sub-playbook step's
// ask, in a child workflow) is listed waiting with that question; its
// page shows it at the step that runs the sub-run and answers it, as
// apl resume --answer review/approve=CHOICE --engine temporal does.
func TestUITemporalSubRunAndSpend(t *testing.T) {
	u := newTemporalUI(t)
	u.start("c1", interp.Options{}, "spend.hcl", spendPlaybook)
	if st := u.waitEnded("c1"); st != "completed" {
		t.Fatalf("run c1: %s", st)
	}
	u.start("s1", interp.Options{}, "main.hcl", subAskPlaybook, "sub.hcl", subAskSub)
	u.waitAsked("s1")
	u.start("w1", interp.Options{}, "spend.hcl", spendThenAskPlaybook)
	u.waitAsked("w1")
	u.serve(t.TempDir(), dotAsSVG)

	list := u.get("/")
	row := func(id string) string {
		i := strings.Index(list, `href="/run/`+id+`"`)
		if i < 0 {
			t.Fatalf("the runs list lacks run %s:\n%.4000s", id, list)
		}
		r, _, _ := strings.Cut(list[i:], "</tr>")
		return r
	}
	contains(t, "run c1's row", row("c1"), `class="status s-completed"`, `<td class="num">1234</td>`, `<td class="num">$0.0020</td>`)
	contains(t, "run s1's row", row("s1"), `class="status s-waiting"`, "review/approve: Ship it?")
	contains(t, "run w1's row, waiting", row("w1"), `class="status s-waiting"`, `<td class="num">1234</td>`, `<td class="num">$0.0020</td>`)

	page := u.get("/run/s1")
	if strings.Contains(page, "does not load") {
		t.Errorf("run s1 has no graph:\n%.3000s", page)
	}
	contains(t, "run s1's page", page, `id="status">waiting`, `id="q-where">review/approve</b>`, `value="yes"`, `"node-review":"waiting"`)
	if resp := u.answer(page, "s1", "review/approve", "maybe"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an answer not among the options: %d, want 400", resp.StatusCode)
	}
	if resp := u.answer(page, "s1", "review/approve", "yes"); resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("the answer: %d", resp.StatusCode)
	}
	if st := u.waitEnded("s1"); st != "completed" {
		t.Fatalf("run s1: %s", st)
	}
	contains(t, "run s1's page once it ended", u.get("/run/s1"), `id="status">completed`, `<tr data-step="ship">`)
	contains(t, "its last step's page", u.get("/run/s1/step/ship"), "shipped: yes")
}

// TestUITemporalBrowser drives apl ui --engine temporal in Chromium
// against a real Temporal server: the runs list has the namespace's run;
// opening it, the page shows its gate step running, then, without a
// reload, done (with its count in its node) once the step ends on the
// worker; the question it then asks is answered with a click, and the
// run completes on the cluster. Any console error fails it.
func TestUITemporalBrowser(t *testing.T) {
	browsertest.Chromium(t)
	u := newTemporalUI(t)
	gate := filepath.Join(u.dir, "go")
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o644) }) // lets the run end if the test failed early
	u.start("b1", interp.Options{}, "tship.hcl", uiAskPlaybook)
	var render func(dot, format string) ([]byte, error)
	withGraph := true
	if _, err := exec.LookPath("dot"); err != nil {
		t.Log("graphviz not installed (no dot command): the graph's nodes are not checked")
		render, withGraph = dotAsSVG, false
	}
	u.serve(t.TempDir(), render)

	b := browsertest.New(t)
	b.Open(u.url + "/?token=" + u.srv.Token())
	b.Until("the runs list with the Temporal run", `document.querySelector('#runs a[href="/run/b1"]')`)
	if got := b.Eval(`document.getElementById('where').innerText`); !strings.Contains(got, "namespace "+u.ns) {
		t.Errorf("the list does not say where its runs are: %s", got)
	}
	b.Eval(`document.querySelector('#runs a[href="/run/b1"]').click()`)
	b.Until("the run's page", `location.pathname === '/run/b1' && Number(document.body.dataset.updates) >= 1`)
	b.Until("the gate step shown running", `document.querySelector('#steps tr[data-step=gate] .st-running')`)
	if withGraph {
		b.Until("the gate node painted running", `document.getElementById('node-gate').classList.contains('st-running')`)
		b.Until("the first node's count", `document.querySelector('#node-prepare text[data-badge]').textContent === 'completed ×1'`)
	}
	b.StepTurnsDone("gate", gate, withGraph)
	b.Until("the question", `!document.getElementById('question').hidden && document.querySelector('#q-options button[value=yes]')`)
	shots := os.Getenv("APL_UI_SCREENSHOTS") // a directory, to look at the pages
	if shots != "" {
		os.WriteFile(filepath.Join(shots, "temporal-run.png"), b.Screenshot(true), 0o644)
	}
	b.Eval(`document.querySelector('#q-options button[value=yes]').click()`)
	b.Until("the run completed on the page", `document.body.dataset.status === 'completed'`)
	b.Until("its last step done", `document.querySelector('#steps tr[data-step=ship] .st-done')`)
	if st := u.waitEnded("b1"); st != "completed" {
		t.Errorf("run b1's workflow: %s", st)
	}
	if shots != "" {
		b.Open(u.url + "/")
		b.Until("the runs list", `document.querySelector('#runs a[href="/run/b1"]')`)
		os.WriteFile(filepath.Join(shots, "temporal-runs.png"), b.Screenshot(true), 0o644)
	}
	b.NoErrors()
}
