//go:build !race

// The in-process Temporal server is too slow under the race detector:
// these tests run without it.

package temporal

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"
)

func loader() *lang.Loader {
	return &lang.Loader{Stdlib: stdlib.FS(), Builtins: builtins.Funcs().Names(), Signatures: builtins.Funcs(),
		DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}
}

// server starts an in-process Temporal server and returns its client.
func server(t *testing.T) client.Client {
	t.Helper()
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	return ts.GetDefaultClient()
}

// startWorker runs a worker on queue with its project at workdir.
func startWorker(t *testing.T, c client.Client, queue, workdir string) worker.Worker {
	t.Helper()
	w, err := NewWorker(c, queue, Config{Loader: loader(), Workdir: workdir, HeartbeatTimeout: 5 * time.Second}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return w
}

// ran is what a run did that a user sees: how it ended, its output,
// and the steps it took.
type ran struct {
	status, recommendation, output string
	path                           []string
}

// normal puts the path's for_each items, which run concurrently, in a
// fixed order; the steps outside items keep theirs.
func normal(path []string) []string {
	var top, items []string
	for _, p := range path {
		if strings.Contains(p, "[") {
			items = append(items, p)
		} else {
			top = append(top, p)
		}
	}
	slices.Sort(items)
	return append(top, items...)
}

func runLocal(t *testing.T, pb *lang.Playbook, ref string, opts interp.Options) ran {
	t.Helper()
	var path []string
	if opts.Workdir == "" {
		opts.Workdir = t.TempDir()
	}
	opts.NoSync = true
	opts.Observer = interp.ObserverFunc(func(e interp.Event) { path = append(path, interp.PathEntry(e)...) })
	res, err := interp.Start(context.Background(), pb, ref, opts)
	if err != nil {
		t.Fatalf("local run of %s: %v", ref, err)
	}
	return ran{res.Status, res.Recommendation, string(res.OutputJSON), normal(path)}
}

// runTemporal runs pb on the workers of queue. The run gets no answers
// when it starts: it waits, and each of opts.Answers (by STEP[ITEM], else
// by STEP) answers it through the signal, as apl resume --answer does.
func runTemporal(t *testing.T, c client.Client, queue string, pb *lang.Playbook, ref string, opts interp.Options, with ...StartOption) ran {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	answers := opts.Answers
	opts.Answers = nil
	res, path, err := Run(ctx, c, queue, pb, ref, opts, with...)
	for err == nil && res.Status == interp.StatusWaiting {
		key := res.Waiting.Key()
		choice, ok := answers[key]
		if !ok {
			if choice, ok = answers[res.Waiting.Step]; !ok {
				t.Fatalf("Temporal run of %s waits with no answer given: %s", ref, res.Reason)
			}
		}
		from, err := SendAnswer(ctx, c, res.RunID, key, choice)
		if err != nil {
			t.Fatalf("answering %s=%s: %v", key, choice, err)
		}
		res, path, err = Watch(ctx, c, res.RunID, from, nil)
	}
	if err != nil {
		t.Fatalf("Temporal run of %s: %v", ref, err)
	}
	return ran{res.Status, res.Recommendation, string(res.OutputJSON), normal(path)}
}

// A playbook run on Temporal ends as it does locally, with the same
// output, having taken the same steps.
func TestSameAsLocal(t *testing.T) {
	c := server(t)
	startWorker(t, c, "q", t.TempDir())
	agentCmd, err := filepath.Abs("testdata/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{"testdata/shell.hcl", "testdata/gates.hcl", "testdata/foreach.hcl", "testdata/agent.hcl"} {
		t.Run(filepath.Base(ref), func(t *testing.T) {
			pb, diags := loader().Load(ref)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			sameAsLocal(t, c, "q", pb, ref, interp.Options{AgentCommand: []string{agentCmd}})
		})
	}
}

// sameAsLocal runs pb locally and on the workers of queue and compares
// how the runs ended, their outputs and their paths.
func sameAsLocal(t *testing.T, c client.Client, queue string, pb *lang.Playbook, ref string, opts interp.Options) {
	t.Helper()
	local := runLocal(t, pb, ref, opts)
	remote := runTemporal(t, c, queue, pb, ref, opts)
	sameRuns(t, ref, local, remote)
}

// sameRuns compares a local run and a Temporal run of ref.
func sameRuns(t *testing.T, ref string, local, remote ran) {
	t.Helper()
	if local.status != remote.status || local.recommendation != remote.recommendation {
		t.Errorf("status: local %s (%s), Temporal %s (%s)", local.status, local.recommendation, remote.status, remote.recommendation)
	}
	if local.output != remote.output {
		t.Errorf("output:\nlocal    %s\nTemporal %s", local.output, remote.output)
	}
	if !slices.Equal(local.path, remote.path) {
		t.Errorf("path:\nlocal    %q\nTemporal %q", local.path, remote.path)
	}
	t.Logf("%s: %s %s %q", ref, remote.status, remote.output, remote.path)
}
