package draw

import (
	"strings"
	"testing"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/google/go-cmp/cmp"
)

// retryPlaybook loops from check back to build at most twice.
const retryPlaybook = `
playbook "p" {}
step "build" { shell { command = ["true"] } }
step "check" {
  shell { command = ["true"] }
  gate {
    rule "retry" {
      on_exhausted { fail = "halt" }
      max  = 2
      goto = "build"
      when = "steps.check.exit_code != 0"
    }
  }
}
`

// TestOverlayText draws a run that went round a capped loop once: each
// step ran twice, the loop's edge was taken once, and the way out once.
func TestOverlayText(t *testing.T) {
	pb, diags := (&lang.Loader{}).LoadSources(map[string][]byte{"p.hcl": []byte(retryPlaybook)}, t.TempDir())
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	events := []interp.Event{
		{Type: interp.EventStepStarted, Step: "build"},
		{Type: interp.EventStepCompleted, Step: "build"},
		{Type: interp.EventStepStarted, Step: "check"},
		{Type: interp.EventGateDecision, Step: "check", Details: map[string]any{"rule": "retry"}},
		{Type: interp.EventStepCompleted, Step: "check"},
		{Type: interp.EventStepStarted, Step: "build"},
		{Type: interp.EventStepCompleted, Step: "build"},
		{Type: interp.EventStepStarted, Step: "check"},
		{Type: interp.EventStepCompleted, Step: "check"},
	}
	g := New(pb)
	g.Overlay(&Run{ID: "r1", Status: interp.StatusCompleted, Path: interp.PathOf(events)})
	var b strings.Builder
	g.WriteText(&b)
	want := `playbook p: 2 steps; run r1 completed
step build [shell command parse=text]  (completed ×2)
  -> check  (taken ×2)
step check [shell command parse=text]  (completed ×2)
  rule retry [steps.check.exit_code != 0] -> build (max 2)  (taken ×1)
    on_exhausted -> (failed: halt)
  no rule matches -> (completed)  (taken ×1)
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("WriteText (-want +got):\n%s", d)
	}
}
