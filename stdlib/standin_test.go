package stdlib_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// TestMain lets the test binary stand in for an agent: with
// STANDIN_AGENT_LOG set it answers one prompt (standin_agent_test.go).
func TestMain(m *testing.M) {
	if os.Getenv("STANDIN_AGENT_LOG") != "" {
		os.Exit(standinMain())
	}
	os.Exit(m.Run())
}

// TestStandinHappyPaths runs every stdlib playbook's happy path in a
// scratch git repository with an agent that knows only its prompts. Each
// run completes, no answer is rejected the first time (no re-prompt, no
// failed check), and no prompt renders an empty value into its prose.
func TestStandinHappyPaths(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		files  map[string]string
		inputs map[string]cty.Value
		status string
		// more checks of the prompts the agent was given
		prompts func(t *testing.T, calls []standinCall)
		repo    func(t *testing.T, dir string)
	}{
		{
			name: "phase-runner",
			files: map[string]string{
				"README.md": "A project.\n",
				".planning/ROADMAP.md": "# Roadmap\n\n## Phase 6.3: config loader\n**Goal:** load the configuration\n" +
					"- The loader exists -- verified by: `test -f loader.txt`\n- The README exists -- verified by: `test -f README.md`\n\n" +
					"## Phase 6.4: cache\n- The cache exists -- verified by: `test -f cache.txt`\n",
				".planning/phases/06.3-loader/.keep": "",
			},
			inputs: map[string]cty.Value{"phase_id": cty.StringVal("6.3")},
			status: "completed",
			prompts: func(t *testing.T, calls []standinCall) {
				research := findCall(t, calls, "You are researching phase")
				for _, want := range []string{"phase 6.3: config loader.", "Phase goal: load the configuration", "- The loader exists -- verified by: `test -f loader.txt`"} {
					if !strings.Contains(research.Prompt, want) {
						t.Errorf("the researcher is not told %q", want)
					}
				}
				exec := findCall(t, calls, "INCREMENTAL EXECUTION MODE")
				if !strings.Contains(exec.Prompt, "(6.3-01: Create standin-6.3-01.txt)") {
					t.Errorf("the executor is not told its task's description:\n%s", tail(exec.Prompt))
				}
			},
			repo: func(t *testing.T, dir string) {
				// The protocol's bookkeeping is committed: the tree is clean
				// for the next phase.
				if out := git(t, dir, "status", "--porcelain", "--untracked-files=no"); out != "" {
					t.Errorf("tracked changes left after the phase:\n%s", out)
				}
			},
		},
		{
			name: "orchestrator",
			files: map[string]string{
				".planning/ROADMAP.md": "# Roadmap\n\n## Phase 1: setup\n**Goal:** set the project up\n- The setup file exists -- verified by: `test -f setup.txt`\n\n" +
					"## Phase 2: build\n**Goal:** build on it\n**Depends on:** Phase 1\n- The build file exists -- verified by: `test -f build.txt`\n",
				".planning/phases/01-setup/.keep": "",
				".planning/phases/02-build/.keep": "",
				".gitignore":                      ".autopilot/\n",
			},
			status: "completed",
			prompts: func(t *testing.T, calls []standinCall) {
				research := findCall(t, calls, "You are researching phase 2: build")
				if !strings.Contains(research.Prompt, "Prior phase outputs are at: .planning/phases/01-setup") {
					t.Errorf("phase 2's researcher is not told where phase 1's outputs are:\n%s", head(research.Prompt))
				}
			},
		},
		{
			name: "conductor",
			files: map[string]string{
				"docs/tasks.json": `{"tasks": [
  {"id": "T1", "title": "User model", "objective": "Add a user model", "status": "pending", "model": "haiku", "blocked_by": [],
   "acceptance_criteria": [{"id": "AC-1", "criterion": "a user has an email"}], "test_file": "tests/user.test.txt"},
  {"id": "T2", "title": "Sessions", "objective": "Add sessions", "status": "pending", "model": "sonnet", "blocked_by": ["T1"],
   "acceptance_criteria": [{"id": "AC-2", "criterion": "sessions expire"}, {"id": "AC-3", "criterion": "a session names its user"}]}
]}
`,
				"docs/specs/TECHNICAL_DESIGN.md": "# Design\n",
				"docs/specs/ADR.md":              "# ADR\n",
				".gitignore":                     "state.json\nstate.json.bak\n",
			},
			status: "completed",
		},
		{
			name:  "risk-pipeline",
			files: map[string]string{"README.md": "A project.\n"},
			inputs: map[string]cty.Value{
				"task":          cty.StringVal("Add an API health endpoint"),
				"gate_commands": cty.ListVal([]cty.Value{cty.StringVal("test -f standin-change.txt")}),
			},
			status: "completed",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				if err := writeFile(filepath.Join(dir, name), content); err != nil {
					t.Fatal(err)
				}
			}
			git(t, dir, "init", "-q")
			git(t, dir, "add", ".")
			git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "start")
			inputs := map[string]cty.Value{}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			if tc.name == "phase-runner" {
				inputs["last_checkpoint_sha"] = cty.StringVal(git(t, dir, "rev-parse", "HEAD"))
			}
			log := filepath.Join(t.TempDir(), "calls.jsonl")
			t.Setenv("STANDIN_AGENT_LOG", log)
			t.Setenv("GIT_AUTHOR_NAME", "stand-in")
			t.Setenv("GIT_AUTHOR_EMAIL", "standin@example.com")
			t.Setenv("GIT_COMMITTER_NAME", "stand-in")
			t.Setenv("GIT_COMMITTER_EMAIL", "standin@example.com")

			ref := lang.StdlibPrefix + tc.name
			pb, diags := loader().Load(ref)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			var mu sync.Mutex
			var rejected []string
			obs := interp.ObserverFunc(func(e interp.Event) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case e.Type == interp.EventCheckFailed,
					e.Type == interp.EventLog && strings.HasPrefix(e.Message, "answer rejected"):
					rejected = append(rejected, e.Step+": "+e.Message)
				}
			})
			agentCmd := []string{exe}
			res, err := interp.Start(context.Background(), pb, ref, interp.Options{
				Workdir: dir, RunsDir: t.TempDir(), Inputs: inputs, NoSync: true,
				AgentCommand: agentCmd, Drivers: interp.DefaultDrivers(agentCmd), Observer: obs,
			})
			if err != nil {
				t.Fatal(err)
			}
			calls, err := readCalls(log)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tc.status {
				t.Errorf("status %s, want %s: %s", res.Status, tc.status, res.Reason)
			}
			if len(calls) == 0 {
				t.Fatal("no agent call")
			}
			for _, r := range rejected {
				t.Errorf("an answer was rejected: %s", r)
			}
			for _, c := range calls {
				if strings.Contains(c.Prompt, "Your previous answer was rejected") {
					t.Errorf("a re-prompt after a rejected answer:\n%s", tail(c.Prompt))
				}
				for _, f := range c.Findings {
					t.Errorf("%s\nin the prompt beginning:\n%s", f, head(c.Prompt))
				}
			}
			if tc.prompts != nil {
				tc.prompts(t, calls)
			}
			if tc.repo != nil {
				tc.repo(t, dir)
			}
			t.Logf("%d agent calls", len(calls))
			if t.Failed() {
				for _, c := range calls {
					t.Logf("prompt %q\nanswer %s", head(c.Prompt)[:80], c.Answer)
				}
			}
		})
	}
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func findCall(t *testing.T, calls []standinCall, marker string) standinCall {
	t.Helper()
	for _, c := range calls {
		if strings.Contains(c.Prompt, marker) {
			return c
		}
	}
	t.Fatalf("no prompt holds %q", marker)
	return standinCall{}
}

func head(s string) string {
	if len(s) > 600 {
		return s[:600] + "..."
	}
	return s
}

func tail(s string) string {
	if len(s) > 600 {
		return "..." + s[len(s)-600:]
	}
	return s
}
