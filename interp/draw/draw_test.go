package draw

import (
	"html"
	"os/exec"
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

// retryRun is retryPlaybook and a run that went round its capped loop
// once: each step ran twice, the loop's edge was taken once, and the way
// out once.
func retryRun(t *testing.T) (*lang.Playbook, *Run) {
	t.Helper()
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
	return pb, &Run{ID: "r1", Status: interp.StatusCompleted, Path: interp.PathOf(events)}
}

// TestOverlayText draws a run that went round a capped loop once: each
// step ran twice, the loop's edge was taken once, and the way out once.
func TestOverlayText(t *testing.T) {
	pb, run := retryRun(t)
	g := New(pb)
	g.Overlay(run)
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

// TestTaken: the run of TestOverlayText, by the ids WriteDotIDs gives: the
// edge into check twice, the loop's edge once, the end once, and only
// ids the DOT has.
func TestTaken(t *testing.T) {
	pb, run := retryRun(t)
	g := New(pb)
	if g.Taken() != nil {
		t.Errorf("Taken without a run: %v", g.Taken())
	}
	g.Overlay(run)
	want := map[string]int{"edge-start--build": 1, "edge-build--check": 2, "edge-check--build": 1,
		"edge-check--outcome_completed": 1, "node-outcome_completed": 1}
	if d := cmp.Diff(want, g.Taken()); d != "" {
		t.Errorf("Taken (-want +got):\n%s", d)
	}
	var dot strings.Builder
	g.WriteDotIDs(&dot)
	for id := range g.Taken() {
		if !strings.Contains(dot.String(), `id="`+id+`"`) {
			t.Errorf("the DOT has no %s:\n%s", id, dot.String())
		}
	}
}

// TestBadges: the lines a run gives its steps' nodes, by node id, are
// those drawn in them; with room kept for them, a graph drawn before the
// run reached a step has an empty line in its node to fill in.
func TestBadges(t *testing.T) {
	pb, run := retryRun(t)
	g := New(pb)
	if g.Badges() != nil {
		t.Errorf("Badges without a run: %v", g.Badges())
	}
	g.Overlay(run)
	want := map[string]string{"node-build": "completed ×2", "node-check": "completed ×2"}
	if d := cmp.Diff(want, g.Badges()); d != "" {
		t.Errorf("Badges (-want +got):\n%s", d)
	}
	var dot strings.Builder
	g.WriteDotIDs(&dot)
	if n := strings.Count(dot.String(), ">completed ×2<"); n != 2 {
		t.Errorf("%d nodes say completed ×2:\n%s", n, dot.String())
	}
	g = New(pb)
	g.Overlay(&Run{ID: "r1", Status: interp.StatusRunning, Path: &interp.Path{}})
	dot.Reset()
	g.WriteDotIDs(&dot)
	if strings.Contains(dot.String(), ">"+BadgeRoom+"<") {
		t.Errorf("room kept for badges unasked:\n%s", dot.String())
	}
	g.RoomForBadges()
	dot.Reset()
	g.WriteDotIDs(&dot)
	if n := strings.Count(dot.String(), ">"+BadgeRoom+"<"); n != 2 {
		t.Errorf("%d nodes keep room for a badge, want 2:\n%s", n, dot.String())
	}
}

// TestWriteDotIDs gives every node and edge an id a page can find in the
// SVG: steps by name, edges by their ends; plain WriteDot adds none, so
// apl graph --format dot is unchanged.
func TestWriteDotIDs(t *testing.T) {
	pb, diags := (&lang.Loader{}).LoadSources(map[string][]byte{"p.hcl": []byte(retryPlaybook)}, t.TempDir())
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	g := New(pb)
	var plain, ids strings.Builder
	g.WriteDot(&plain)
	g.WriteDotIDs(&ids)
	if strings.Contains(plain.String(), `id="node-`) {
		t.Errorf("WriteDot writes ids:\n%s", plain.String())
	}
	for _, want := range []string{
		`id="node-build", class="step"`,
		`id="node-start", class="start"`,
		`"check" -> "build" [`,
		`id="edge-check--build"`,
		`id="edge-build--check"`,
	} {
		if !strings.Contains(ids.String(), want) {
			t.Errorf("WriteDotIDs lacks %s:\n%s", want, ids.String())
		}
	}
	if got := g.NodeID("check"); got != "node-check" {
		t.Errorf("NodeID(check) = %q", got)
	}
	if got := g.NodeID("nope"); got != "" {
		t.Errorf("NodeID(nope) = %q", got)
	}
	if _, err := exec.LookPath("dot"); err != nil {
		t.Skip("graphviz not installed (no dot command); apt-get install graphviz to check the ids reach the SVG")
	}
	svg, err := Render(ids.String(), "svg")
	if err != nil {
		t.Fatal(err)
	}
	// Graphviz writes a '-' in an id as &#45;, which a browser reads as
	// '-'.
	for _, want := range []string{`id="node-build"`, `class="node step"`, `id="edge-check--build"`} {
		if !strings.Contains(html.UnescapeString(string(svg)), want) {
			t.Errorf("the SVG lacks %s", want)
		}
	}
}
