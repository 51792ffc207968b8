package interp_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/internal/endingstest"
	"github.com/apl-lang/apl/lang"
)

// endingDriver answers every call, the trigger's with 150 tokens and $2,
// and records the calls it was given.
type endingDriver struct {
	mu    sync.Mutex
	steps []string
}

func (d *endingDriver) Call(ctx context.Context, req agent.Request) (agent.Response, error) {
	d.mu.Lock()
	d.steps = append(d.steps, req.Step+"["+req.ItemKey+"]")
	d.mu.Unlock()
	tokens, cost := 1, 0.01
	if req.Step == "trigger" {
		tokens, cost = 150, 2
	}
	return agent.Response{Text: "ok", Usage: agent.Usage{InputTokens: tokens}, CostUSD: &cost}, nil
}

func (d *endingDriver) calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.steps...)
}

// TestEveryEndingEverywhere trips every ending in every place a step can
// stand, and checks that the run ends as documented, without a crash, and
// that nothing starts once the end was decided: not the trigger's own
// frame's next step, not the step after the place for an ending that
// stops the run, and no for_each item.
func TestEveryEndingEverywhere(t *testing.T) {
	for _, p := range endingstest.Places {
		for _, e := range endingstest.Endings {
			t.Run(p.Name+"/"+e.Name, func(t *testing.T) {
				t.Parallel()
				e := e.In(p)
				dir := t.TempDir()
				parent, child := p.Build(e, e.Frame(filepath.Join(dir, "ended")), "agent \"a\" {}\n")
				pb, diags := lang.Load(endingstest.Write(t, dir, parent, child))
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				d := &endingDriver{}
				rec := &endingstest.Events{}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var obs interp.Observer = rec
				if e.Name == "interrupt" {
					obs = endingstest.InterruptOn(rec, "trigger", cancel)
				}
				res, err := interp.Start(ctx, pb, "p.hcl", interp.Options{Workdir: t.TempDir(), NoSync: true, Observer: obs,
					Drivers: func(*lang.Agent) (agent.Driver, error) { return d, nil }})
				if err != nil && !(e.Name == "interrupt" && errors.Is(err, interp.ErrInterrupted)) {
					t.Fatalf("run: %v", err)
				}
				status, recommendation, kind, reason := endingstest.OutcomeOf(e, p)
				if res.Status != status || recommendation != "" && res.Recommendation != recommendation ||
					kind != "" && res.ErrorKind != kind || !strings.Contains(res.Reason, reason) {
					t.Fatalf("ended %s (recommendation %q, kind %q, reason %q); want %s (%q, %q, %q)",
						res.Status, res.Recommendation, res.ErrorKind, res.Reason, status, recommendation, kind, reason)
				}
				endingstest.CheckNothingAfter(t, "local", rec.List(), d.calls(), e, p)
			})
		}
	}
}

// TestItemWaitingForItsTurnStartsNothingAfterSubRunTrip: an item that
// looked whether the run may go on, then waited for its serial step's
// turn while a sub-run of another item crossed the run's token cap,
// does not start that step once its turn comes.
func TestItemWaitingForItsTurnStartsNothingAfterSubRunTrip(t *testing.T) {
	dir := t.TempDir()
	parent := `playbook "p" {}
limits { max_tokens = 100 }
agent "a" {}
step "items" {
  for_each    = "['a', 'b', 'c']"
  concurrency = 3
  step "work" {
    when   = "item != 'b'"
    serial = true
    shell { command = ["sleep", "1"] }
  }
  step "phase" {
    when = "item == 'b'"
    playbook { source = "child" }
  }
}
`
	child := `playbook "child" {}
agent "a" {}
step "trigger" {
  agent "a" { prompt = "Spend." }
}
`
	pb, diags := lang.Load(endingstest.Write(t, dir, parent, child))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	rec := &endingstest.Events{}
	res, err := interp.Start(context.Background(), pb, "p.hcl", interp.Options{Workdir: t.TempDir(), NoSync: true, Observer: rec,
		Drivers: func(*lang.Agent) (agent.Driver, error) { return &endingDriver{}, nil }})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if res.Status != interp.StatusFailed || !strings.Contains(res.Reason, "limits.max_tokens") {
		t.Fatalf("ended %s: %s; want failed at the token cap", res.Status, res.Reason)
	}
	tripped, works, worked := false, 0, false
	for _, ev := range rec.List() {
		switch {
		case ev.Type == interp.EventStepFailed && strings.HasSuffix(ev.Step, "trigger"):
			tripped = true
		case ev.Type == interp.EventStepCompleted && ev.Step == "work" && !tripped:
			worked = true
		case ev.Type == interp.EventStepStarted && ev.Step == "work":
			works++
			if tripped {
				t.Errorf("work[%s] started after the sub-run crossed the cap", ev.Item)
			}
		}
	}
	if worked {
		// The first item's command ended before the sub-run tripped:
		// the second took its turn before the trip, as it may.
		t.Skip("the sub-run took over a second to trip (a loaded machine): no item waited through the trip")
	}
	if works != 1 {
		t.Errorf("work started %d times; want once (the other item waited for its turn)", works)
	}
	if t.Failed() {
		for _, ev := range rec.List() {
			t.Logf("%s %s[%s] %s", ev.Type, ev.Step, ev.Item, ev.Message)
		}
	}
}
