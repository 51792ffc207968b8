package interp

import (
	"fmt"
	"slices"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
)

// Circuit breaker states (the orchestrator's breaker, spec/protocols.md#orchestrator).
const (
	BreakerClosed   = "closed"
	BreakerOpen     = "open"
	BreakerHalfOpen = "half_open"
)

// BreakerState is the circuit breaker's part of the state file.
type BreakerState struct {
	State                 string     `json:"state"`
	ConsecutiveNoProgress int        `json:"consecutive_no_progress"`
	ConsecutiveSameError  int        `json:"consecutive_same_error"`
	LastError             string     `json:"last_error,omitempty"`
	CooldownUntil         *time.Time `json:"cooldown_until,omitempty"`
	// OpenedAt is when the breaker last opened; nil once it closed.
	OpenedAt *time.Time `json:"opened_at,omitempty"`
	Reason   string     `json:"reason,omitempty"`
}

// countRetry counts one retry of the run (a step retried, a check that
// re-runs a step, a capped goto back) against limits.max_retries.
// The caps of the runs that run this one count it too.
func (r *run) countRetry(f *frame, s *lang.Step, what string) *trip {
	if t := r.budget().retry(r.host, what); t != nil {
		return t
	}
	r.st.Metrics.Retries++
	r.event(r.stepEvent(f, s, Event{Type: EventStepRetried, Message: what}))
	return nil
}

// checkSpend enforces token and cost caps after an agent call or a
// sub-run: the step's own (an error: the step fails), then the run's and
// those of the runs that run it (a trip: the run stops), crossed or
// refusing a call.
// It goes on (outNext) when no cap was crossed.
func (r *run) checkSpend(s *lang.Step, rec *StepRecord) outcome {
	if s.MaxTokens > 0 && rec.Tokens > s.MaxTokens {
		return failWith(&agent.BudgetError{Err: fmt.Errorf("max_tokens: step used %d tokens (max %d)", rec.Tokens, s.MaxTokens)})
	}
	if s.MaxCostUSD > 0 && rec.CostUSD != nil && *rec.CostUSD > s.MaxCostUSD {
		return failWith(&agent.BudgetError{Err: fmt.Errorf("max_cost_usd: step cost $%.4f (max $%.4f)", *rec.CostUSD, s.MaxCostUSD)})
	}
	if t := r.budget().stopped(); t != nil {
		return tripWith(t)
	}
	return goTo("")
}

// breaker updates the circuit breaker after a step and returns an error
// when it opens. A failed step, or one whose progress_when is false, made
// no progress; the same error (digits aside) repeating counts separately.
func (r *run) breaker(f *frame, s *lang.Step, stepErr error) *trip {
	cb := r.pb.CircuitBreaker
	if cb == nil {
		return nil
	}
	b := &r.st.Breaker
	// A failed step counts toward same_error; a completed one toward
	// no_progress when its progress_when is false. Each streak breaks on
	// the other kind of step only where that means something: any
	// completed step ends an error streak, any progress ends a no-progress
	// streak.
	if stepErr != nil {
		if kind := errorKind(stepErr); slices.Contains(cb.OpenOn, kind) {
			return r.openBreaker(s, fmt.Sprintf("step %s failed with a %s error (open_on): %v", s.Name, kind, stepErr))
		}
		msg := normalizeError(stepErr.Error())
		if msg == b.LastError {
			b.ConsecutiveSameError++
		} else {
			b.ConsecutiveSameError = 1
		}
		b.LastError = msg
		if b.State == BreakerHalfOpen {
			return r.openBreaker(s, fmt.Sprintf("step %s failed on the half-open trial: %v", s.Name, stepErr))
		}
		if b.ConsecutiveSameError >= cb.SameError {
			return r.openBreaker(s, fmt.Sprintf("the same error %d times in a row (same_error = %d): %v", b.ConsecutiveSameError, cb.SameError, stepErr))
		}
		return nil
	}
	b.ConsecutiveSameError = 0
	b.LastError = ""
	progress := true
	if s.ProgressWhen != nil {
		ok, err := s.ProgressWhen.Eval(r.exprEnv(f, s.ProgressWhen))
		progress = err == nil && ok
	} else if measuresProgress(r.pb) {
		// The playbook names the steps that measure progress; this one is
		// its bookkeeping between them, and neither makes nor lacks it.
		return nil
	}
	if progress {
		b.ConsecutiveNoProgress = 0
		if b.State == BreakerHalfOpen {
			b.State = BreakerClosed
			b.CooldownUntil, b.OpenedAt = nil, nil
			b.Reason = ""
			r.event(Event{Type: EventBreakerClosed, Step: s.Name, Message: "circuit breaker closed: step " + s.Name + " made progress"})
		}
		return nil
	}
	b.ConsecutiveNoProgress++
	switch {
	case b.State == BreakerHalfOpen:
		return r.openBreaker(s, fmt.Sprintf("step %s made no progress on the half-open trial", s.Name))
	case b.ConsecutiveNoProgress >= cb.NoProgress:
		return r.openBreaker(s, fmt.Sprintf("%d consecutive steps without progress (no_progress = %d)", b.ConsecutiveNoProgress, cb.NoProgress))
	}
	return nil
}

// measuresProgress reports whether any step of the playbook declares
// progress_when: then only those steps count toward no_progress.
func measuresProgress(pb *lang.Playbook) bool {
	for _, s := range pb.AllSteps() {
		if s.ProgressWhen != nil {
			return true
		}
	}
	return false
}

func (r *run) openBreaker(s *lang.Step, reason string) *trip {
	cb, b := r.pb.CircuitBreaker, &r.st.Breaker
	now := r.now()
	until := now.Add(cb.Cooldown)
	b.State = BreakerOpen
	b.OpenedAt = &now
	b.CooldownUntil = &until
	b.Reason = reason
	r.event(Event{Type: EventBreakerOpened, Step: s.Name, Message: "circuit breaker opened: " + reason,
		Details: map[string]any{"cooldown_until": until.Format(time.RFC3339)}})
	return breakerTrip(reason)
}

// breakerTrip is the trip of a breaker that opened for reason.
func breakerTrip(reason string) *trip {
	return &trip{"circuit breaker open: " + reason, agent.KindOther}
}
