package playtest

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins/agent"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// loopPlaybook has a real shell step, two agent steps in a capped gate
// loop, and a call step.
const loopPlaybook = `
playbook "loop" {}

input "threshold" {
  type    = number
  default = 8
}

mode "lenient" {
  inputs = { threshold = 5 }
}

agent "worker" {
  type = "worker"
}

step "prepare" {
  shell {
    command = ["echo", "ready"]
  }
}

step "work" {
  agent "worker" {
    prompt = "Work."
  }
}

step "check" {
  returns = object({ score = number, issues = list(string) })
  agent "worker" {
    prompt = "Check the work."
  }
  gate {
    rule "pass" {
      when = "steps.check.output.score >= inputs.threshold"
      goto = "done"
    }
    otherwise {
      goto = "work"
      max  = 2
      on_exhausted {
        fail   = "halt"
        reason = "never passed"
      }
    }
  }
}

step "done" {
  call "file.write" {
    path    = "done.txt"
    content = "score ${steps.check.output.score}"
  }
}

output {
  status   = run.status
  score    = try(steps.check.output.score, null)
  issues   = try(steps.check.output.issues, null)
  prepared = trimspace(try(steps.prepare.output, ""))
  failed   = { for s in ["prepare", "work"] : s => steps[s].error_kind }
}
`

const loopTests = `
test "pass" {
  mock "work" {
    output = "done"
  }
  mock "check" {
    output = { score = 9, issues = [] }
  }
  expect {
    status = "completed"
    path   = ["prepare", "work", "check", "done"]
    output = { score = 9, issues = [], prepared = "ready", status = "completed" }
  }
}

test "loop then pass" {
  mock "work" {
    output = "done"
  }
  mock "check" {
    outputs = [
      { score = 3, issues = ["too short"] },
      { score = 9, issues = [] },
    ]
  }
  expect {
    status = "completed"
    path   = ["prepare", "work", "check", "work", "check", "done"]
    visits = { work = 2, check = 2, done = 1 }
  }
}

test "exhausted" {
  mock "work" {
    output = "done"
  }
  mock "check" {
    output = { score = 1, issues = ["bad"] }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { check = 3, done = 0 }
    output         = { issues = ["bad"] }
  }
}

test "lenient" {
  mode = "lenient"
  mock "work" {
    output = "done"
  }
  mock "check" {
    output = { score = 6, issues = [] }
  }
  expect {
    status = "completed"
    visits = { check = 1 }
  }
}

test "threshold input" {
  inputs = { threshold = 2 }
  mock "work" {
    output = "done"
  }
  mock "check" {
    output = { score = 3, issues = [] }
  }
  expect {
    status = "completed"
  }
}

test "shell mocked" {
  mock "prepare" {
    output = "mocked\n"
  }
  mock "work" {
    output = "done"
  }
  mock "check" {
    output = { score = 9, issues = [] }
  }
  expect {
    status = "completed"
    output = { prepared = "mocked" }
  }
}

test "shell exit code" {
  mock "prepare" {
    exit_code = 3
  }
  expect {
    status = "failed"
    path   = ["prepare"]
  }
}

test "call error" {
  mock "work" {
    output = "done"
  }
  mock "check" {
    output = { score = 9, issues = [] }
  }
  mock "done" {
    error = "disk full"
  }
  expect {
    status = "failed"
  }
}

test "wrong expectations" {
  mock "work" {
    output = "done"
  }
  mock "check" {
    outputs = [{ score = 3, issues = ["x"] }, { score = 8.1, issues = [] }]
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    path           = ["prepare", "work", "check", "done"]
    visits         = { check = 3, work = 2 }
    output         = { score = 9.2, issues = ["x"] }
  }
}

test "agent unavailable" {
  mock "work" {
    error      = "model sonnet-9 not found"
    error_kind = "unavailable"
  }
  expect {
    status = "failed"
    output = { failed = { prepare = "", work = "unavailable" } }
  }
}

test "shell error without a kind" {
  mock "prepare" {
    error = "no such file"
  }
  expect {
    status = "failed"
    output = { failed = { prepare = "other", work = "" } }
  }
}

test "agent without mock" {
  expect {
    status = "completed"
  }
}
`

func load(t *testing.T) (*lang.Playbook, map[string]*lang.Test) {
	t.Helper()
	ld := &lang.Loader{Builtins: builtins.Funcs().Names(), Signatures: builtins.Funcs(), DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}
	pb, diags := ld.LoadSources(map[string][]byte{"loop.hcl": []byte(loopPlaybook)}, ".")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests, diags := lang.LoadTests(pb, map[string][]byte{"loop_test.hcl": []byte(loopTests)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	byName := map[string]*lang.Test{}
	for _, tt := range tests {
		byName[tt.Name] = tt
	}
	return pb, byName
}

func TestRun(t *testing.T) {
	pb, tests := load(t)
	cases := []struct {
		name       string
		mismatches []string
		reason     string // a part of the run's reason, when it failed
	}{
		{name: "pass"},
		{name: "loop then pass"},
		{name: "exhausted", reason: "never passed"},
		{name: "lenient"},
		{name: "threshold input"},
		{name: "shell mocked"},
		{name: "shell exit code", reason: "exit status 3"},
		{name: "call error", reason: "disk full"},
		{
			name: "wrong expectations",
			mismatches: []string{
				`status: want "failed", got "completed"`,
				`recommendation: want "halt", got ""`,
				`path: want [prepare work check done], got [prepare work check work check done]`,
				`visits.check: want 3, got 2`,
				`output.issues: want ["x"], got []`,
				`output.score: want 9.2, got 8.1`,
			},
		},
		{name: "agent unavailable", reason: "model sonnet-9 not found"},
		{name: "shell error without a kind", reason: "no such file"},
		{
			name:       "agent without mock",
			mismatches: []string{`status: want "completed", got "failed" (reason: step "work" (loop.hcl:23,1-12): step work is an agent step and has no mock)`},
			reason:     "step work is an agent step and has no mock",
		},
	}
	if len(cases) != len(tests) {
		t.Fatalf("%d cases for %d tests", len(cases), len(tests))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			test := tests[c.name]
			if test == nil {
				t.Fatalf("no test %q", c.name)
			}
			res, err := Run(context.Background(), pb, "loop.hcl", test, Options{Workdir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.mismatches, res.Mismatches); diff != "" {
				t.Errorf("mismatches (-want +got):\n%s\npath %v, reason %q", diff, res.Path, res.Reason)
			}
			if !strings.Contains(res.Reason, c.reason) {
				t.Errorf("reason %q, want it to contain %q", res.Reason, c.reason)
			}
			if res.Passed() != (len(c.mismatches) == 0) {
				t.Errorf("Passed() = %v with mismatches %q", res.Passed(), res.Mismatches)
			}
		})
	}
}

// TestUnmockedCallRunsForReal checks that a call step without a mock runs
// the real builtin in the scratch directory.
func TestUnmockedCallRunsForReal(t *testing.T) {
	pb, tests := load(t)
	work := t.TempDir()
	res, err := Run(context.Background(), pb, "loop.hcl", tests["pass"], Options{Workdir: work})
	if err != nil || !res.Passed() {
		t.Fatalf("err %v, mismatches %q", err, res.Mismatches)
	}
	b, err := os.ReadFile(filepath.Join(work, "done.txt"))
	if err != nil || string(b) != "score 9" {
		t.Errorf("done.txt = %q, %v; want \"score 9\"", b, err)
	}
}

// TestScratchRemoved checks that a run without a Workdir cleans up after
// itself.
func TestScratchRemoved(t *testing.T) {
	pb, tests := load(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	res, err := Run(context.Background(), pb, "loop.hcl", tests["pass"], Options{})
	if err != nil || !res.Passed() {
		t.Fatalf("err %v, mismatches %q", err, res.Mismatches)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("scratch left behind: %v", left)
	}
}

// TestErrorKinds checks that the kinds a mock may name are the kinds the
// drivers classify errors into.
func TestErrorKinds(t *testing.T) {
	if diff := cmp.Diff(agent.Kinds, lang.ErrorKinds); diff != "" {
		t.Errorf("lang.ErrorKinds differs from agent.Kinds (-agent +lang):\n%s", diff)
	}
}

func TestEqual(t *testing.T) {
	num := func(s string) cty.Value { v, _ := cty.ParseNumberVal(s); return v }
	cases := []struct {
		a, b cty.Value
		want bool
	}{
		{cty.TupleVal([]cty.Value{cty.StringVal("x")}), cty.ListVal([]cty.Value{cty.StringVal("x")}), true},
		{cty.EmptyTupleVal, cty.ListValEmpty(cty.String), true},
		{cty.ObjectVal(map[string]cty.Value{"a": cty.NumberIntVal(1)}), cty.MapVal(map[string]cty.Value{"a": num("1")}), true},
		{cty.ObjectVal(map[string]cty.Value{"a": cty.NumberIntVal(1)}), cty.EmptyObjectVal, false},
		{num("9.2"), cty.NumberFloatVal(9.2), true},
		{num("9.2"), num("9.20001"), false},
		{cty.StringVal("1"), cty.NumberIntVal(1), false},
		{cty.NullVal(cty.String), cty.NullVal(cty.DynamicPseudoType), true},
		{cty.NullVal(cty.String), cty.StringVal(""), false},
	}
	for _, c := range cases {
		if got := equal(c.a, c.b); got != c.want {
			t.Errorf("equal(%s, %s) = %v, want %v", show(c.a), show(c.b), got, c.want)
		}
	}
}

// TestMockedPlaybookStep checks that a mock stands in for a playbook
// step's sub-run, per call, as for any other action: the sub-playbook's
// own steps do not run (its shell step would fail), its inputs are still
// evaluated, and an error mock fails the step with its kind.
func TestMockedPlaybookStep(t *testing.T) {
	dir := t.TempDir()
	// The top of a repository, so that main may run ../sub.
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"sub/sub.hcl": `
playbook "sub" {}
input "n" {
  type = number
}
step "boom" {
  shell {
    command = ["false"]
  }
}
output {
  score = inputs.n
}
`,
		"main/main.hcl": `
playbook "main" {}
step "phase" {
  continue_on_error = true
  playbook {
    source = "../sub"
    inputs = { n = steps.phase.attempts }
  }
  gate {
    rule "again" {
      when = "(steps.phase.output?.score ?? 0) < 9 && steps.phase.error_kind != 'budget'"
      goto = "phase"
      max  = 1
      on_exhausted {
        fail = "low"
      }
    }
    otherwise {}
  }
}
output {
  score = try(steps.phase.output.score, null)
  kind  = steps.phase.error_kind
}
`,
		"main/main_test.hcl": `
test "two calls" {
  mock "phase" {
    outputs = [{ score = 5 }, { score = 9.5 }]
  }
  expect {
    status = "completed"
    path   = ["phase", "phase"]
    output = { score = 9.5, kind = "" }
  }
}
test "error" {
  mock "phase" {
    error      = "max_tokens: step used 9 tokens (max 1)"
    error_kind = "budget"
  }
  expect {
    status = "completed"
    path   = ["phase"]
    output = { score = null, kind = "budget" }
  }
}
`,
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ld := &lang.Loader{Builtins: builtins.Funcs().Names(), Signatures: builtins.Funcs(), DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}
	ref := filepath.Join(dir, "main")
	pb, diags := ld.Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	testFiles, err := ld.TestFiles(ref)
	if err != nil {
		t.Fatal(err)
	}
	tests, diags := lang.LoadTests(pb, testFiles)
	if diags.HasErrors() || len(tests) != 2 {
		t.Fatalf("%d tests: %v", len(tests), diags)
	}
	for _, tt := range tests {
		t.Run(tt.Name, func(t *testing.T) {
			res, err := Run(context.Background(), pb, ref, tt, Options{Workdir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range res.Mismatches {
				t.Errorf("%s (reason %q)", m, res.Reason)
			}
		})
	}
}

// TestAskMock checks that a test answers an ask step with its mock, one
// answer per time the step asks, and that an unmocked ask waits.
func TestAskMock(t *testing.T) {
	ld := &lang.Loader{Builtins: builtins.Funcs().Names(), DecodeAnswer: agent.CheckAnswer}
	pb, diags := ld.LoadSources(map[string][]byte{"ask.hcl": []byte(`
playbook "ask" {}

step "decide" {
  ask {
    question = "Ship it?"
    options  = ["ship", "again", "stop"]
  }
  gate {
    rule "again" {
      when = "steps.decide.output == 'again'"
      goto = "decide"
      max  = 2
      on_exhausted {
        fail = "undecided"
      }
    }
    rule "stop" {
      when   = "steps.decide.output == 'stop'"
      finish = "stopped"
    }
    otherwise {}
  }
}

output {
  choice = steps.decide.output
}
`)}, ".")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests, diags := lang.LoadTests(pb, map[string][]byte{"ask_test.hcl": []byte(`
test "answered" {
  mock "decide" {
    outputs = ["again", "ship"]
  }
  expect {
    status = "completed"
    visits = { decide = 2 }
    output = { choice = "ship" }
  }
}

test "stopped" {
  mock "decide" {
    output = "stop"
  }
  expect {
    status = "stopped"
  }
}

test "unanswered" {
  expect {
    status = "waiting"
    path   = ["decide"]
  }
}
`)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, test := range tests {
		t.Run(test.Name, func(t *testing.T) {
			res, err := Run(context.Background(), pb, "ask.hcl", test, Options{Workdir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Passed() {
				t.Errorf("mismatches %q (reason %q)", res.Mismatches, res.Reason)
			}
		})
	}
}

// expect.items checks each for_each item's own path, which does not
// depend on how items running at once interleave.
func TestExpectItems(t *testing.T) {
	ld := &lang.Loader{Builtins: builtins.Funcs().Names(), Signatures: builtins.Funcs(), DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}
	pb, diags := ld.LoadSources(map[string][]byte{"items.hcl": []byte(`
playbook "items" {}
step "work" {
  for_each    = "['a', 'b']"
  key         = "item"
  concurrency = 2
  step "build" {
    shell {
      command = ["build", item]
    }
    gate {
      rule "again" {
        when = "item == 'b' && steps.build.attempts < 2"
        goto = "build"
        max  = 1
        on_exhausted {
          fail = "halt"
        }
      }
      otherwise {}
    }
  }
  step "test" {
    shell {
      command = ["test", item]
    }
  }
}
`)}, ".")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests, diags := lang.LoadTests(pb, map[string][]byte{"items_test.hcl": []byte(`
mock "build" {
  output = "ok"
}
mock "test" {
  output = "ok"
}
test "right" {
  expect {
    status = "completed"
    items  = { a = ["build", "test"], b = ["build", "build", "test"] }
  }
}
test "wrong" {
  expect {
    status = "completed"
    items  = { a = ["build", "build", "test"], c = ["build"] }
  }
}
`)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := map[string][]string{
		"right": nil,
		"wrong": {`items.a: want [build build test], got [build test]`, `items.c: want [build], got []`},
	}
	for _, test := range tests {
		res, err := Run(context.Background(), pb, "items.hcl", test, Options{Workdir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[test.Name], res.Mismatches); diff != "" {
			t.Errorf("%s: mismatches (-want +got):\n%s", test.Name, diff)
		}
	}
}

// A prompt that renders a value empty is reported beside the result, each
// place once (a for_each item's own), unless the prompt marks it optional;
// a value in a false %{ if } branch, a literal "" and a value given are
// not.
func TestEmptyValues(t *testing.T) {
	ld := &lang.Loader{Builtins: builtins.Funcs().Names(), Signatures: builtins.Funcs(), DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}
	pb, diags := ld.LoadSources(map[string][]byte{"empty.hcl": []byte(`
playbook "empty" {}
input "goal" {
  default = ""
}
input "notes" {
  default = ""
}
agent "worker" {
  type = "worker"
}
step "each" {
  for_each = "[{id: 'a', title: 'A', files: ['x.go', '']}, {id: 'b', title: '', files: []}]"
  key      = "item.id"
  step "work" {
    agent "worker" {
      prompt   = <<-EOT
        Goal: ${inputs.goal}
        Notes: ${inputs.notes}
        Task: ${item.title}
        %{ if inputs.goal != "" }Stay on ${inputs.goal}.%{ endif }
        Mode: ${inputs.goal == "" ? "" : "strict"}
        %{ for f in item.files }File: ${f}
        %{ endfor }
      EOT
      optional = [inputs.notes]
    }
    gate {
      rule "again" {
        when = "steps.work.attempts < 2"
        goto = "work"
        max  = 1
        on_exhausted {
          fail = "halt"
        }
      }
      otherwise {}
    }
  }
}
`)}, ".")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests, diags := lang.LoadTests(pb, map[string][]byte{"empty_test.hcl": []byte(`
test "run" {
  mock "work" {
    output = "done"
  }
  expect {
    status = "completed"
  }
}
`)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	res, err := Run(context.Background(), pb, "empty.hcl", tests[0], Options{Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mismatches) > 0 {
		t.Fatal(res.Mismatches)
	}
	var got []string
	for _, ev := range res.EmptyValues {
		got = append(got, ev.String())
	}
	sort.Strings(got)
	want := []string{
		`empty.hcl:18: step "work[a]": its prompt renders ${inputs.goal} empty`,
		`empty.hcl:18: step "work[b]": its prompt renders ${inputs.goal} empty`,
		`empty.hcl:20: step "work[b]": its prompt renders ${item.title} empty`,
		`empty.hcl:23: step "work[a]": its prompt renders ${f} empty`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("empty values (-want +got):\n%s", diff)
	}
}

// fallbackPlaybook's debug step asks autopilot-debugger and falls back
// to gsd-debugger, in a capped loop until a debugger fixes everything.
const fallbackPlaybook = `
playbook "fallback" {}

agent "debugger" {
  type = "autopilot-debugger"
}

agent "gsd_debugger" {
  type = "gsd-debugger"
}

step "debug" {
  continue_on_error = true
  returns = object({ fixed = bool })
  agent "debugger" {
    prompt      = "Fix it."
    fallback    = ["gsd_debugger"]
    fallback_on = ["unavailable", "rate_limited", "other"]
  }
  gate {
    rule "fixed" {
      when = "steps.debug.status == 'completed' && steps.debug.output.fixed"
    }
    rule "failed" {
      when   = "steps.debug.status == 'failed'"
      fail   = "halt"
      reason = "${steps.debug.agent}: ${steps.debug.error}"
    }
    otherwise {
      goto = "debug"
      max  = 2
      on_exhausted {
        fail = "halt"
      }
    }
  }
}

output {
  agent = steps.debug.agent
  fixed = try(steps.debug.output.fixed, null)
}
`

// Per-agent mocks exercise a step's fallback: the first agent is
// unavailable and the fallback answers, each agent block counting its own
// calls; a step-level answer serves the agents without a block; an agent
// nobody mocks fails the call.
func TestAgentMocksFallback(t *testing.T) {
	ld := &lang.Loader{DecodeAnswer: agent.CheckAnswer, Drivers: agent.DriverSchema{}}
	pb, diags := ld.LoadSources(map[string][]byte{"fallback.hcl": []byte(fallbackPlaybook)}, ".")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	tests, diags := lang.LoadTests(pb, map[string][]byte{"fallback_test.hcl": []byte(`
test "the debugger answers" {
  mock "debug" {
    agent "debugger" {
      output = { fixed = true }
    }
  }
  expect {
    status = "completed"
    agents = { debug = "debugger" }
    output = { agent = "debugger", fixed = true }
  }
}

test "unavailable: gsd-debugger answers, its first output first" {
  mock "debug" {
    agent "debugger" {
      error      = "autopilot-debugger: command not found"
      error_kind = "unavailable"
    }
    agent "gsd_debugger" {
      outputs = [{ fixed = false }, { fixed = true }]
    }
  }
  expect {
    status = "completed"
    visits = { debug = 2 }
    agents = { debug = "gsd_debugger" }
    output = { agent = "gsd_debugger", fixed = true }
  }
}

test "the step's own answer serves the agents without a block" {
  mock "debug" {
    agent "debugger" {
      error      = "rate limited"
      error_kind = "rate_limited"
    }
    output = { fixed = true }
  }
  expect {
    status = "completed"
    output = { agent = "gsd_debugger", fixed = true }
  }
}

test "a failure of another kind does not fall back" {
  mock "debug" {
    agent "debugger" {
      error      = "took too long"
      error_kind = "timeout"
    }
    agent "gsd_debugger" {
      output = { fixed = true }
    }
  }
  expect {
    status = "failed"
    agents = { debug = "debugger" }
  }
}

test "an agent without a mock fails its call" {
  mock "debug" {
    agent "debugger" {
      error      = "gone"
      error_kind = "unavailable"
    }
  }
  expect {
    status = "failed"
    agents = { debug = "gsd_debugger" }
  }
}
`)})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	reasons := map[string]string{
		"a failure of another kind does not fall back": "debugger: took too long",
		"an agent without a mock fails its call":       "gsd_debugger: step debug has no mock for agent gsd_debugger",
	}
	for _, test := range tests {
		t.Run(test.Name, func(t *testing.T) {
			res, err := Run(context.Background(), pb, "fallback.hcl", test, Options{Workdir: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Passed() {
				t.Errorf("mismatches %q (reason %q)", res.Mismatches, res.Reason)
			}
			if want := reasons[test.Name]; want != "" && res.Reason != want {
				t.Errorf("reason = %q, want %q", res.Reason, want)
			}
		})
	}
}
