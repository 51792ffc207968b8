//go:build !race

package temporal

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/worker"
)

// countingShell counts each step's commands; on a dying worker, the
// step named dieIn never returns, as if its machine went away.
type countingShell struct {
	inner   builtins.Shell
	mu      *sync.Mutex
	calls   map[string]int
	dieIn   string
	started chan struct{}
	dead    chan struct{}
}

func (s *countingShell) Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	s.mu.Lock()
	s.calls[spec.Step]++
	s.mu.Unlock()
	if spec.Step == s.dieIn {
		close(s.started)
		<-s.dead
		return builtins.ShellResult{ExitCode: -1}, context.Canceled
	}
	return s.inner.Run(ctx, spec)
}

// A worker that dies in a step leaves the run to another worker, which
// runs that step again and goes on; the steps that completed are not run
// again.
func TestWorkerDiesMidStep(t *testing.T) {
	c := server(t)
	var mu sync.Mutex
	calls := map[string]int{}
	dead := make(chan struct{})
	defer close(dead)
	dir := t.TempDir()
	blobs := t.TempDir()
	shell1 := &countingShell{inner: builtins.Shell{Workdir: dir}, mu: &mu, calls: calls, dieIn: "slow",
		started: make(chan struct{}), dead: dead}
	w1, err := NewWorker(c, "kill", Config{Loader: loader(), Workdir: dir, BlobDir: blobs, Shell: shell1, HeartbeatTimeout: 3 * time.Second},
		worker.Options{WorkerStopTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := w1.Start(); err != nil {
		t.Fatal(err)
	}
	ref := "testdata/kill.hcl"
	pb, diags := loader().Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	type done struct {
		res *interp.Result
		err error
	}
	ended := make(chan done, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		res, _, err := Run(ctx, c, "kill", pb, ref, interp.Options{})
		ended <- done{res, err}
	}()
	select {
	case <-shell1.started:
	case <-time.After(time.Minute):
		t.Fatal("the step never started on the first worker")
	}
	w1.Stop() // the first worker is gone, mid-step
	shell2 := &countingShell{inner: builtins.Shell{Workdir: dir}, mu: &mu, calls: calls}
	w2, err := NewWorker(c, "kill", Config{Loader: loader(), Workdir: dir, BlobDir: blobs, Shell: shell2, HeartbeatTimeout: 3 * time.Second}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Start(); err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	d := <-ended
	if d.err != nil {
		t.Fatal(d.err)
	}
	if d.res.Status != interp.StatusCompleted || string(d.res.OutputJSON) != `{"slow":"slow"}` {
		t.Errorf("run ended %s with %s, want completed with the slow step's output", d.res.Status, d.res.OutputJSON)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls["first"] != 1 || calls["last"] != 1 || calls["slow"] != 2 {
		t.Errorf("commands run per step: %v; want first and last once, slow twice (once on the worker that died)", calls)
	}
}
