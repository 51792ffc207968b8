package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

// An error fixture marks each diagnostic it expects on the line the
// diagnostic's Subject starts at, with a trailing comment holding the exact
// Summary:
//
//	goto = "plann" # ERROR: Reference to undeclared step
//	gate {         # WARNING: Gate without otherwise
//
// A line may carry several marks. Inside an expr-lang heredoc, where an HCL
// comment would be part of the condition, the mark is an expr comment
// (// ERROR: ...); inside a prompt file it is plain template text. Marks
// are read from every file the load read, so a prompt file may mark its own
// lines.
var markRE = regexp.MustCompile(`(?:#|//)\s*(ERROR|WARNING):\s*`)

// A mark is one expected (or, for what a load returns, one actual)
// diagnostic, reduced to what fixtures can state.
type mark struct {
	File     string
	Line     int
	Severity string // "ERROR" or "WARNING"
	Summary  string
}

func (m mark) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", m.File, m.Line, m.Severity, m.Summary)
}

// marks returns every mark in the files, sorted.
func marks(srcs map[string][]byte) []mark {
	var out []mark
	for name, src := range srcs {
		for i, line := range strings.Split(string(src), "\n") {
			locs := markRE.FindAllStringSubmatchIndex(line, -1)
			for j, loc := range locs {
				end := len(line)
				if j+1 < len(locs) {
					end = locs[j+1][0]
				}
				out = append(out, mark{
					File:     name,
					Line:     i + 1,
					Severity: line[loc[2]:loc[3]],
					Summary:  strings.TrimSpace(line[loc[1]:end]),
				})
			}
		}
	}
	sortMarks(out)
	return out
}

// diagMarks reduces diagnostics to marks; diagnostics without a Subject get
// line 0 so that they never match a mark.
func diagMarks(diags hcl.Diagnostics) []mark {
	var out []mark
	for _, d := range diags {
		m := mark{Severity: "ERROR", Summary: d.Summary}
		if d.Severity == hcl.DiagWarning {
			m.Severity = "WARNING"
		}
		if d.Subject != nil {
			m.File, m.Line = d.Subject.Filename, d.Subject.Start.Line
		}
		out = append(out, m)
	}
	sortMarks(out)
	return out
}

func sortMarks(ms []mark) {
	sort.Slice(ms, func(i, j int) bool {
		a, b := ms[i], ms[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Severity != b.Severity {
			return a.Severity < b.Severity
		}
		return a.Summary < b.Summary
	})
}

func errorFixtures(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/errors/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no error fixtures in testdata/errors")
	}
	return files
}

// skipKnownBug skips a fixture whose first line is "# BUG: what is wrong":
// it shows a bug in the loader and passes once the bug is fixed and the
// line removed.
func skipKnownBug(t *testing.T, file string) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(src), "\n")
	if bug, ok := strings.CutPrefix(first, "# BUG: "); ok {
		t.Skipf("BUG: %s (%s)", bug, file)
	}
}

// fixtureLoader loads the fixtures with the agent package's driver schema
// and the builtins' signatures, as apl validate does, so that fixtures see
// what a run rejects. It leaves out the builtins' names, so that fixtures
// may call builtins of their own.
var fixtureLoader = &Loader{Drivers: agent.DriverSchema{}, Signatures: builtins.Funcs()}

// TestErrors loads every fixture in testdata/errors and compares the
// diagnostics with the marks in its files: every mark must be matched and
// every diagnostic marked.
func TestErrors(t *testing.T) {
	for _, f := range errorFixtures(t) {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".hcl"), func(t *testing.T) {
			skipKnownBug(t, f)
			pb, diags := fixtureLoader.Load(f)
			want := marks(pb.Sources)
			if len(want) == 0 {
				t.Fatalf("%s marks no diagnostics; every error fixture expects at least one", f)
			}
			got := diagMarks(diags)
			if diff := cmp.Diff(want, got); diff != "" {
				var all strings.Builder
				for _, d := range diags {
					fmt.Fprintf(&all, "\n\t%s", d)
				}
				t.Errorf("diagnostics differ from the marks (-marked +got):\n%s\nall diagnostics:%s", diff, all.String())
			}
		})
	}
}

// TestDiagnosticsHaveSubjects checks that every diagnostic of every fixture
// points at a real place: a file the load read and a line in it.
func TestDiagnosticsHaveSubjects(t *testing.T) {
	valid, err := filepath.Glob("testdata/valid/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(errorFixtures(t), valid...) {
		t.Run(f, func(t *testing.T) {
			skipKnownBug(t, f)
			checkSubjects(t, f)
		})
	}
}

// checkSubjects loads f and checks every diagnostic: a Subject inside a
// file the load read (checkDiagnostics), a Detail, and a Summary without a
// period.
func checkSubjects(t *testing.T, f string) {
	t.Helper()
	pb, diags := fixtureLoader.Load(f)
	checkDiagnostics(t, pb, diags)
	for _, d := range diags {
		if d.Subject == nil {
			t.Errorf("diagnostic %q has no Subject", d.Summary)
		} else if d.Subject.End.Line < d.Subject.Start.Line ||
			d.Subject.End.Line == d.Subject.Start.Line && d.Subject.End.Column < d.Subject.Start.Column {
			t.Errorf("diagnostic %q has a Subject that ends before it starts: %s", d.Summary, d.Subject)
		}
		if d.Detail == "" {
			t.Errorf("diagnostic %q has no Detail", d.Summary)
		}
		if strings.HasSuffix(d.Summary, ".") {
			t.Errorf("the Summary %q ends with a period", d.Summary)
		}
	}
}

// didYouMeanBase declares one of each kind of name for the cases of
// TestDidYouMean to misspell.
const didYouMeanBase = `
playbook "typos" {
  description = "Names to misspell."
}

input "threshold" {
  type    = number
  default = 7
}

budget "research" {
  max_response_lines = 100
}

prompt "research" {
  template = "Research at ${inputs.threshold}."
}

agent "reviewer" {
  budget = budget.research
}

step "plan" {
  agent "reviewer" {
    prompt = prompt.research
  }
}

step "rate" {
  returns = object({ alignment_score = number })
  shell {
    command = ["rate"]
    parse   = "json"
  }
}
`

// TestDidYouMean checks that a misspelt reference of each kind suggests the
// declared name.
func TestDidYouMean(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		builtins []string
		summary  string
		suggest  string
	}{
		{
			name: "goto step",
			src: `step "again" {
  gate {
    otherwise {
      goto = "plna"
      max  = 1
      on_exhausted { fail = "halt" }
    }
  }
}`,
			summary: "Reference to undeclared step",
			suggest: "plan",
		},
		{
			name: "next step",
			src: `step "again" {
  next = "rtae"
  shell { command = ["x"] }
}`,
			summary: "Reference to undeclared step",
			suggest: "rate",
		},
		{
			name:    "step in a template",
			src:     `step "echo" { shell { script = "echo ${steps.rtae.status}" } }`,
			summary: "Reference to undeclared step",
			suggest: "rate",
		},
		{
			name:    "input in a template",
			src:     `step "echo" { shell { script = "echo ${inputs.treshold}" } }`,
			summary: "Reference to undeclared input",
			suggest: "threshold",
		},
		{
			name: "input in a condition",
			src: `step "echo" {
  when = "inputs.treshold > 1"
  shell { command = ["x"] }
}`,
			summary: "Invalid condition",
			suggest: "threshold",
		},
		{
			name:    "input in a mode",
			src:     `mode "lenient" { inputs = { treshold = 5 } }`,
			summary: "Mode sets an undeclared input",
			suggest: "threshold",
		},
		{
			name:    "prompt",
			src:     `step "ask" { agent "reviewer" { prompt = prompt.reserch } }`,
			summary: "Reference to undeclared prompt",
			suggest: "research",
		},
		{
			name: "budget of a step",
			src: `step "ask" {
  agent "reviewer" {
    prompt = "hi"
    budget = budget.reserch
  }
}`,
			summary: "Reference to undeclared budget",
			suggest: "research",
		},
		{
			name:    "budget of an agent",
			src:     `agent "other" { budget = "reserch" }`,
			summary: "Reference to undeclared budget",
			suggest: "research",
		},
		{
			name:    "agent",
			src:     `step "ask" { agent "reveiwer" { prompt = "hi" } }`,
			summary: "Reference to undeclared agent",
			suggest: "reviewer",
		},
		{
			name: "output field in a condition",
			src: `step "check" {
  when = "steps.rate.output.alignmnet_score > 7"
  shell { command = ["x"] }
}`,
			summary: "Invalid condition",
			suggest: "alignment_score",
		},
		{
			name:    "output field in a template",
			src:     `step "check" { shell { script = "echo ${steps.rate.output.alignmnet_score}" } }`,
			summary: "Unknown output field",
			suggest: "alignment_score",
		},
		{
			name:    "step attribute in a template",
			src:     `step "check" { shell { script = "echo ${steps.rate.stauts}" } }`,
			summary: "Unknown step attribute",
			suggest: "status",
		},
		{
			name: "step attribute in a condition",
			src: `step "check" {
  when = "steps.rate.atempts > 1"
  shell { command = ["x"] }
}`,
			summary: "Invalid condition",
			suggest: "attempts",
		},
		{
			name:    "run attribute",
			src:     `output { m = run.mdoe }`,
			summary: "Unknown run attribute",
			suggest: "mode",
		},
		{
			name:    "root variable",
			src:     `output { m = input.threshold }`,
			summary: "Unknown variable",
			suggest: "inputs",
		},
		{
			name:    "driver",
			src:     `agent "coder" { driver = "claude_code" }`,
			summary: "Unknown driver",
			suggest: "claude-code",
		},
		{
			name:     "builtin",
			src:      `step "hash" { call "file.sha265" { path = "x" } }`,
			builtins: []string{"file.sha256", "git.revert"},
			summary:  "Unknown builtin",
			suggest:  "file.sha256",
		},
		{
			name:    "block type",
			src:     `stpe "x" {}`,
			summary: "Unsupported block type",
			suggest: "step",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ld := &Loader{Builtins: tt.builtins, Drivers: agent.DriverSchema{}}
			_, diags := ld.LoadSources(map[string][]byte{"typos.hcl": []byte(didYouMeanBase + tt.src + "\n")}, t.TempDir())
			var errs hcl.Diagnostics
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d)
				}
			}
			if len(errs) != 1 || errs[0].Summary != tt.summary {
				t.Fatalf("want one error, %q; got:\n%s", tt.summary, errs)
			}
			found := errs[0]
			want := fmt.Sprintf("Did you mean %q?", tt.suggest)
			if !strings.Contains(found.Detail, want) {
				t.Errorf("Detail = %q, want it to contain %q", found.Detail, want)
			}
		})
	}
}

// TestDidYouMeanNoBase checks that the base of TestDidYouMean is itself
// clean, so that each case's diagnostic comes from its own text.
func TestDidYouMeanNoBase(t *testing.T) {
	_, diags := (&Loader{}).LoadSources(map[string][]byte{"typos.hcl": []byte(didYouMeanBase)}, t.TempDir())
	if len(diags) > 0 {
		t.Errorf("the base playbook has diagnostics:\n%s", diags)
	}
}

// TestDuplicateDetailArticle: the Detail of a duplicate input reads "A
// input named ..."; it should read "An input named ...".
func TestDuplicateDetailArticle(t *testing.T) {
	src := `
playbook "dup" {
  description = "Two inputs with one name."
}
input "phase" {}
input "phase" {}
step "s" {
  shell { script = "echo ${inputs.phase}" }
}
`
	_, diags := (&Loader{}).LoadSources(map[string][]byte{"dup.hcl": []byte(src)}, t.TempDir())
	for _, d := range diags {
		if d.Summary == "Duplicate input" {
			if !strings.HasPrefix(d.Detail, "An input named") {
				t.Errorf("Detail = %q, want it to start with %q", d.Detail, "An input named")
			}
			return
		}
	}
	t.Fatalf("no Duplicate input diagnostic; got:\n%s", diags)
}

// TestSingleBlockSaysWhereTheFirstIs: every block a playbook may have
// once says, on a second one, the same thing in the same words, and where
// the first is.
func TestSingleBlockSaysWhereTheFirstIs(t *testing.T) {
	_, diags := fixtureLoader.Load("testdata/errors/single_blocks.hcl")
	firsts := map[string]int{"limits": 11, "circuit_breaker": 19, "state": 27, "finally": 35}
	for _, d := range diags {
		kind, ok := strings.CutPrefix(d.Summary, "Duplicate ")
		if !ok {
			continue
		}
		kind = strings.TrimSuffix(kind, " block")
		want := fmt.Sprintf("A playbook has at most one %s block; the first is at testdata/errors/single_blocks.hcl:%d,1-", kind, firsts[kind])
		if !strings.HasPrefix(d.Detail, want) {
			t.Errorf("%s: Detail = %q, want it to start with %q", d.Summary, d.Detail, want)
		}
		delete(firsts, kind)
	}
	if len(firsts) > 0 {
		t.Errorf("no duplicate diagnostic for %v; got:\n%s", firsts, diags)
	}
}
