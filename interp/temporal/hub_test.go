//go:build !race

package temporal

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// hubWalk runs walk on a hub in a workflow, the way the run's workflow
// does (the workflow's own coroutine serves the tasks while the first
// runs), and returns what the tasks recorded.
func hubWalk(t *testing.T, walk func(e *engine, log func(string))) (string, error) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) (string, error) {
		e := &engine{cur: ctx}
		e.hub = newHub(e)
		var b strings.Builder
		e.Walk(func() { walk(e, func(s string) { b.WriteString(s + " ") }) })
		return strings.TrimSpace(b.String()), nil
	}, workflow.RegisterOptions{Name: "hub"})
	env.ExecuteWorkflow("hub")
	if err := env.GetWorkflowError(); err != nil {
		return "", err
	}
	var out string
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	return out, nil
}

// The hub resumes its tasks in the order they were spawned, pass after
// pass, each until it waits, and a task that waits on another (a
// channel, an activity's result, a timer) goes on once that has come.
func TestHubRunsTasksInOrder(t *testing.T) {
	out, err := hubWalk(t, func(e *engine, log func(string)) {
		done := e.Channel(3)
		for _, name := range []string{"a", "b", "c"} {
			e.Spawn(func() {
				log(name + "1")
				// A timer each: c's fires first, then b's, then a's.
				d := map[string]time.Duration{"a": 3 * time.Second, "b": 2 * time.Second, "c": time.Second}[name]
				ok, err := e.awaitWithTimeout(e.cur, d, func() bool { return false })
				if ok || err != nil {
					log("woke early")
				}
				log(name + "2")
				done.Send(name)
			})
		}
		for range 3 {
			log("got-" + done.Receive().(string))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := "a1 b1 c1 c2 got-c b2 got-b a2 got-a"; out != want {
		t.Errorf("tasks ran as %q, want %q", out, want)
	}
}

// Tasks still waiting when the workflow ends end with it: a worker
// keeps no goroutine of a workflow that completed or left its cache.
func TestHubTasksEndWithTheWorkflow(t *testing.T) {
	before := hubGoroutines()
	_, err := hubWalk(t, func(e *engine, log func(string)) {
		for range 5 {
			// Each waits for what never comes.
			e.Spawn(func() { e.await(e.cur, func() bool { return false }) })
		}
		// The walk returns with them waiting.
	})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for hubGoroutines() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := hubGoroutines(); n > before {
		t.Errorf("%d of the hub's goroutines outlived the workflow (before it: %d)", n, before)
	}
}

// A task that panics fails the workflow task, as a workflow coroutine's
// panic does, instead of taking the worker's process down.
func TestHubTaskPanicFailsTheWorkflowTask(t *testing.T) {
	_, err := hubWalk(t, func(e *engine, log func(string)) {
		e.Spawn(func() { panic("the task's own panic") })
		e.await(e.cur, func() bool { return false })
	})
	if err == nil || !strings.Contains(err.Error(), "the task's own panic") {
		t.Fatalf("workflow error %v, want the task's panic", err)
	}
}

// hubGoroutines counts the goroutines that run the hub's tasks.
func hubGoroutines() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("temporal.(*hub).run(")) {
			n++
		}
	}
	return n
}
