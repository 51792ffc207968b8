package interp

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestExhaustedCapOpensBreaker: the orchestrator's "per-phase cap →
// circuit opens" for a gate's cap. The exhausted debug loop opens the breaker
// instead of failing the run outright; after the cooldown, resume goes on
// at the on_exhausted goto, as the half-open trial.
func TestExhaustedCapOpensBreaker(t *testing.T) {
	pb := load(t, `
playbook "cb" {}
circuit_breaker { cooldown = "1h" }
step "debug" {
  shell { command = ["true"] }
}
step "verify" {
  continue_on_error = true
  shell { script = "exit 1" }
  gate {
    rule "pass" {
      when = "steps.verify.status == 'completed'"
    }
    otherwise {
      goto = "debug"
      max  = 2
      on_exhausted {
        log          = "debug loop used up"
        goto         = "escalate"
        open_breaker = true
      }
    }
  }
}
step "escalate" {
  shell { command = ["true"] }
}
`)
	res, rec := startWith(t, pb, Options{})
	if res.Status != StatusFailed || res.Recommendation != "halt" ||
		!strings.Contains(res.Reason, `circuit breaker open: rule "otherwise" of step verify: goto debug taken 2 times (max 2)`) {
		t.Fatalf("status %s rec %s reason %q", res.Status, res.Recommendation, res.Reason)
	}
	if got := strings.Join(rec.steps(EventStepStarted), ","); got != "debug,verify,debug,verify,debug,verify" {
		t.Errorf("ran %s", got)
	}
	if len(rec.steps(EventBreakerOpened)) != 1 {
		t.Errorf("no %s event", EventBreakerOpened)
	}
	st, _, _ := ReadRun(res.Dir)
	if st.Breaker.State != BreakerOpen || st.Meta.CurrentStep != "escalate" {
		t.Fatalf("breaker %+v, current step %q", st.Breaker, st.Meta.CurrentStep)
	}
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	rec = &recorder{}
	res, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, Clock: later, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCompleted || strings.Join(rec.steps(EventStepStarted), ",") != "escalate" {
		t.Errorf("after the cooldown: status %s (%s), ran %v", res.Status, res.Reason, rec.steps(EventStepStarted))
	}
}

// TestOpenOnErrorKind: a phase's time limit (a playbook step's timeout,
// here a shell step's) opens the breaker at once with open_on, where
// same_error would have waited for a streak.
func TestOpenOnErrorKind(t *testing.T) {
	pb := load(t, `
playbook "cb" {}
circuit_breaker {
  same_error = 5
  open_on    = ["timeout"]
}
step "phase" {
  timeout = "50ms"
  shell { command = ["sleep", "5"] }
}
`)
	res, _ := startWith(t, pb, Options{})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "circuit breaker open: step phase failed with a timeout error (open_on)") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if res.ErrorKind != "other" {
		// The run failed on the breaker, not on the step's timeout.
		t.Errorf("run error kind %q", res.ErrorKind)
	}
}
