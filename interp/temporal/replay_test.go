//go:build !race

package temporal

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// replayRuns are the runs whose histories testdata/histories keeps: a
// for_each of concurrent items, sub-runs (child workflows) under a cap,
// questions answered by signal, and questions of a for_each's items, one
// of a sub-run, that hold the items.
var replayRuns = []struct {
	name, ref string
	answers   map[string]string
	// children are sub-runs (STEP-ITEM-ATTEMPT) whose histories are kept
	// too, as RUN~CHILD.json.
	children []string
}{
	{"foreach", "testdata/foreach.hcl", nil, nil},
	{"sub", "testdata/sub/main.hcl", nil, []string{"run-a-1"}},
	{"ask", "testdata/ask.hcl", map[string]string{"approve": "yes", "notes": "fixed"}, nil},
	{"held", "testdata/held/main.hcl", map[string]string{"decide": "yes", "phase/decide": "yes"}, nil},
}

// A worker replays the histories of runs recorded by earlier versions
// of the workflow (testdata/histories/VERSION-RUN.json): a worker that
// takes over a run started before an upgrade walks it on as it began,
// and does not fail it with a nondeterminism error. "before-hub" were
// recorded when every one of the walk's coroutines was a workflow
// coroutine, "hub" since the walk runs on one (hub.go), "ask-hold" since
// a question holds the for_each around it (subask.go), "relay" since a
// sub-run reserves from its parent's budget as its calls go
// (budgetrelay.go; only the run with sub-runs, whose history that
// changes), "relay-settle" since a sub-run's call within its reservation
// is settled without waiting for the parent (the same run, and a sub-run
// of it, whose own history that changes: RUN~CHILD.json). "relay-mixed"
// is such a sub-run that began on an apl before relay-settle while its
// parent answered with the newer one (workers upgraded one at a time):
// it was recorded by a build whose sub-runs skipped relay-settle, and
// failed to replay (a nil map) before the sub-run ignored the newer
// answer's Within.
//
// APL_RECORD_HISTORIES=VERSION records the runs anew as VERSION first.
func TestRecordedHistoriesReplay(t *testing.T) {
	if version := os.Getenv("APL_RECORD_HISTORIES"); version != "" {
		recordHistories(t, version)
	}
	files, err := filepath.Glob("testdata/histories/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata/histories: %v", err)
	}
	for _, f := range files {
		// The run's id is the workflow's, which names its children.
		id := strings.ReplaceAll(strings.TrimSuffix(filepath.Base(f), ".json"), "~", "/")
		t.Run(id, func(t *testing.T) {
			data, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer data.Close()
			h, err := client.HistoryFromJSON(data, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions((&runner{cfg: Config{Loader: loader(), Workdir: t.TempDir()}}).Run,
				workflow.RegisterOptions{Name: WorkflowName})
			if err := r.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{
				OriginalExecution: workflow.Execution{ID: id}}); err != nil {
				t.Fatalf("replaying %s: %v", f, err)
			}
		})
	}
}

// recordHistories runs replayRuns on an in-process server and writes
// each run's history to testdata/histories/VERSION-RUN.json.
func recordHistories(t *testing.T, version string) {
	c := server(t)
	startWorker(t, c, "record", t.TempDir())
	agentCmd, err := filepath.Abs("testdata/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range replayRuns {
		pb, diags := loader().Load(r.ref)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		id := version + "-" + r.name
		runTemporal(t, c, "record", pb, r.ref, interp.Options{RunID: id, Answers: r.answers, AgentCommand: []string{agentCmd}})
		writeHistory(t, c, id, filepath.Join("testdata/histories", id+".json"))
		for _, child := range r.children {
			writeHistory(t, c, id+"/"+child, filepath.Join("testdata/histories", id+"~"+child+".json"))
		}
	}
}

func writeHistory(t *testing.T, c client.Client, id, file string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var h historypb.History
	it := c.GetWorkflowHistory(ctx, id, "", false, 0)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	data, err := temporalproto.CustomJSONMarshalOptions{Indent: " "}.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
