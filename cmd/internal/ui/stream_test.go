package ui

import (
	"bufio"
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// gatedItems runs its items one at a time; item X's step waits until a
// file go-X exists in the project directory, which the test creates.
const gatedItems = `
playbook "items" {}
input "tasks" { type = list(string) }
step "work" {
  for_each    = "inputs.tasks"
  key         = "item"
  concurrency = 1
  step "do" {
    shell { command = ["sh", "-c", "while [ ! -e go-$0 ]; do sleep 0.02; done", item] }
  }
}
`

// follow reads the live stream at path, one runView an update.
func follow(t *testing.T, s *Server, ts *httptest.Server, path string) <-chan runView {
	t.Helper()
	req, _ := http.NewRequest("GET", ts.URL+path, nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: s.Token()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	updates := make(chan runView)
	go func() {
		defer close(updates)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var v runView
				if json.Unmarshal([]byte(d), &v) == nil {
					select {
					case updates <- v:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	return updates
}

// gatedItemsRun starts a run r1 of gatedItems over keys and returns once
// its first item runs; open(k) lets item k finish.
func gatedItemsRun(t *testing.T, keys []string) (*project, func(k string)) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "items.hcl"), []byte(gatedItems), 0o644); err != nil {
		t.Fatal(err)
	}
	pb, diags := (&lang.Loader{}).Load(filepath.Join(dir, "items.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := &project{dir: dir, runs: interp.RunsDir(dir), pb: pb}
	var tasks []cty.Value
	for _, k := range keys {
		tasks = append(tasks, cty.StringVal(k))
	}
	done := make(chan error, 1)
	go func() {
		_, err := interp.Start(context.Background(), pb, "items.hcl", interp.Options{Workdir: dir, RunID: "r1", NoSync: true,
			Inputs: map[string]cty.Value{"tasks": cty.ListVal(tasks)}})
		done <- err
	}()
	open := func(k string) {
		if err := os.WriteFile(filepath.Join(dir, "go-"+k), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, k := range keys {
			open(k) // lets the run end if the test failed early
		}
		<-done
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if st, _, err := interp.ReadRun(filepath.Join(p.runs, "r1")); err == nil && st.Items["work"]["a"] != nil && st.Items["work"]["a"].Steps["do"] != nil && st.Items["work"]["a"].Steps["do"].Status == interp.StepRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run never reached its first item")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p, open
}

// TestLiveStreamSendsWhatChanged: a page drawn from the run's current
// state gets a first update with no items and no graph, and then only the
// items that moved on, not the whole table each time.
func TestLiveStreamSendsWhatChanged(t *testing.T) {
	keys := []string{"a", "b", "c", "d", "e"}
	p, open := gatedItemsRun(t, keys)
	s := p.server()
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close) // after the streams' cleanups, which end them

	// Without a stamp, the stream does not know what the page shows.
	whole := <-follow(t, s, ts, "/run/r1/live")
	if !whole.ItemsFull || len(whole.Items) == 0 || whole.SVG == "" {
		t.Errorf("first update without a stamp: want the whole table and graph, got full=%v %d items svg=%d bytes", whole.ItemsFull, len(whole.Items), len(whole.SVG))
	}

	page := get(s, "/run/r1")
	m := regexp.MustCompile(`data-stamp="([^"]*)"`).FindStringSubmatch(page.Body.String())
	if m == nil {
		t.Fatalf("the page has no stamp: %.2000s", page.Body.String())
	}
	stamp := html.UnescapeString(m[1])
	updates := follow(t, s, ts, "/run/r1/live?stamp="+url.QueryEscape(stamp))
	first := <-updates
	if first.ItemsFull || len(first.Items) != 0 || first.SVG != "" {
		t.Errorf("first update to a page of the same state: want nothing redrawn, got full=%v %d items svg=%d bytes", first.ItemsFull, len(first.Items), len(first.SVG))
	}
	if first.Status != interp.StatusRunning || first.Nodes["node-do"] != "running" {
		t.Errorf("first update: status %s, nodes %v", first.Status, first.Nodes)
	}
	// Each item done sends that item and the next, not the table.
	for i, k := range keys {
		open(k)
		for {
			v, ok := <-updates
			if !ok {
				t.Fatalf("the stream ended at item %s", k)
			}
			if v.ItemsFull || len(v.Items) > 2 {
				t.Errorf("item %s: an update of %d items (full=%v)", k, len(v.Items), v.ItemsFull)
			}
			for _, row := range v.Items {
				if row.Key != k && (i+1 == len(keys) || row.Key != keys[i+1]) {
					t.Errorf("item %s: an update sends item %s, which did not change", k, row.Key)
				}
				if row.I != indexOf(keys, row.Key) {
					t.Errorf("item %s is sent at place %d", row.Key, row.I)
				}
			}
			if hasDone(v.Items, k) {
				break
			}
		}
	}
}

func indexOf(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

func hasDone(rows []itemRow, k string) bool {
	for _, r := range rows {
		if r.Key == k && r.Status == interp.StepCompleted {
			return true
		}
	}
	return false
}

// TestLiveUpdateDrawsNothing: the run's page draws its graph once; the
// updates that follow the run to its end change the states of its nodes
// and edges and its title, and never lay the graph out again (Graphviz
// took most of an update's time).
func TestLiveUpdateDrawsNothing(t *testing.T) {
	keys := []string{"a", "b", "c"}
	p, open := gatedItemsRun(t, keys)
	s := p.server()
	var renders atomic.Int32
	render := s.opts.Render
	s.opts.Render = func(dot, format string) ([]byte, error) {
		renders.Add(1)
		return render(dot, format)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)

	page := get(s, "/run/r1")
	if n := renders.Load(); n != 1 {
		t.Fatalf("the run's page drew its graph %d times, want once", n)
	}
	m := regexp.MustCompile(`data-stamp="([^"]*)"`).FindStringSubmatch(page.Body.String())
	if m == nil {
		t.Fatalf("the page has no stamp: %.2000s", page.Body.String())
	}
	updates := follow(t, s, ts, "/run/r1/live?stamp="+url.QueryEscape(html.UnescapeString(m[1])))
	if v := <-updates; v.Nodes["node-do"] != "running" || v.Title != "run r1: running" {
		t.Errorf("first update: nodes %v, title %q", v.Nodes, v.Title)
	}
	for _, k := range keys {
		open(k)
	}
	for v := range updates {
		if v.SVG != "" {
			t.Errorf("an update carries a drawing")
		}
		if v.Status == interp.StatusCompleted {
			if v.Nodes["node-do"] != "done" || v.Title != "run r1: completed" || v.Edges["node-outcome_completed"] != 1 {
				t.Errorf("last update: nodes %v, title %q, path %v", v.Nodes, v.Title, v.Edges)
			}
			if n := renders.Load(); n != 1 {
				t.Errorf("the graph was drawn %d times while the run went on, want once (the page's)", n)
			}
			return
		}
	}
	t.Fatal("the stream ended before the run completed")
}
