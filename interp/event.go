package interp

import "time"

// Event kinds, as they appear in the state file's event log and in
// Observer calls.
const (
	EventRunStarted     = "run_started"
	EventRunResumed     = "run_resumed"
	EventRunCompleted   = "run_completed"
	EventRunFailed      = "run_failed"
	EventRunInterrupted = "run_interrupted"
	EventStepStarted    = "step_started"
	EventStepCompleted  = "step_completed"
	EventStepFailed     = "step_failed"
	EventStepSkipped    = "step_skipped"
	EventStepReused     = "step_reused"
	EventGateDecision   = "gate_decision"
	EventCapExhausted   = "cap_exhausted"
	EventBudgetEnforced = "budget_enforced"
	EventLog            = "log"
	EventStepRetried    = "step_retried"
	EventCheckFailed    = "check_failed"
	EventBreakerOpened  = "circuit_breaker_opened"
	EventBreakerClosed  = "circuit_breaker_closed"
	EventRunWaiting     = "run_waiting"
	EventHumanDecision  = "human_decision"
	EventItemStarted    = "item_started"
	EventItemCompleted  = "item_completed"
	EventItemFailed     = "item_failed"
	EventItemBlocked    = "item_blocked"
	EventItemRequeued   = "item_requeued"
	EventDeadlock       = "deadlock"
	// EventAgentProgress says an agent call in flight is alive: what its
	// driver learned (Details kind "retrying", "session") and, every
	// heartbeat, that it still runs (kind "elapsed"). Details elapsed_s is
	// the time since the call began. These reach the Observer only; the
	// event log does not keep them.
	EventAgentProgress = "agent_progress"
	// EventDocumentFailed says a playbook document could not be projected
	// or written; the last one written stays in place.
	EventDocumentFailed = "document_failed"
)

// Event is one entry of a run's event log.
type Event struct {
	Time  time.Time `json:"timestamp"`
	Type  string    `json:"event"`
	Step  string    `json:"step,omitempty"`
	Item  string    `json:"item,omitempty"`  // the for_each item's key
	Label string    `json:"label,omitempty"` // the playbook's progress label, e.g. "Phase 6.3"
	// Progress is the step's progress name and its place among the
	// playbook's progress steps, when it has one.
	Progress      string `json:"progress,omitempty"`
	ProgressIndex int    `json:"progress_index,omitempty"`
	ProgressTotal int    `json:"progress_total,omitempty"`
	Attempt       int    `json:"attempt,omitempty"`
	Message       string `json:"message,omitempty"`
	// Details carries event-specific data (the rule chosen, a skip reason).
	Details map[string]any `json:"details,omitempty"`
}
