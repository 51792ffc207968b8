package interp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apl-lang/apl/builtins/agent"
)

// pricedDriver answers every call "done", reporting tokens and a cost,
// and counts the calls it was given.
type pricedDriver struct {
	tokens int
	cost   float64
	// fail makes every call of a step fail, for retries.
	fail map[string]bool

	mu    sync.Mutex
	calls int
	steps []string
}

func (d *pricedDriver) Call(ctx context.Context, req agent.Request) (agent.Response, error) {
	d.mu.Lock()
	d.calls++
	d.steps = append(d.steps, req.Step)
	d.mu.Unlock()
	c := d.cost
	resp := agent.Response{Text: "done", Usage: agent.Usage{InputTokens: d.tokens}, CostUSD: &c}
	if d.fail[req.Step] {
		return resp, &agent.KindError{Kind: agent.KindOther, Err: errString("the model is tired")}
	}
	return resp, nil
}

func (d *pricedDriver) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.calls
}

type errString string

func (e errString) Error() string { return string(e) }

// sixItems is a for_each of six items, three at a time, each making one
// agent call; limits is the playbook's limits block.
func sixItems(limits string) string {
	return `
playbook "six" {}
` + limits + `
agent "a" {}
step "work" {
  for_each    = "[1, 2, 3, 4, 5, 6]"
  concurrency = 3
  step "do" {
    retry {
      max     = 3
      backoff = "1ms"
    }
    agent "a" { prompt = "Work on ${item}." }
  }
}
`
}

// TestRunCapTrippedInForEachItemDoesNotCrash: a run-wide cap that trips
// inside a for_each item stopped the run with a nil pointer dereference
// (the step read the trip the item's stop carried as if the step's own).
func TestRunCapTrippedInForEachItemDoesNotCrash(t *testing.T) {
	for _, tc := range []struct {
		name, limits, reason string
		fail                 bool
	}{
		{"max_cost_usd", "limits { max_cost_usd = 1.5 }", "limits.max_cost_usd", false},
		{"max_tokens", "limits { max_tokens = 1500 }", "limits.max_tokens", false},
		{"max_retries", "limits { max_retries = 1 }", "limits.max_retries", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pb := load(t, sixItems(tc.limits))
			d := &pricedDriver{tokens: 1000, cost: 1}
			if tc.fail {
				d.fail = map[string]bool{"do": true}
			}
			res, _ := startWith(t, pb, Options{Drivers: drivers(d)})
			if res.Status != StatusFailed || res.Recommendation != "halt" || res.ErrorKind != agent.KindBudget ||
				!strings.Contains(res.Reason, tc.reason) {
				t.Fatalf("status %s, recommendation %q, kind %q, reason %q", res.Status, res.Recommendation, res.ErrorKind, res.Reason)
			}
		})
	}
}

// TestForEachSpendsAtMostOneEstimateOverTheCap: six items, three at a
// time, $1 a call, and a $1.50 cap. The run spent $3 to $4: every item in
// flight made its call, and a fourth started after the cap was crossed.
// Now the first call of the step finds out what a call costs while the
// others wait, and no call starts whose cost does not fit.
func TestForEachSpendsAtMostOneEstimateOverTheCap(t *testing.T) {
	pb := load(t, sixItems("limits { max_cost_usd = 1.5 }"))
	d := &pricedDriver{tokens: 1000, cost: 1}
	res, _ := startWith(t, pb, Options{Drivers: drivers(d)})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "limits.max_cost_usd: a call of step do may cost $1.0000 (the most one call of the step cost so far), more than the $0.5000 left of $1.5000") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if c := res.Metrics.TotalCostUSD; c == nil || *c > 1.5 || d.count() != 1 {
		t.Errorf("%d calls cost $%v; want 1 call, at most the cap", d.count(), *c)
	}
}

// TestReservationFromStepAndDriver: a call reserves the step's own
// max_cost_usd, else its driver's ceiling (max_tokens at its prices); no
// call starts whose reservation does not fit, so the run never spends
// more than its cap while the estimates hold.
func TestReservationFromStepAndDriver(t *testing.T) {
	for _, tc := range []struct {
		name, pb, from string
		cost, cap      float64
	}{
		{"step max_cost_usd", `
playbook "r" {}
limits { max_cost_usd = 2.5 }
agent "a" {}
step "work" {
  for_each    = "[1, 2, 3, 4, 5, 6]"
  concurrency = 3
  step "do" {
    max_cost_usd = 1
    agent "a" { prompt = "Work on ${item}." }
  }
}
`, "the step's max_cost_usd", 0.4, 2.5},
		{"driver ceiling", `
playbook "r" {}
limits { max_cost_usd = 0.05 }
driver "d" {
  type       = "openai"
  model      = "m"
  max_tokens = 1000
  prices     = { m = { input = 3, output = 15 } }
}
agent "a" { driver = driver.d }
step "work" {
  for_each    = "[1, 2, 3, 4, 5, 6]"
  concurrency = 3
  step "do" {
    agent "a" { prompt = "Work on ${item}." }
  }
}
`, "the driver's max_tokens at its prices", 0.012, 0.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &pricedDriver{tokens: 100, cost: tc.cost}
			res, _ := startWith(t, load(t, tc.pb), Options{Drivers: drivers(d)})
			if res.Status != StatusFailed || !strings.Contains(res.Reason, "("+tc.from+")") {
				t.Fatalf("status %s reason %q", res.Status, res.Reason)
			}
			if c := res.Metrics.TotalCostUSD; c == nil || *c > tc.cap+1e-9 {
				t.Errorf("%d calls cost $%v, over the $%v cap", d.count(), *c, tc.cap)
			}
			if d.count() < 2 {
				t.Errorf("%d calls; the cap has room for more", d.count())
			}
		})
	}
}

// nineCalls is a sub-playbook of nine agent calls of $1: a for_each of
// nine items of one step, then three steps of their own.
const nineCalls = `
playbook "child" {}
agent "a" {}
step "each" {
  for_each    = "[1, 2, 3, 4, 5, 6]"
  concurrency = 3
  step "do" { agent "a" { prompt = "Do ${item}." } }
}
step "seven" { agent "a" { prompt = "Seven." } }
step "eight" { agent "a" { prompt = "Eight." } }
step "nine" { agent "a" { prompt = "Nine." } }
`

// TestSubPlaybookHeldToParentCaps: a parent's max_cost_usd of $1.50 let
// its sub-playbook make nine $1 calls; the sub-run's spend counted only
// once it ended. The parent's caps now hold during the sub-run, in the
// main walk and in a for_each item alike.
func TestSubPlaybookHeldToParentCaps(t *testing.T) {
	for _, tc := range []struct{ name, parent string }{
		{"main walk", `
playbook "parent" {}
limits { max_cost_usd = 1.5 }
step "phase" {
  playbook { source = "child" }
}
step "after" { shell { command = ["true"] } }
`},
		{"for_each item", `
playbook "parent" {}
limits { max_cost_usd = 1.5 }
step "phases" {
  for_each    = "['x', 'y', 'z']"
  concurrency = 3
  step "phase" {
    playbook { source = "child" }
  }
}
step "after" { shell { command = ["true"] } }
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pb := loadParentChild(t, tc.parent, nineCalls)
			d := &pricedDriver{tokens: 1000, cost: 1}
			res, rec := startWith(t, pb, Options{Drivers: drivers(d)})
			if res.Status != StatusFailed || res.Recommendation != "halt" || res.ErrorKind != agent.KindBudget ||
				!strings.Contains(res.Reason, "limits.max_cost_usd: a call of step do may cost $1.0000") {
				t.Fatalf("status %s, recommendation %q, kind %q, reason %q", res.Status, res.Recommendation, res.ErrorKind, res.Reason)
			}
			if d.count() != 1 {
				t.Errorf("%d calls (%v); the first leaves too little for a second", d.count(), d.steps)
			}
			for _, s := range rec.steps(EventStepStarted) {
				if s == "after" {
					t.Errorf("the parent went on to %q after its cap stopped the sub-run", s)
				}
			}
		})
	}
}

// TestSubPlaybookOwnLimitsTighter: a sub-playbook's own limits hold
// beside the parent's, as a tighter bound; crossing them fails the step
// that runs it (a budget error), not the parent's run.
func TestSubPlaybookOwnLimitsTighter(t *testing.T) {
	pb := loadParentChild(t, `
playbook "parent" {}
limits { max_cost_usd = 100 }
step "phase" {
  continue_on_error = true
  playbook { source = "child" }
}
step "after" { shell { command = ["true"] } }
`, strings.Replace(nineCalls, `playbook "child" {}`, `playbook "child" {}
limits { max_cost_usd = 2.5 }`, 1))
	d := &pricedDriver{tokens: 1000, cost: 1}
	res, rec := startWith(t, pb, Options{Drivers: drivers(d)})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if d.count() != 2 {
		t.Errorf("%d calls; the sub-run's $2.50 has room for two $1 calls", d.count())
	}
	if got := rec.steps(EventStepStarted); got[len(got)-1] != "after" {
		t.Errorf("steps %v", got)
	}
}

// TestSubPlaybookHeldToParentRetries: the parent's max_retries counts the
// sub-run's retries as they are made.
func TestSubPlaybookHeldToParentRetries(t *testing.T) {
	pb := loadParentChild(t, `
playbook "parent" {}
limits { max_retries = 2 }
step "phase" {
  playbook { source = "child" }
}
`, `
playbook "child" {}
step "flaky" {
  retry {
    max     = 5
    backoff = "1ms"
  }
  shell { script = "echo x >> tries; exit 1" }
}
`)
	work := t.TempDir()
	res, _ := startWith(t, pb, Options{Workdir: work})
	if res.Status != StatusFailed || res.Recommendation != "halt" || !strings.Contains(res.Reason, `step "phase" (`) || !strings.Contains(res.Reason, `limits.max_retries: a retry beyond the 2 this run may make (retry 3/5`) {
		t.Fatalf("status %s, recommendation %q, reason %q", res.Status, res.Recommendation, res.Reason)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "tries")); strings.Count(string(b), "x") != 3 {
		t.Errorf("the step ran %d times; the parent's 2 retries allow 3", strings.Count(string(b), "x"))
	}
}
