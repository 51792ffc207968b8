//go:build !race

package temporal

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/zclconf/go-cty/cty"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"
)

// historyFiles are two playbooks whose history grows with what they
// carry, not with their steps: "docs" keeps a document of 4 KB that
// changes as its for_each's items end, "subs" runs a small sub-playbook
// per item from a parent whose own prompt file is 32 KB.
var historyFiles = map[string]string{
	"docs.hcl": `playbook "docs" {}
input "items" { type = list(string) }
document "state" {
  path    = "out/state.json"
  content = {
    pad   = format("%-4096s", "")
    items = try({ for k, it in steps.work.output.items : k => it.status }, {})
    after = try(trimspace(steps.after.output), null)
  }
}
step "work" {
  for_each    = "inputs.items"
  key         = "item"
  concurrency = 4
  step "do" {
    shell { command = ["true"] }
  }
}
step "after" {
  shell { command = ["echo", "done"] }
}
`,
	"subs/main.hcl": `playbook "subs" {}
input "items" { type = list(string) }
prompt "brief" {
  template = file("brief.md")
}
step "each" {
  for_each    = "inputs.items"
  key         = "item"
  concurrency = 4
  step "run" {
    playbook {
      source = "./child"
      inputs = { word = item }
    }
  }
}
step "after" {
  shell { command = ["echo", "done"] }
}
`,
	"subs/brief.md": strings.Repeat("a brief line of the parent's own prompt\n", 800),
	"subs/child/playbook.hcl": `playbook "child" {}
input "word" { type = string }
step "echo" {
  shell { command = ["echo", inputs.word] }
}
output {
  said = trimspace(steps.echo.output)
}
`,
}

// BenchmarkHistoryPerStep measures what a run's workflow history holds
// besides its steps (BENCHMARKS.md, "History per step on Temporal"): the
// bytes of the document writes' inputs, and of the child workflows'
// inputs, over the run's items, and the history's bytes per item in all.
//
//	go test -run '^$' -bench HistoryPerStep -benchtime 1x ./interp/temporal/
func BenchmarkHistoryPerStep(b *testing.B) {
	dir := b.TempDir()
	for name, src := range historyFiles {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	quiet := log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	ts := temporaltest.NewServer(temporaltest.WithBaseClientOptions(client.Options{Logger: quiet}))
	defer ts.Stop()
	c := ts.GetDefaultClient()
	w, err := NewWorker(c, "history", Config{Loader: loader(), Workdir: b.TempDir()}, worker.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Start(); err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	n := min(benchItems(), 500)
	items := make([]cty.Value, n)
	for i := range items {
		items[i] = cty.StringVal(fmt.Sprintf("i%04d", i))
	}
	inputs := map[string]cty.Value{"items": cty.ListVal(items)}
	for _, ref := range []string{"docs.hcl", "subs"} {
		b.Run(strings.TrimSuffix(ref, ".hcl"), func(b *testing.B) {
			pb, diags := loader().Load(filepath.Join(dir, ref))
			if diags.HasErrors() {
				b.Fatal(diags)
			}
			for b.Loop() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				res, _, err := Run(ctx, c, "history", pb, filepath.Join(dir, ref), interp.Options{Inputs: inputs})
				if err != nil || res.Status != interp.StatusCompleted {
					b.Fatal(err, res)
				}
				b.StopTimer()
				h := historyOf(b, c, res.RunID)
				b.StartTimer()
				b.ReportMetric(float64(h.size)/float64(n), "history-B/item")
				if h.docs > 0 {
					b.ReportMetric(float64(h.docBytes)/float64(h.docs), "B/doc-write")
					b.ReportMetric(float64(h.docs), "doc-writes")
				}
				if h.children > 0 {
					b.ReportMetric(float64(h.childBytes)/float64(h.children), "B/child-input")
				}
			}
		})
	}
}

type historyFigures struct {
	size                 int64
	docs, docBytes       int
	children, childBytes int
}

// historyOf reads the history of run id's last execution: its size, and
// the inputs of its document writes and child workflows.
func historyOf(b *testing.B, c client.Client, id string) historyFigures {
	ctx := context.Background()
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		b.Fatal(err)
	}
	h := historyFigures{size: d.GetWorkflowExecutionInfo().GetHistorySizeBytes()}
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			b.Fatal(err)
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == activityPrefix+"Document" {
			h.docs++
			for _, p := range a.GetInput().GetPayloads() {
				h.docBytes += p.Size()
			}
		}
		if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil {
			h.children++
			for _, p := range a.GetInput().GetPayloads() {
				h.childBytes += p.Size()
			}
		}
	}
	return h
}
