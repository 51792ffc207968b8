//go:build !race

package temporal

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/worker"
)

// A run whose workflow history grows past Config.ContinueAfter goes on
// in new executions (continue-as-new) and ends as it does locally, with
// the same output and path: its items run once each, those that failed
// stay failed, and the steps after the for_each see every item's output.
// Its for_each runs 4 items at once, and the worker lets 3 of its steps
// be under way (MaxPending): the fourth waits in the workflow.
func TestContinueAsNewSameAsLocal(t *testing.T) {
	c := server(t)
	blobs := t.TempDir()
	w, err := NewWorker(c, "cont", Config{Loader: loader(), Workdir: t.TempDir(), BlobDir: blobs, ContinueAfter: 150, MaxPending: 3}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	ref := "testdata/many.hcl"
	pb, diags := loader().Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	sameAsLocal(t, c, "cont", pb, ref, interp.Options{RunID: "many"})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, "many", "")
	if err != nil {
		t.Fatal(err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetFirstRunId() == info.GetExecution().GetRunId() {
		t.Errorf("the run's workflow did not continue as new (%d events in its one execution)", info.GetHistoryLength())
	}
	if n := info.GetHistoryLength(); n > 3*150 {
		t.Errorf("the last execution's history holds %d events, more than the 150 it continues after allow for", n)
	}
	// The states the executions continued with (over 140 KB: blobs) are
	// removed once read, but for the last one's; the first step's
	// result is a blob too.
	execs := 1
	for run := info.GetExecution().GetRunId(); run != info.GetFirstRunId(); execs++ {
		ev, err := c.GetWorkflowHistory(ctx, "many", run, false, 0).Next()
		if err != nil {
			t.Fatal(err)
		}
		run = ev.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	}
	if names, _ := filepath.Glob(filepath.Join(blobs, "*")); execs < 3 || len(names) != 2 {
		t.Errorf("%d executions leave %d blobs, want the first step's result and the last continuation", execs, len(names))
	}
}

// A sub-run whose workflow continues as new while its calls reserve from
// its parent's budget goes on reserving from it: its executions' calls
// all count, and the parent's cap stops it at the same call as locally.
// Twenty calls of 1,000 tokens under a parent's max_tokens of 15,500:
// fifteen are made, in several executions of the sub-run.
func TestContinueAsNewKeepsParentBudget(t *testing.T) {
	c := server(t)
	w, err := NewWorker(c, "cont-caps", Config{Loader: loader(), Workdir: t.TempDir(), BlobDir: t.TempDir(), ContinueAfter: 150}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	ref := subRunFiles(t.TempDir(), priced, callsInOrder(20, 1000, ""), phaseUnder("max_tokens = 15500", "output { tokens = run.tokens }\n"))
	local, remote := bothStopped(t, c, "cont-caps", ref, "cont-caps", "limits.max_tokens", nil)
	for engine, res := range map[string]*interp.Result{"local": local, "Temporal": remote} {
		if res.Metrics.TotalTokens != 15000 {
			t.Errorf("%s: spent %d tokens, want the 15 calls' 15000", engine, res.Metrics.TotalTokens)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, "cont-caps/phase-1", "")
	if err != nil {
		t.Fatal(err)
	}
	if info := d.GetWorkflowExecutionInfo(); info.GetFirstRunId() == info.GetExecution().GetRunId() {
		t.Errorf("the sub-run's workflow did not continue as new (%d events in its one execution)", info.GetHistoryLength())
	}
}
