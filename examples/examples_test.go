package examples_test

import (
	"context"
	"encoding/json"
	"github.com/apl-lang/apl/builtins/agent"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/playtest"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// TestExamplesLoad loads every example playbook: none may have an error.
func TestExamplesLoad(t *testing.T) {
	dirs, err := filepath.Glob("*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		n++
		t.Run(d, func(t *testing.T) {
			_, diags := (&lang.Loader{Stdlib: stdlib.FS()}).Load(d)
			for _, dg := range diags {
				if dg.Severity == hcl.DiagError {
					t.Errorf("%s", dg)
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no examples found")
	}
}

// TestExampleTestFiles runs every example's *_test.hcl tests, as apl test
// does: each must load and pass.
func TestExampleTestFiles(t *testing.T) {
	dirs, err := filepath.Glob("*")
	if err != nil {
		t.Fatal(err)
	}
	ld := &lang.Loader{Stdlib: stdlib.FS(), Builtins: builtins.Funcs().Names(), Signatures: builtins.Funcs(), DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		files, err := ld.TestFiles(d)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			continue
		}
		pb, diags := ld.Load(d)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		tests, diags := lang.LoadTests(pb, files)
		if len(diags) > 0 {
			t.Fatalf("%s: %s", d, diags)
		}
		for _, tt := range tests {
			t.Run(d+"/"+tt.Name, func(t *testing.T) {
				t.Parallel()
				res, err := playtest.Run(context.Background(), pb, d, tt, playtest.Options{Workdir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range res.Mismatches {
					t.Error(m)
				}
			})
		}
	}
}

// TestPhaseGates drives examples/phase-gates through every branch of the
// phase runner's decision tree with the example agent, checking the path of steps
// and the run's output.
func TestPhaseGates(t *testing.T) {
	pb, diags := lang.Load("phase-gates")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	agentScript, err := filepath.Abs("phase-gates/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	main := []string{"preflight", "research", "plan", "plan_check", "execute", "verify", "judge", "rate", "gate"}
	verifyLoop := []string{"verify", "judge", "rate", "gate"}
	failed := []string{"postmortem", "learnings"}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	tests := []struct {
		scenario string
		mode     string
		inputs   map[string]cty.Value
		path     []string
		status   string
		rec      string
		output   map[string]any
	}{
		{
			scenario: "pass",
			path:     cat(main, []string{"result"}),
			status:   "completed",
			output:   map[string]any{"alignment_score": 9.2, "debug_attempts": 0.0, "replan_attempts": 0.0, "plan_checks": 1.0},
		},
		{
			scenario: "below_threshold",
			path:     cat(main, []string{"result"}),
			status:   "completed",
			output:   map[string]any{"alignment_score": 8.1},
		},
		{
			scenario: "pass",
			mode:     "quality",
			path:     cat(main, []string{"result"}),
			status:   "completed",
			output:   map[string]any{"alignment_score": 9.2},
		},
		{
			scenario: "debug_then_pass",
			path:     cat(main, []string{"debug"}, verifyLoop, []string{"result"}),
			status:   "completed",
			output:   map[string]any{"debug_attempts": 1.0},
		},
		{
			scenario: "debug_exhausted",
			path:     cat(main, []string{"debug"}, verifyLoop, []string{"debug"}, verifyLoop, []string{"debug"}, verifyLoop, []string{"rollback"}, failed),
			status:   "failed",
			rec:      "halt",
			output:   map[string]any{"debug_attempts": 3.0, "recommendation": "halt"},
		},
		{
			scenario: "replan_then_pass",
			path:     cat(main, main[1:], []string{"result"}),
			status:   "completed",
			output:   map[string]any{"replan_attempts": 1.0, "alignment_score": 9.2},
		},
		{
			scenario: "replan_exhausted",
			path:     cat(main, main[1:], []string{"rollback"}, failed),
			status:   "failed",
			rec:      "halt",
			output:   map[string]any{"replan_attempts": 1.0},
		},
		{
			scenario: "judge_rollback",
			path:     cat(main, []string{"rollback"}, failed),
			status:   "failed",
			rec:      "rollback",
		},
		{
			scenario: "judge_halt",
			path:     cat(main, []string{"rollback"}, failed),
			status:   "failed",
			rec:      "halt",
		},
		{
			scenario: "plan_check_retry",
			path:     cat(main[:4], []string{"plan", "plan_check"}, main[4:], []string{"result"}),
			status:   "completed",
			output:   map[string]any{"plan_checks": 2.0},
		},
		{
			scenario: "plan_check_exhausted",
			path:     cat(main[:4], []string{"plan", "plan_check", "plan", "plan_check", "plan", "plan_check"}, failed),
			status:   "failed",
			rec:      "halt",
			output:   map[string]any{"plan_checks": 4.0},
		},
		{
			// The rater answers 9 first: rejected (decimal scores only) and
			// asked again within the same step; 9.2 the second time.
			scenario: "integer_score",
			path:     cat(main, []string{"result"}),
			status:   "completed",
			output:   map[string]any{"alignment_score": 9.2},
		},
		{
			// The executor never lists a command: the check asks once
			// more, then fails the step and the phase.
			scenario: "no_evidence",
			path:     cat(main[:5], failed),
			status:   "failed",
		},
		{
			scenario: "pass",
			inputs:   map[string]cty.Value{"existing_plan": cty.True},
			path:     []string{"preflight", "plan_check", "execute", "verify", "judge", "rate", "gate", "result"},
			status:   "completed",
		},
	}
	for _, tt := range tests {
		name := tt.scenario
		if tt.mode != "" {
			name += "/" + tt.mode
		}
		if tt.inputs != nil {
			name += "/inputs"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			inputs := map[string]cty.Value{"phase_id": cty.StringVal("6.3")}
			for k, v := range tt.inputs {
				inputs[k] = v
			}
			var path []string
			res, err := interp.Start(context.Background(), pb, "phase-gates", interp.Options{
				Workdir:      work,
				Inputs:       inputs,
				Mode:         tt.mode,
				AgentCommand: []string{"env", "SCENARIO=" + tt.scenario, "bash", agentScript},
				NoSync:       true,
				Observer: interp.ObserverFunc(func(e interp.Event) {
					if e.Type == interp.EventStepStarted {
						path = append(path, e.Step)
					}
				}),
			})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.path, path); diff != "" {
				t.Errorf("path (-want +got):\n%s", diff)
			}
			if res.Status != tt.status || res.Recommendation != tt.rec {
				t.Errorf("status %q recommendation %q, want %q %q (reason: %s)", res.Status, res.Recommendation, tt.status, tt.rec, res.Reason)
			}
			var out map[string]any
			if err := json.Unmarshal(res.OutputJSON, &out); err != nil {
				t.Fatal(err)
			}
			if out["status"] != tt.status || out["phase_id"] != "6.3" {
				t.Errorf("output status/phase_id = %v/%v", out["status"], out["phase_id"])
			}
			for k, want := range tt.output {
				if out[k] != want {
					t.Errorf("output %s = %v, want %v", k, out[k], want)
				}
			}
			// A failed phase leaves a post-mortem and a learnings entry.
			pm, err := os.ReadFile(filepath.Join(work, ".autopilot", "diagnostics", "phase-6.3-postmortem.json"))
			if (err == nil) != (tt.status == "failed") {
				t.Errorf("post-mortem written: %v, run %s", err == nil, tt.status)
			}
			if err == nil {
				var doc map[string]any
				if err := json.Unmarshal(pm, &doc); err != nil || doc["recommendation"] != tt.rec || doc["status"] != "failed" {
					t.Errorf("post-mortem %s (%v)", pm, err)
				}
				learn, _ := os.ReadFile(filepath.Join(work, ".autopilot", "learnings.md"))
				if !strings.Contains(string(learn), "### Phase 6.3 failure -- "+tt.rec) {
					t.Errorf("learnings.md:\n%s", learn)
				}
			}
		})
	}
}

// TestPhaseGatesCheckerIssuesReachPlanner checks that the plan checker's
// issues are fed back into the planner's prompt on the second plan.
func TestPhaseGatesCheckerIssuesReachPlanner(t *testing.T) {
	pb, diags := lang.Load("phase-gates")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	script, _ := filepath.Abs("phase-gates/agent.sh")
	res, err := interp.Start(context.Background(), pb, "phase-gates", interp.Options{
		Workdir:      t.TempDir(),
		Inputs:       map[string]cty.Value{"phase_id": cty.StringVal("6.3")},
		AgentCommand: []string{"env", "SCENARIO=plan_check_retry", "bash", script},
		NoSync:       true,
	})
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(res.Dir, "artifacts", "plan-1.prompt"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(filepath.Join(res.Dir, "artifacts", "plan-2.prompt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(first), "REVISION REQUIRED") {
		t.Errorf("first plan prompt already asks for a revision:\n%s", first)
	}
	if !strings.Contains(string(second), "REVISION REQUIRED") || !strings.Contains(string(second), "task 2 has no verification command") {
		t.Errorf("second plan prompt lacks the checker's issues:\n%s", second)
	}
}
