package interp

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPathOf reads a path from an event log: a step started again with no
// gate decision between is one visit (a retry), a gate decision and a used
// up cap mark the visit, each item has its frame, and Ends lists each end
// in the order it came.
func TestPathOf(t *testing.T) {
	events := []Event{
		{Type: EventRunStarted},
		{Type: EventStepStarted, Step: "build"},
		{Type: EventStepStarted, Step: "build"},
		{Type: EventStepCompleted, Step: "build"},
		{Type: EventStepSkipped, Step: "docs"},
		{Type: EventStepStarted, Step: "check"},
		{Type: EventCapExhausted, Step: "check"},
		{Type: EventGateDecision, Step: "check", Details: map[string]any{"rule": "retry"}},
		{Type: EventStepFailed, Step: "check"},
		{Type: EventStepStarted, Step: "fix", Item: "a"},
		{Type: EventStepCompleted, Step: "fix", Item: "a"},
		{Type: EventItemCompleted, Step: "each", Item: "a"},
	}
	p := PathOf(events)
	want := &Path{
		Frames: map[string][]*Visit{
			"": {
				{Step: "build", Status: StepCompleted},
				{Step: "docs", Skipped: true, Status: StepSkipped},
				{Step: "check", Status: StepFailed, Rule: "retry", Exhausted: true},
			},
			"a": {{Step: "fix", Status: StepCompleted}},
		},
		FrameOrder: []string{"", "a"},
		Ends:       []string{"build step_completed", "docs step_skipped", "check step_failed", "fix[a] step_completed", "each[a] item_completed"},
	}
	if d := cmp.Diff(want, p); d != "" {
		t.Errorf("PathOf (-want +got):\n%s", d)
	}
}
