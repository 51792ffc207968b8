package lang

import (
	"fmt"
	"github.com/apl-lang/apl/builtins/agent"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// testedPlaybook is the playbook the test files below are decoded against.
const testedPlaybook = `
playbook "tested" {}

input "phase_id" {}

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

agent "helper" {
  type = "helper"
}

step "preflight" {
  shell {
    command = ["true"]
  }
}

step "notes" {
  agent "worker" {
    prompt   = "Notes for ${inputs.phase_id}."
    fallback = ["helper"]
  }
}

step "verify" {
  returns = object({
    pass   = bool
    checks = list(object({ name = string, pass = bool }))
    note   = optional(string)
  })
  agent "worker" {
    prompt = "Verify."
  }
  gate {
    rule "pass" {
      when = "steps.verify.output.pass"
    }
    otherwise {
      goto = "notes"
      max  = 2
      on_exhausted {
        fail = "halt"
      }
    }
  }
}

step "hash" {
  returns = object({ sha256 = string })
  call "file.sha256" {
    path = "x"
  }
}

step "route" {}

output {
  status = run.status
  score  = try(steps.verify.output.pass, null)
}
`

func loadTested(t testing.TB) *Playbook {
	t.Helper()
	pb, diags := (&Loader{DecodeAnswer: agent.CheckAnswer}).LoadSources(map[string][]byte{"tested.hcl": []byte(testedPlaybook)}, ".")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return pb
}

func TestLoadTests(t *testing.T) {
	pb := loadTested(t)
	src := `
mock "hash" {
  output = { sha256 = "abc" }
}

test "debug loop recovers" {
  mode   = "lenient"
  inputs = { phase_id = "6.3", threshold = "7" }
  mock "verify" {
    outputs = [
      { pass = false, checks = [{ name = "test", pass = false }], extra = "dropped" },
      { pass = true, checks = [] },
    ]
  }
  mock "notes" { output = "some notes" }
  mock "preflight" {
    exit_code = 1
    output    = "all_clear\n"
  }
  mock "hash" {
    error      = "connection reset"
    error_kind = "unavailable"
  }
  expect {
    status         = "completed"
    recommendation = "halt"
    path           = ["preflight", "notes", "verify"]
    visits         = { verify = 2, "notes" = 0 }
    output         = { score = true }
  }
}

test "minimal" {
  inputs = { phase_id = "1" }
  expect { status = "failed" }
}
`
	files, diags := LoadTestFiles(pb, map[string][]byte{"tested_test.hcl": []byte(src)})
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if len(files) != 1 || files[0].Filename != "tested_test.hcl" || len(files[0].Tests) != 2 {
		t.Fatalf("files = %+v", files)
	}
	tt := files[0].Tests[0]
	str := func(m map[string]cty.Value) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = formatValue(v)
		}
		return out
	}
	if tt.Name != "debug loop recovers" || tt.Mode != "lenient" {
		t.Errorf("name %q mode %q", tt.Name, tt.Mode)
	}
	if diff := cmp.Diff(map[string]string{"phase_id": `"6.3"`, "threshold": "7"}, str(tt.Inputs)); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
	v := tt.Mocks["verify"]
	if len(v.Outputs) != 2 || v.ExitCode != nil || v.Error != "" {
		t.Errorf("verify mock = %+v", v)
	}
	if got := formatValue(v.Output(5)); got != `{"checks":[],"pass":true}` {
		t.Errorf("verify's 5th output = %s; want the last one repeated", got)
	}
	if got := formatValue(v.Output(1)); !strings.Contains(got, `"pass":false`) {
		t.Errorf("verify's 1st output = %s", got)
	}
	if p := tt.Mocks["preflight"]; p.ExitCode == nil || *p.ExitCode != 1 || formatValue(p.Output(1)) != `"all_clear\n"` {
		t.Errorf("preflight mock = %+v", p)
	}
	if h := tt.Mocks["hash"]; h.Error != "connection reset" || h.ErrorKind != "unavailable" || h.Output(1) != cty.NilVal {
		t.Errorf("hash mock = %+v", h)
	}
	e := tt.Expect
	if e.Status != "completed" || e.Recommendation != "halt" {
		t.Errorf("expect = %+v", e)
	}
	if diff := cmp.Diff([]string{"preflight", "notes", "verify"}, e.Path); diff != "" {
		t.Errorf("path (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"verify": 2, "notes": 0}, e.Visits); diff != "" {
		t.Errorf("visits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"score": "true"}, str(e.Output)); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
	m := files[0].Tests[1]
	if m.Expect.Path != nil || m.Expect.Visits != nil || len(m.Mocks) != 1 {
		t.Errorf("minimal test = %+v, expect %+v", m, m.Expect)
	}
	// The file's mock serves the test that does not mock hash itself.
	if h := m.Mocks["hash"]; h == nil || h != files[0].Mocks["hash"] || formatValue(h.Output(1)) != `{"sha256":"abc"}` {
		t.Errorf("minimal's hash mock = %+v", h)
	}
}

// TestLoadTestsErrors decodes test files whose lines mark the diagnostics
// they must draw, as the fixtures in testdata/errors do.
func TestLoadTestsErrors(t *testing.T) {
	pb := loadTested(t)
	cases := map[string]string{
		"names": `
test "a" {
  inputs = { phase_id = "1", phase = "2" } # ERROR: Test sets an undeclared input
  mode   = "lenint"                        # ERROR: Unknown mode
  mock "verfy" {                           # ERROR: Reference to undeclared step
    output = { pass = true, checks = [] }
  }
  expect {
    status = "completed"
    path   = ["preflight", "note"]         # ERROR: Reference to undeclared step
    visits = { verify = 1, hsh = 2 }       # ERROR: Reference to undeclared step
    output = { scor = 1 }                  # ERROR: Unknown output field
  }
}
test "a" {                                 # ERROR: Duplicate test
  expect { status = "completed" }
}
`,
		"mocks": `
test "b" {                                 # ERROR: Missing input
  mock "verify" {
    output = { pass = "yes", checks = [] } # ERROR: Mock does not match returns
  }
  mock "notes" {
    output = { text = "x" }                # ERROR: Mock does not match the step
  }
  mock "hash" {
    exit_code = 1                          # ERROR: Unsupported mock attribute
  }
  mock "route" {                           # ERROR: Mock of a step without an action
    output = 1
  }
  mock "preflight" {
    output  = "x"
    outputs = ["y"]                        # ERROR: Conflicting mock attributes
  }
  mock "preflight" {                       # ERROR: Duplicate mock
    error = "x"
  }
  expect { status = "completed" }
}
test "b2" {
  inputs = { phase_id = "1" }
  mock "verify" {
    error_kind = "unavailable"             # ERROR: Mock error kind without error
  }
  mock "notes" {
    error      = "model not found"
    error_kind = "unavailible"             # ERROR: Unknown error kind
  }
  expect { status = "completed" }
}
test "c" {
  inputs = { phase_id = "1", threshold = "high" } # ERROR: Wrong type for a test input
  mock "verify" {
    outputs = [
      { pass = true, checks = [] },
      { pass = true },                     # ERROR: Mock does not match returns
    ]
  }
  mock "notes" {
    outputs = []                           # ERROR: Invalid mock outputs
  }
  mock "preflight" {}                      # ERROR: Empty mock
  mock "hash" {
    output = { sha256 = inputs.x }         # ERROR: Constant required
  }
  expect {
    status = "completed"
    visits = { verify = -1 }               # ERROR: Invalid expected visits
  }
}
test "d" {                                 # ERROR: Missing expect block
  inputs  = { phase_id = "1" }
  timeout = "1m"                           # ERROR: Unsupported argument
}
test "e" {
  inputs = { phase_id = "1" }
  expect { status = "completed" }
  expect { status = "failed" }             # ERROR: Duplicate expect block
}
`,
		"empty": `
# WARNING: No tests in file
`,
		"agents": `
test "g" {
  inputs = { phase_id = "1" }
  mock "notes" {
    agent "wroker" {                       # ERROR: Mock of an agent the step does not ask
      output = "x"
    }
    agent "worker" {
      output = { text = "x" }              # ERROR: Mock does not match the step
    }
    agent "worker" {                       # ERROR: Duplicate agent mock
      output = "y"
    }
    agent "helper" {}                      # ERROR: Empty mock
  }
  mock "verify" {
    agent "helper" {                       # ERROR: Mock of an agent the step does not ask
      output = { pass = true, checks = [] }
    }
    agent "worker" {
      output     = { pass = true, checks = [] }
      error      = "x"                     # ERROR: Conflicting mock attributes
    }
  }
  mock "preflight" {
    agent "worker" {                       # ERROR: Agent mock of a step that asks no agent
      output = "x"
    }
  }
  mock "hash" {
    agent "worker" {                       # ERROR: Agent mock of a step that asks no agent
      exit_code = 1
    }
  }
  expect {
    status = "completed"
    agents = {
      notes     = "helpr"                  # ERROR: Not an agent of the step
      preflight = "worker"                 # ERROR: Not an agent step
      nope      = "worker"                 # ERROR: Reference to undeclared step
    }
  }
}
test "h" {
  inputs = { phase_id = "1" }
  mock "notes" {
    agent "worker" {
      exit_code = 0                        # ERROR: Unsupported argument
    }
  }
  expect { status = "completed" }
}
`,
		"unreachable": `
unreachable "step.verify.gate.otherwise.on_exhausted" {
  reason = "the test of the cap"
}
unreachable "step.verify.gate.otherwise.on_exhausted" { # ERROR: Duplicate unreachable
  reason = "twice"
}
unreachable "step.verify.gate.rule.passs" {             # ERROR: Unknown branch
  reason = "a typo"
}
unreachable "step.verify.gate.otherwise" {
  reason = " "                                          # ERROR: Empty reason
}
unreachable "step.verify.gate.rule.pass" {}             # ERROR: Missing required argument
`,
		"shared": `
mock "verify" {
  output = { pass = 1, checks = [] } # ERROR: Mock does not match returns
}
mock "verify" {                      # ERROR: Duplicate mock
  error = "x"
}
test "f" {
  inputs = { phase_id = "1" }
  mock "verify" {
    output = { pass = true, checks = [] }
  }
  expect { status = "completed" }
}
`,
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			file := name + "_test.hcl"
			srcs := map[string][]byte{file: []byte(src)}
			_, diags := LoadTests(pb, srcs)
			want := marks(srcs)
			// The empty file's warning points at its first line.
			for i := range want {
				if name == "empty" {
					want[i].Line = 1
				}
			}
			if diff := cmp.Diff(want, diagMarks(diags)); diff != "" {
				var all strings.Builder
				for _, d := range diags {
					fmt.Fprintf(&all, "\n\t%s", d)
				}
				t.Errorf("diagnostics differ from the marks (-marked +got):\n%s\nall diagnostics:%s", diff, all.String())
			}
			for _, d := range diags {
				if d.Subject == nil || d.Detail == "" || strings.HasSuffix(d.Summary, ".") {
					t.Errorf("diagnostic %q: subject %v, detail %q", d.Summary, d.Subject, d.Detail)
				}
			}
		})
	}
}

// TestLoadTestsAskMock checks the mocked answers of an ask step: a
// string, and one of the options when they are constant.
func TestLoadTestsAskMock(t *testing.T) {
	pb, diags := (&Loader{}).LoadSources(map[string][]byte{"ask.hcl": []byte(`
playbook "ask" {}

step "decide" {
  ask {
    question = "Ship it?"
    options  = ["ship", "stop"]
  }
}
`)}, ".")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	srcs := map[string][]byte{"ask_test.hcl": []byte(`
test "a" {
  mock "decide" {
    outputs = [
      "ship",
      true,    # ERROR: Mock does not match the step
      "shipp", # ERROR: Mock answer is not an option
    ]
  }
  expect { status = "completed" }
}
`)}
	_, diags = LoadTests(pb, srcs)
	if diff := cmp.Diff(marks(srcs), diagMarks(diags)); diff != "" {
		t.Errorf("diagnostics differ from the marks (-marked +got):\n%s\n%v", diff, diags)
	}
	for _, d := range diags {
		if d.Summary == "Mock answer is not an option" && !strings.Contains(d.Detail, `Did you mean "ship"?`) {
			t.Errorf("detail %q: want a did-you-mean", d.Detail)
		}
	}
}

func TestLoadTestsDidYouMean(t *testing.T) {
	pb := loadTested(t)
	src := `
test "typos" {
  inputs = { phase_id = "1", threshhold = 3 }
  mode   = "lenien"
  mock "verfy" { output = "x" }
  expect {
    status = "completed"
    path   = ["preflght"]
    output = { stat = "completed" }
  }
}
`
	_, diags := LoadTests(pb, map[string][]byte{"t_test.hcl": []byte(src)})
	for _, want := range []string{`"threshold"`, `"lenient"`, `"verify"`, `"preflight"`, `"status"`} {
		found := false
		for _, d := range diags {
			if strings.Contains(d.Detail, "Did you mean "+want+"?") {
				found = true
			}
		}
		if !found {
			t.Errorf("no diagnostic suggests %s:\n%s", want, diags)
		}
	}
}

// TestLoadTestsOneLine checks a test written on one line, which plain HCL
// rejects: its ranges point into the file as written.
func TestLoadTestsOneLine(t *testing.T) {
	pb := loadTested(t)
	src := "test \"one\" { expect { status = \"completed\" } }\ntest \"two\" { expect { statuz = 1 } }\n"
	tests, diags := LoadTests(pb, map[string][]byte{"one_test.hcl": []byte(src)})
	if len(tests) != 2 || tests[0].Expect.Status != "completed" {
		t.Fatalf("tests = %+v", tests)
	}
	if tests[1].DeclRange.Start.Line != 2 {
		t.Errorf("test two declared at %s, want line 2", tests[1].DeclRange)
	}
	var lines []int
	for _, d := range diags {
		lines = append(lines, d.Subject.Start.Line)
	}
	// Missing input phase_id (twice), unsupported statuz, missing status.
	if len(diags) == 0 || lines[len(lines)-1] != 2 {
		t.Errorf("diagnostics at lines %v:\n%s", lines, diags)
	}
}

func TestTestFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.hcl", "")
	write("a_test.hcl", "# a")
	write("b_test.hcl", "# b")
	write("notes.txt", "")
	ld := &Loader{Stdlib: fstest.MapFS{
		"lib/pb.hcl":      {Data: []byte("")},
		"lib/pb_test.hcl": {Data: []byte("# lib")},
	}}
	cases := []struct {
		ref  string
		want []string
	}{
		{dir, []string{filepath.Join(dir, "a_test.hcl"), filepath.Join(dir, "b_test.hcl")}},
		{filepath.Join(dir, "a.hcl"), []string{filepath.Join(dir, "a_test.hcl")}},
		{"stdlib:lib", []string{"stdlib:lib/pb_test.hcl"}},
	}
	for _, c := range cases {
		files, err := ld.TestFiles(c.ref)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, slices.Sorted(maps.Keys(files))); diff != "" {
			t.Errorf("TestFiles(%s) (-want +got):\n%s", c.ref, diff)
		}
	}
	if _, err := ld.TestFiles("stdlib:nope"); err == nil {
		t.Error("TestFiles(stdlib:nope) did not fail")
	}
	// The loader leaves test files out of the playbook.
	write("a.hcl", `playbook "a" {}`+"\n"+`step "s" {}`)
	write("a_test.hcl", `test "t" {}`)
	write("b_test.hcl", `test "u" {}`)
	if _, diags := Load(dir); diags.HasErrors() {
		t.Errorf("loading the directory read its test files: %s", diags)
	}
}

// FuzzLoadTests decodes arbitrary test files against a fixed playbook: it
// must never panic, and every diagnostic must point into the file.
func FuzzLoadTests(f *testing.F) {
	seeds, _ := filepath.Glob("../examples/*/*_test.hcl")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("test \"one\" { expect { status = \"completed\" } }\n"))
	f.Add([]byte("mock \"verify\" { outputs = [{ pass = true, checks = [] }, null] }\ntest \"t\" {\n  inputs = { phase_id = 1 }\n  expect {\n    status = \"x\"\n    visits = { verify = 1.5 }\n  }\n}\n"))
	pb := loadTested(f)
	f.Fuzz(func(t *testing.T, src []byte) {
		const name = "fuzz_test.hcl"
		_, diags := LoadTests(pb, map[string][]byte{name: src})
		for _, d := range diags {
			s := d.Subject
			if s == nil {
				t.Fatalf("diagnostic without a Subject: %s", d)
			}
			if s.Filename != name || s.Start.Byte < 0 || s.Start.Byte > s.End.Byte || s.End.Byte > len(src) {
				t.Fatalf("diagnostic %q points outside the file: %s", d.Summary, s)
			}
		}
	})
}

// TestLoadTestsInclude shares mocks between test files: a file's tests
// start from the mocks of the files it includes (transitively), then the
// file's own top-level mocks, then their own; a file that is only
// included needs no tests.
func TestLoadTestsInclude(t *testing.T) {
	pb := loadTested(t)
	srcs := map[string][]byte{
		"tests/mocks.hcl": []byte(`
include = ["base.hcl"]
mock "notes" {
  output = "shared notes"
}
mock "verify" {
  output = { pass = true, checks = [] }
}
`),
		"tests/base.hcl": []byte(`
mock "hash" {
  output = { sha256 = "base" }
}
mock "notes" {
  output = "base notes"
}
`),
		"tests/loop.hcl": []byte(`
include = ["mocks.hcl"]
mock "verify" {
  output = { pass = false, checks = [] }
}
test "own over shared" {
  inputs = { phase_id = "1" }
  mock "hash" {
    output = { sha256 = "own" }
  }
  expect { status = "completed" }
}
test "shared" {
  inputs = { phase_id = "1" }
  expect { status = "completed" }
}
test "a test includes too" {
  include = ["base.hcl"]
  inputs  = { phase_id = "1" }
  expect { status = "completed" }
}
`),
	}
	files, diags := LoadTestFiles(pb, srcs)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	got := map[string]map[string]string{}
	for _, f := range files {
		for _, test := range f.Tests {
			got[test.Name] = map[string]string{}
			for step, m := range test.Mocks {
				got[test.Name][step] = formatValue(m.Output(1))
			}
		}
	}
	want := map[string]map[string]string{
		"own over shared":     {"hash": `{"sha256":"own"}`, "notes": `"shared notes"`, "verify": `{"checks":[],"pass":false}`},
		"shared":              {"hash": `{"sha256":"base"}`, "notes": `"shared notes"`, "verify": `{"checks":[],"pass":false}`},
		"a test includes too": {"hash": `{"sha256":"base"}`, "notes": `"base notes"`, "verify": `{"checks":[],"pass":false}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mocks (-want +got):\n%s", diff)
	}
	if f := files[1]; f.Filename != "tests/loop.hcl" || !slices.Equal(f.Include, []string{"tests/mocks.hcl"}) {
		t.Errorf("file %s includes %q", f.Filename, f.Include)
	}
}

// TestLoadTestsIncludeErrors: an include that names no test file of the
// playbook, or that closes a cycle.
func TestLoadTestsIncludeErrors(t *testing.T) {
	pb := loadTested(t)
	srcs := map[string][]byte{
		"a_test.hcl": []byte(`
include = ["b_test.hcl", "mock.hcl"] # ERROR: Unknown included file
test "a" {
  inputs = { phase_id = "1" }
  expect { status = "completed" }
}
`),
		"b_test.hcl": []byte(`
include = ["c_test.hcl"]
mock "notes" {
  output = "b"
}
`),
		"c_test.hcl": []byte(`
include = ["b_test.hcl"] # ERROR: Include cycle
`),
		"d_test.hcl": []byte(`
include = "b_test.hcl" # ERROR: Incorrect attribute value type
test "d" {
  inputs = { phase_id = "1" }
  expect { status = "completed" }
}
`),
		"e_test.hcl": []byte(`
include = ["e_test.hcl"] # ERROR: Unknown included file
test "e" {
  inputs = { phase_id = "1" }
  expect { status = "completed" }
}
test "e2" {
  inputs  = { phase_id = "1" }
  include = ["c_tst.hcl"] # ERROR: Unknown included file
  expect { status = "completed" }
}
`),
	}
	_, diags := LoadTests(pb, srcs)
	if diff := cmp.Diff(marks(srcs), diagMarks(diags)); diff != "" {
		var all strings.Builder
		for _, d := range diags {
			fmt.Fprintf(&all, "\n\t%s", d)
		}
		t.Errorf("diagnostics differ from the marks (-marked +got):\n%s\nall diagnostics:%s", diff, all.String())
	}
}
