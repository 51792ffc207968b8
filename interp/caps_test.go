package interp

import (
	"context"
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
