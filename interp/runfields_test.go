package interp

import (
	"testing"
)

// TestRunEventsAndBreakerInExpressions: an output reads the playbook's
// own events with their details (not apl's), and the breaker's counters,
// as the run left them; a condition sees them too.
func TestRunEventsAndBreakerInExpressions(t *testing.T) {
	pb := load(t, `
playbook "e" {}
circuit_breaker {
  no_progress = 5
}
step "a" {
  progress_when = "false"
  shell { command = ["true"] }
  gate {
    otherwise {
      event   = "task_completed"
      log     = "T1 done"
      details = { task = "T1", commit = "abc" }
    }
  }
}
step "b" {
  progress_when = "false"
  shell { command = ["true"] }
  gate {
    rule "seen" {
      # The breaker counts a step before its gate decides: a and b so far.
      when    = "len(run.events) == 1 && run.circuit_breaker.consecutive_no_progress == 2"
      event   = "task_completed"
      details = { task = "T2" }
    }
    otherwise { fail = "halt" }
  }
}
output {
  events  = [for e in run.events : "${e.event} ${e.step} ${e.details.task} ${e.details.rule}"]
  message = run.events[0].message
  breaker = run.circuit_breaker
}
`)
	res, _ := startWith(t, pb, Options{})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s (%s) %s", res.Status, res.Reason, res.Recommendation)
	}
	want := `{"breaker":{"consecutive_no_progress":2,"consecutive_same_error":0,"cooldown_until":null,"last_error":null,"opened_at":null,"reason":null,"state":"closed"},` +
		`"events":["task_completed a T1 otherwise","task_completed b T2 seen"],"message":"T1 done"}`
	if got := string(res.OutputJSON); got != want {
		t.Errorf("output\n got %s\nwant %s", got, want)
	}
}
