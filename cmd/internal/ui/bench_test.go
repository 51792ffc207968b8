package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/apl-lang/apl/cmd/internal/ui/browsertest"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/draw"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// itemsPlaybook runs a body of two steps for each of its items.
const itemsPlaybook = `
playbook "many" {}
input "tasks" { type = list(string) }
step "prepare" {}
step "work" {
  for_each    = "inputs.tasks"
  key         = "item"
  concurrency = 8
  step "build" {}
  step "test" {}
}
step "report" {}
`

// manyItems is a project with one completed run, r1, of 1,000 items.
func manyItems(b *testing.B) *project {
	b.Helper()
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "many.hcl"), []byte(itemsPlaybook), 0o644); err != nil {
		b.Fatal(err)
	}
	pb, diags := (&lang.Loader{}).Load(filepath.Join(dir, "many.hcl"))
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	var tasks []cty.Value
	for i := range 1000 {
		tasks = append(tasks, cty.StringVal(fmt.Sprintf("task-%04d", i)))
	}
	res, err := interp.Start(context.Background(), pb, "many.hcl", interp.Options{Workdir: dir, RunID: "r1", NoSync: true,
		Inputs: map[string]cty.Value{"tasks": cty.ListVal(tasks)}})
	if err != nil || res.Status != interp.StatusCompleted {
		b.Fatal(err, res)
	}
	return &project{dir: dir, runs: interp.RunsDir(dir), pb: pb}
}

func benchServer(p *project) *Server {
	s := p.server()
	if _, err := exec.LookPath("dot"); err == nil {
		s.opts.Render = draw.Render
	}
	return s
}

// BenchmarkRunPage1000Items serves the page of a run of 1,000 items:
// reading the run, drawing its graph (with Graphviz when installed) and
// the items' table.
func BenchmarkRunPage1000Items(b *testing.B) {
	s := benchServer(manyItems(b))
	size := 0
	for b.Loop() {
		w := get(s, "/run/r1")
		if w.Code != http.StatusOK {
			b.Fatal(w.Code, w.Body.String())
		}
		size = w.Body.Len()
	}
	b.ReportMetric(float64(size)/1024, "KiB/page")
}

// BenchmarkLiveUpdate1000Items is one update of the live stream of that
// run: what the server does each time the run's state changes.
func BenchmarkLiveUpdate1000Items(b *testing.B) {
	p := manyItems(b)
	s := benchServer(p)
	size := 0
	for b.Loop() {
		run, err := s.opts.Runs.Open("r1")
		if err != nil {
			b.Fatal(err)
		}
		data, err := json.Marshal(s.view(run))
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size)/1024, "KiB/update")
}

// BenchmarkBrowserRunPage1000Items loads that run's page in headless
// Chromium until the page has applied the live stream's first update:
// ms/op is the whole, load-ms the browser's load event, update-ms the
// time the page's script took to apply the update (both means over the
// iterations).
func BenchmarkBrowserRunPage1000Items(b *testing.B) {
	p := manyItems(b)
	s := benchServer(p)
	ts := httptest.NewServer(s)
	b.Cleanup(ts.Close) // after the browser's cleanup, which ends its stream
	br := browsertest.New(b)
	br.Open(ts.URL + "/?token=" + s.Token())
	br.Until("the runs page", `document.querySelector('#runs')`)
	var load, update float64
	n := 0
	for b.Loop() {
		br.Open(ts.URL + "/run/r1")
		br.Until("the page with its first update", `Number(document.body.dataset.updates) >= 1 && document.querySelectorAll('#items tbody tr').length === 1000`)
		l, _ := strconv.ParseFloat(br.Eval(`performance.getEntriesByType('navigation')[0].loadEventEnd`), 64)
		u, _ := strconv.Unquote(br.Eval(`document.body.dataset.updateMs`))
		uf, _ := strconv.ParseFloat(u, 64)
		load, update, n = load+l, update+uf, n+1
	}
	b.ReportMetric(load/float64(n), "load-ms")
	b.ReportMetric(update/float64(n), "update-ms")
	br.NoErrors()
	br.Open("about:blank") // ends the live stream, so the server can close
}

// BenchmarkLiveDelta1000Items is what the live stream sends when 8 items
// of that run moved on (its concurrency) and the graph did not change:
// the update a page following a run of 1,000 items gets most often.
func BenchmarkLiveDelta1000Items(b *testing.B) {
	p := manyItems(b)
	s := benchServer(p)
	run, err := s.opts.Runs.Open("r1")
	if err != nil {
		b.Fatal(err)
	}
	v := s.view(run)
	prev := *v
	prev.Items = slices.Clone(v.Items)
	for i := 500; i < 508; i++ {
		prev.Items[i].Status = interp.StepRunning
	}
	size := 0
	for b.Loop() {
		data, err := json.Marshal(v.since(&prev))
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
	}
	b.ReportMetric(float64(size)/1024, "KiB/update")
}

// BenchmarkLiveUpdateSmallRun is one update of the live stream of a run
// of three steps (read, worked out, encoded): what the server does each
// time such a run changes, with Graphviz installed. renders/op counts the
// layouts by dot: one per update until the page drew its graph once.
func BenchmarkLiveUpdateSmallRun(b *testing.B) {
	s := benchServer(newProject(b))
	renders := 0
	render := s.opts.Render
	s.opts.Render = func(dot, format string) ([]byte, error) {
		renders++
		return render(dot, format)
	}
	n := 0
	for b.Loop() {
		run, err := s.opts.Runs.Open("r1")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(s.view(run).since(nil)); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(renders)/float64(n), "renders/op")
}
