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
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/cmd/internal/ui"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/temporal"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// uiAskPlaybook asks, then prints what was chosen.
const uiAskPlaybook = `
playbook "tship" {}
step "prepare" {
  shell { command = ["echo", "v1.2"] }
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

// TestUITemporalRuns: apl ui --engine temporal lists the runs of a
// namespace of a real Temporal server, with a waiting run's question;
// opening the run shows its steps, its path on the graph and what its
// steps printed (fetched from the worker); answering from the page lets
// the run go on to the end on the cluster, as apl resume --answer
// --engine temporal does.
func TestUITemporalRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	addr, ns := devServer(t)
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile("tship.hcl", []byte(uiAskPlaybook), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &env{stdout: io.Discard, stderr: io.Discard, loader: &lang.Loader{Stdlib: stdlib.FS(), Builtins: builtins.Funcs().Names(),
		Signatures: builtins.Funcs(), DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}}
	cl, err := client.Dial(client.Options{HostPort: addr, Namespace: ns, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	const queue = "ui"
	w, err := temporal.NewWorker(cl, queue, temporal.Config{Loader: e.loader, Workdir: dir, Name: "w1"}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	var stop sync.Once
	t.Cleanup(func() { stop.Do(w.Stop) })
	pb, diags := e.loader.Load("tship.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ctx := context.Background()
	if _, err := temporal.Start(ctx, cl, queue, pb, "tship.hcl", interp.Options{RunID: "t1"}); err != nil {
		t.Fatal(err)
	}
	// The ui may run anywhere: it draws the playbook from the sources the
	// run started with, not from a file of its directory.
	if err := os.Remove("tship.hcl"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if qs, err := temporal.Waiting(ctx, cl, "t1"); err == nil && len(qs) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("run t1 never came to wait")
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A run of the project's own, which the page lists beside the
	// namespace's.
	runsDir := t.TempDir()
	localPB, diags := e.loader.LoadSources(map[string][]byte{"here.hcl": []byte(`playbook "here" {}
step "only" {
  shell {
    command = ["echo", "local"]
  }
}
`)}, dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if _, err := interp.Start(ctx, localPB, "here.hcl", interp.Options{RunID: "l1", Workdir: dir, RunsDir: runsDir, NoSync: true}); err != nil {
		t.Fatal(err)
	}

	opts := e.uiOptions(runsDir, nil)
	closeRuns, err := e.uiTemporal(temporalFlags{Engine: engineTemporal, TemporalAddress: addr, Namespace: ns}, &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeRuns)
	opts.Render = func(dot, format string) ([]byte, error) {
		return []byte("<svg>" + html.EscapeString(dot) + "</svg>"), nil
	}
	s := ui.New(opts)
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	get := func(path string) string {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.AddCookie(&http.Cookie{Name: "apl_ui_token", Value: s.Token()})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return html.UnescapeString(string(b))
	}
	contains := func(what, body string, wants ...string) {
		t.Helper()
		for _, want := range wants {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q:\n%.4000s", what, want, body)
			}
		}
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

	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no CSRF token")
	}
	post := func(choice string) *http.Response {
		t.Helper()
		form := url.Values{"csrf": {m[1]}, "key": {"approve"}, "answer": {choice}}
		req, _ := http.NewRequest("POST", ts.URL+"/run/t1/answer", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "apl_ui_token", Value: s.Token()})
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := post("maybe"); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an answer not among the options: %d, want 400", resp.StatusCode)
	}
	// The live stream follows the run on the cluster.
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", ts.URL+"/run/t1/live", nil)
	req.AddCookie(&http.Cookie{Name: "apl_ui_token", Value: s.Token()})
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
	stop.Do(w.Stop)
	contains("the run's page with no worker up", get("/run/t1"), `id="status">completed`, "its steps are not shown: no worker answered for the run")
}
