package interp

import (
	"strings"
	"testing"
)

// TestBreakerBookkeepingStepsDoNotCount: once a playbook says with
// progress_when which steps measure progress, its other steps (its own
// bookkeeping between them) neither make nor lack progress, so three
// phases in a row without progress open the breaker even though a
// bookkeeping step completes between each.
func TestBreakerBookkeepingStepsDoNotCount(t *testing.T) {
	pb := load(t, `
playbook "cb" {}
circuit_breaker {
  no_progress = 3
  cooldown    = "1h"
}
step "record" {
  shell { command = ["true"] }
}
step "work" {
  progress_when = "false"
  shell { command = ["true"] }
}
step "assess" {
  gate {
    rule "again" {
      when = "true"
      goto = "record"
      max  = 10
      on_exhausted { fail = "halt" }
    }
    otherwise {}
  }
}
`)
	res, rec := startWith(t, pb, Options{})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "circuit breaker open: 3 consecutive steps without progress") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	var work int
	for _, s := range rec.steps(EventStepStarted) {
		if s == "work" {
			work++
		}
	}
	if work != 3 {
		t.Errorf("work ran %d times; the breaker should stop the third", work)
	}
	st, _, _ := ReadRun(res.Dir)
	if st.Breaker.ConsecutiveNoProgress != 3 {
		t.Errorf("consecutive_no_progress %d, want 3", st.Breaker.ConsecutiveNoProgress)
	}
}

// TestBreakerOpensInsideAnItem: the breaker opening at a step of a
// for_each item stops the run (it panicked: the item's stop carried no
// trip).
func TestBreakerOpensInsideAnItem(t *testing.T) {
	pb := load(t, `
playbook "cb" {}
circuit_breaker {
  no_progress = 2
  cooldown    = "1h"
}
step "phases" {
  for_each        = "['a', 'b', 'c']"
  on_item_failure = "at_end"
  step "work" {
    progress_when = "false"
    shell { command = ["true"] }
  }
}
`)
	res, rec := startWith(t, pb, Options{})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "circuit breaker open: 2 consecutive steps without progress") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if n := len(rec.steps(EventStepStarted)); n != 3 {
		t.Errorf("%d steps started; want phases and two items' work", n)
	}
}

// TestBreakerOpensWhereAGateEndsTheItem: the breaker opening at a step
// whose gate ends its for_each item (fail, as a failed phase does) stops
// the run, as it does where the gate goes on; the item ends as its gate
// said. The trip was dropped: the item failed, no other item started,
// and the for_each failed as deadlocked instead of tripped.
func TestBreakerOpensWhereAGateEndsTheItem(t *testing.T) {
	pb := load(t, `
playbook "cb" {}
circuit_breaker {
  no_progress = 2
  cooldown    = "1h"
}
step "phases" {
  for_each        = "['a', 'b', 'c']"
  on_item_failure = "continue"
  step "assess" {
    progress_when = "false"
    gate {
      otherwise {
        fail   = "halt"
        reason = "phase ${item} failed"
      }
    }
  }
}
step "after" {
  shell { command = ["true"] }
}
`)
	res, rec := startWith(t, pb, Options{})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "circuit breaker open: 2 consecutive steps without progress") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	for _, s := range rec.steps(EventStepStarted) {
		if s == "after" {
			t.Errorf("the run went on to step after with the breaker open")
		}
	}
	st, _, _ := ReadRun(res.Dir)
	if st.Meta.CurrentStep != "phases" {
		t.Errorf("resume goes on from %q, want phases", st.Meta.CurrentStep)
	}
	items := st.Items["phases"]
	if it := items["1"]; it == nil || it.Status != StepFailed || it.Error != "phase b failed" {
		t.Errorf("item 1: %+v; want failed as its gate said", it)
	}
	if it := items["2"]; it == nil || it.Status != StepPending {
		t.Errorf("item 2: %+v; want pending: no item starts once the breaker opened", it)
	}
}
