package examples_test

import (
	"context"
	"encoding/json"
	"github.com/apl-lang/apl/builtins/agent"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/playtest"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
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

// TestPhaseGates drives examples/phase-gates, the fork of
// stdlib:phase-runner, through each branch of the phase runner's gates
// with the example agent in a scratch git project, as try.sh does:
// checking the steps visited, the run's ending and output, and what it
// left in the project (commits, a rollback's revert, the post-mortem).
func TestPhaseGates(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	pb, diags := (&lang.Loader{Stdlib: stdlib.FS()}).Load("phase-gates")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests := []struct {
		scenario string
		mode     string
		inputs   map[string]cty.Value
		// visits counts the visits of the steps named; a step not named
		// is not checked.
		visits map[string]int
		status string
		rec    string
		output map[string]any
	}{
		{
			scenario: "pass",
			visits:   map[string]int{"research": 1, "plan": 1, "plan_check": 1, "execute_task": 2, "mini_verify": 2, "task_debug": 0, "verify": 1, "judge": 1, "rate": 1, "debug": 0, "rollback": 0, "result": 1},
			status:   "completed",
			rec:      "proceed",
			output:   map[string]any{"alignment_score": 9.2, "debug_attempts": 0.0, "replan_attempts": 0.0, "tasks_completed": "2/2"},
		},
		{
			scenario: "below_threshold",
			visits:   map[string]int{"rate": 1, "debug": 0, "result": 1},
			status:   "completed",
			rec:      "proceed",
			output:   map[string]any{"alignment_score": 8.1},
		},
		{
			// 9.2 is under quality's 9.5 and over 7: completed, below
			// the threshold.
			scenario: "pass",
			mode:     "quality",
			visits:   map[string]int{"rate": 1, "debug": 0, "result": 1},
			status:   "completed",
			rec:      "proceed",
			output:   map[string]any{"alignment_score": 9.2},
		},
		{
			scenario: "debug_then_pass",
			visits:   map[string]int{"verify": 2, "debug": 1, "judge": 2, "rate": 2, "result": 1},
			status:   "completed",
			rec:      "proceed",
			output:   map[string]any{"debug_attempts": 1.0},
		},
		{
			scenario: "debug_exhausted",
			visits:   map[string]int{"verify": 4, "debug": 3, "give_up": 1, "rollback": 1, "result": 0},
			status:   "failed",
			rec:      "halt",
			output:   map[string]any{"debug_attempts": 3.0, "rollback_performed": true},
		},
		{
			scenario: "replan_then_pass",
			visits:   map[string]int{"research": 2, "plan": 2, "plan_check": 2, "rate": 2, "result": 1},
			status:   "completed",
			rec:      "proceed",
			output:   map[string]any{"replan_attempts": 1.0, "alignment_score": 9.2},
		},
		{
			scenario: "replan_exhausted",
			visits:   map[string]int{"research": 2, "rate": 2, "give_up": 1, "rollback": 1},
			status:   "failed",
			rec:      "halt",
			output:   map[string]any{"replan_attempts": 1.0},
		},
		{
			scenario: "judge_rollback",
			visits:   map[string]int{"judge": 1, "debug": 0, "rollback": 1},
			status:   "failed",
			rec:      "rollback",
			output:   map[string]any{"rollback_performed": true},
		},
		{
			scenario: "judge_halt",
			visits:   map[string]int{"judge": 1, "debug": 0, "rollback": 1},
			status:   "failed",
			rec:      "halt",
		},
		{
			scenario: "plan_check_retry",
			visits:   map[string]int{"plan": 2, "plan_check": 2, "result": 1},
			status:   "completed",
			rec:      "proceed",
		},
		{
			// Three checks (two re-plans), then the phase halts before
			// any task runs.
			scenario: "plan_check_exhausted",
			visits:   map[string]int{"plan": 3, "plan_check": 3, "execute_task": 0, "verify": 0},
			status:   "failed",
			rec:      "halt",
		},
		{
			// The rater answers 9 first: rejected (decimal scores only) and
			// asked again within the same step; 9.2 the second time.
			scenario: "integer_score",
			visits:   map[string]int{"rate": 1, "result": 1},
			status:   "completed",
			rec:      "proceed",
			output:   map[string]any{"alignment_score": 9.2},
		},
		{
			// The rater never lists a command: its evidence check fails
			// the step, and the phase.
			scenario: "no_evidence",
			visits:   map[string]int{"rate": 1, "result": 0},
			status:   "failed",
			rec:      "halt",
		},
		{
			// Each task's first mini-verification fails; the task
			// debugger fixes it and the second passes.
			scenario: "task_debug",
			visits:   map[string]int{"execute_task": 2, "mini_verify": 4, "task_debug": 2, "task_failed": 0, "result": 1},
			status:   "completed",
			rec:      "proceed",
			output:   map[string]any{"tasks_completed": "2/2"},
		},
		{
			// A plan exists: no research and no planning.
			scenario: "pass",
			inputs:   map[string]cty.Value{"existing_plan": cty.True},
			visits:   map[string]int{"research": 0, "plan": 0, "plan_check": 1, "execute_task": 2, "result": 1},
			status:   "completed",
			rec:      "proceed",
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
			work, start := phaseGatesProject(t)
			if tt.inputs["existing_plan"] == cty.True {
				plan, err := os.ReadFile("phase-gates/scenarios/default/PLAN.md")
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(work, ".planning", "phases", "6.3", "PLAN.md"), string(plan))
				gitIn(t, work, "add", ".")
				gitIn(t, work, "commit", "-q", "-m", "plan")
				start = gitIn(t, work, "rev-parse", "HEAD")
			}
			inputs := map[string]cty.Value{"phase_id": cty.StringVal("6.3"), "last_checkpoint_sha": cty.StringVal(start)}
			for k, v := range tt.inputs {
				inputs[k] = v
			}
			visits := map[string]int{}
			res, err := interp.Start(context.Background(), pb, "phase-gates", interp.Options{
				Workdir:      work,
				Inputs:       inputs,
				Mode:         tt.mode,
				AgentCommand: phaseGatesAgent(t, tt.scenario),
				NoSync:       true,
				Observer: interp.ObserverFunc(func(e interp.Event) {
					if e.Type == interp.EventStepStarted {
						visits[e.Step]++
					}
				}),
			})
			if err != nil {
				t.Fatal(err)
			}
			for step, want := range tt.visits {
				if visits[step] != want {
					t.Errorf("%s visited %d times, want %d (visits: %v)", step, visits[step], want, visits)
				}
			}
			var out map[string]any
			if err := json.Unmarshal(res.OutputJSON, &out); err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.status || out["status"] != tt.status || out["recommendation"] != tt.rec || out["phase"] != "6.3" {
				t.Errorf("status %q, output status %v recommendation %v phase %v; want %q %q 6.3 (reason: %s)", res.Status, out["status"], out["recommendation"], out["phase"], tt.status, tt.rec, res.Reason)
			}
			for k, want := range tt.output {
				if out[k] != want {
					t.Errorf("output %s = %v, want %v", k, out[k], want)
				}
			}
			// A failed phase leaves a post-mortem and a learnings entry;
			// a rollback reverts the phase's commits on a new commit.
			pm, err := os.ReadFile(filepath.Join(work, ".autopilot", "diagnostics", "phase-6.3-postmortem.json"))
			if (err == nil) != (tt.status == "failed") {
				t.Errorf("post-mortem written: %v, run %s", err == nil, tt.status)
			}
			log := gitIn(t, work, "log", "--format=%s")
			if tt.visits["rollback"] == 1 {
				if !strings.HasPrefix(log, "rollback: revert to phase 6.3 checkpoint") {
					t.Errorf("no revert commit on top:\n%s", log)
				}
				if _, err := os.Stat(filepath.Join(work, "task-06.3-01.txt")); !os.IsNotExist(err) {
					t.Errorf("task-06.3-01.txt is still there after the rollback (%v)", err)
				}
			}
			if err == nil {
				var doc map[string]any
				if err := json.Unmarshal(pm, &doc); err != nil || doc["status"] != "failed" {
					t.Errorf("post-mortem %s (%v)", pm, err)
				}
				if learn, err := os.ReadFile(filepath.Join(work, ".autopilot", "learnings.md")); err != nil || !strings.Contains(string(learn), "### Phase 6.3 failure -- ") {
					t.Errorf("learnings.md (%v):\n%s", err, learn)
				}
			}
		})
	}
}

// phaseGatesProject makes the scratch git project try.sh makes: a copy of
// phase-gates/project, committed. It returns its path and commit.
func phaseGatesProject(t *testing.T) (dir, commit string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("phase-gates/project")); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-q", "-m", "start")
	return dir, gitIn(t, dir, "rev-parse", "HEAD")
}

// phaseGatesAgent is the example agent's command for scenario.
func phaseGatesAgent(t *testing.T, scenario string) []string {
	script, err := filepath.Abs("phase-gates/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	return []string{"env", "SCENARIO=" + scenario, "bash", script}
}

// gitIn runs git in dir with a fixed identity (the agent and the phase
// runner commit too: TestMain gives the process the same one) and returns
// its output, trimmed.
func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestMain gives git an identity for the commits of the phase-gates
// runs (the example agent's, the phase runner's bookkeeping and
// rollback), where the machine may have none.
func TestMain(m *testing.M) {
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "phase-gates", "GIT_AUTHOR_EMAIL": "phase-gates@example.com", "GIT_COMMITTER_NAME": "phase-gates", "GIT_COMMITTER_EMAIL": "phase-gates@example.com"} {
		os.Setenv(k, v)
	}
	os.Exit(m.Run())
}

// TestPhaseGatesCheckerIssuesReachPlanner checks that the plan checker's
// issues are fed back into the planner's prompt on the second plan.
func TestPhaseGatesCheckerIssuesReachPlanner(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	pb, diags := (&lang.Loader{Stdlib: stdlib.FS()}).Load("phase-gates")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	work, _ := phaseGatesProject(t)
	res, err := interp.Start(context.Background(), pb, "phase-gates", interp.Options{
		Workdir:      work,
		Inputs:       map[string]cty.Value{"phase_id": cty.StringVal("6.3")},
		AgentCommand: phaseGatesAgent(t, "plan_check_retry"),
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
