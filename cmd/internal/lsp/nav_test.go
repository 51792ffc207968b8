package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apl-lang/apl/stdlib"
)

const typed = `playbook "typed" {}

budget "small" {
  max_response_lines = 10
}

type "verdict" {
  type        = object({ pass = bool, note = optional(string) })
  description = "A verdict."
}

agent "judge" {
  type   = "general-purpose"
  budget = budget.small
}

step "judge" {
  returns = type.verdict
  agent "judge" {
    prompt = "Judge; answer {\"pass\": true}."
  }
}
`

func definition(t *testing.T, c *client, uri string, p map[string]any) []Location {
	t.Helper()
	r := c.request("textDocument/definition", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": p})
	b, _ := json.Marshal(r["result"])
	var locs []Location
	json.Unmarshal(b, &locs)
	return locs
}

// TestTypeAndBudgetNames: type.X and budget.X lead to their blocks, hover
// says what they are, and references find every use.
func TestTypeAndBudgetNames(t *testing.T) {
	root := project(t, nil)
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main.hcl"))
	open(c, uri, typed)
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	line := func(sub string) int { return at(typed, sub, 0, 0)["line"].(int) }
	for _, tc := range []struct {
		name  string
		pos   map[string]any
		line  int
		hover string
	}{
		{"type.X", at(typed, "type.verdict", 0, 6), line(`type "verdict"`), "**type** `verdict`: `object`"},
		{"budget.X", at(typed, "budget.small", 0, 8), line(`budget "small"`), "max_response_lines: 10"},
		{"type label", at(typed, `type "verdict"`, 0, 7), line(`type "verdict"`), "- `note`: string (optional)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			locs := definition(t, c, uri, tc.pos)
			if len(locs) != 1 || locs[0].Range.Start.Line != tc.line {
				t.Errorf("definition = %+v, want line %d", locs, tc.line)
			}
			r := c.request("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": tc.pos})
			if got := fmt.Sprint(r["result"]); !strings.Contains(got, tc.hover) {
				t.Errorf("hover = %s, want %q", got, tc.hover)
			}
		})
	}
	r := c.request("textDocument/references", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": at(typed, "type.verdict", 0, 6)})
	var lines []int
	for _, l := range r["result"].([]any) {
		lines = append(lines, rangeOf(l).Start.Line)
	}
	if fmt.Sprint(lines) != fmt.Sprint([]int{line(`type "verdict"`), line("type.verdict")}) {
		t.Errorf("references of type verdict on lines %v", lines)
	}
	r = c.request("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": at(typed, "budget.small", 0, 7)})
	if got := fmt.Sprint(r["result"]); !strings.Contains(got, "label:small") {
		t.Errorf("completion after budget.: %s", got)
	}
}

// TestDefinitionIntoTheStdlib: from a fork of a stdlib playbook, go to
// definition opens the stdlib's file, written out read-only, and a name
// there leads on within it.
func TestDefinitionIntoTheStdlib(t *testing.T) {
	fork := "extends = \"stdlib:phase-runner\"\n\nstep \"extra\" {\n  when = \"steps.locate.status == \\\"completed\\\"\"\n  shell {\n    command = [\"true\"]\n  }\n}\n"
	root := project(t, nil)
	out := t.TempDir()
	c := newClient(t, Options{Loader: aplLoader(root), StdlibDir: out})
	c.request("initialize", map[string]any{})
	uri := pathURI(filepath.Join(root, "main.hcl"))
	open(c, uri, fork)
	c.diagnostics(uri)
	locs := definition(t, c, uri, map[string]any{"line": 0, "character": 14})
	if len(locs) != 1 || !strings.HasSuffix(locs[0].URI, "/phase-runner/playbook.hcl") {
		t.Fatalf("definition of extends: %+v", locs)
	}
	path, _ := uriPath(locs[0].URI)
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm()&0o222 != 0 {
		t.Fatalf("the stdlib's file is not there, read-only: %v %v", info, err)
	}
	want, _ := stdlib.FS().Open("phase-runner/playbook.hcl")
	wantInfo, _ := want.Stat()
	if info.Size() != wantInfo.Size() {
		t.Errorf("the file written out has %d bytes, the stdlib's %d", info.Size(), wantInfo.Size())
	}

	locs = definition(t, c, uri, at(fork, "steps.locate", 0, 7))
	if len(locs) != 1 || !strings.HasSuffix(locs[0].URI, "/phase-runner/steps-1-preflight.hcl") || locs[0].Range.Start.Line != 9 {
		t.Fatalf("definition of an upstream step: %+v, want steps-1-preflight.hcl line 9", locs)
	}
	// The stdlib's file open: names in it lead on, within the stdlib.
	stepsPath, _ := uriPath(locs[0].URI)
	text, _ := os.ReadFile(stepsPath)
	open(c, locs[0].URI, string(text))
	if ds := c.diagnostics(locs[0].URI); len(ds) != 0 {
		t.Errorf("diagnostics of the stdlib's file: %v", ds)
	}
	m := regexp.MustCompile(`steps\.([a-z_]+)\.`).FindSubmatchIndex(text)
	if m == nil {
		t.Fatal("steps.hcl reads no steps.X")
	}
	name := string(text[m[2]:m[3]])
	p := position(text, m[2]+1)
	declLine := position(text, strings.Index(string(text), `step "`+name+`"`)).Line
	locs = definition(t, c, locs[0].URI, map[string]any{"line": p.Line, "character": p.Character})
	if len(locs) != 1 || !strings.HasSuffix(locs[0].URI, "/phase-runner/steps-1-preflight.hcl") || locs[0].Range.Start.Line != declLine {
		t.Errorf("definition of steps.%s within the stdlib: %+v, want line %d", name, locs, declLine)
	}
}

// TestReferencesByTheSyntaxTree: a step's name written in a comment or in
// a description's prose is no reference to it; in a traversal, a
// condition, a goto and a template it is.
func TestReferencesByTheSyntaxTree(t *testing.T) {
	text := strings.Replace(named, `step "plan" {`, "# steps.plan is where it starts\nstep \"plan\" {\n  description = \"Runs before steps.plan is read.\"", 1)
	root := project(t, nil)
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main.hcl"))
	open(c, uri, text)
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	r := c.request("textDocument/references", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": at(text, `goto = "plan"`, 0, 9)})
	var got []string
	for _, l := range r["result"].([]any) {
		got = append(got, fmt.Sprint(rangeOf(l).Start))
	}
	want := []string{
		fmt.Sprint(position([]byte(text), strings.Index(text, `step "plan"`)+6)),
		fmt.Sprint(position([]byte(text), strings.Index(text, "steps.plan.output")+6)),
		fmt.Sprint(position([]byte(text), strings.Index(text, `goto = "plan"`)+8)),
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("references of step plan at %v, want %v", got, want)
	}
}

const templated = `playbook "fixes" {}

agent "debugger" {}
agent "backup" {}

# One debug attempt over a list of issues: written once, used twice.
template "debug" {
  description = "One debug attempt."
  param "issues" {
    type        = list(string)
    description = "What to fix."
  }
  param "label" {
    default = "debug"
  }
  returns = object({ fixed = bool, remaining = list(string) })
  example = { fixed = true, remaining = [] }
  agent "debugger" {
    prompt = "Fix: ${join(", ", param.issues)}. Answer as JSON: {\"fixed\": true or false, \"remaining\": [the issues left]}."
  }
  gate {
    rule "fixed" {
      when = "self.output.fixed"
      log  = "${param.label}: fixed by ${self.agent}"
    }
    otherwise {
      log = "${param.label}: ${length(self.output.remaining)} left"
    }
  }
}

step "tests" {
  use  = template.debug
  with = { issues = ["TestLoad fails"] }
  next = "lint"
}

step "lint" {
  use  = template.debug
  with = { issues = ["flaky", "vet"], label = "lint" }
  agent "backup" {}
}
`

// TestTemplateNames: template.X leads to the template, hover lists its
// params and the steps that use it, and completion after template.
// offers the templates.
func TestTemplateNames(t *testing.T) {
	root := project(t, nil)
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main.hcl"))
	open(c, uri, templated)
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	pos := at(templated, "template.debug", 1, 10)
	locs := definition(t, c, uri, pos)
	if want := at(templated, `template "debug"`, 0, 0)["line"]; len(locs) != 1 || locs[0].Range.Start.Line != want {
		t.Errorf("definition of template.debug: %+v, want line %v", locs, want)
	}
	r := c.request("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos})
	if got := fmt.Sprint(r["result"]); !strings.Contains(got, "param `issues`: `list(string)`, required") || !strings.Contains(got, "used by: `tests`, `lint`") {
		t.Errorf("hover on template.debug: %s", got)
	}
	// param.NAME inside the template leads to its param block.
	pos = at(templated, "param.issues", 0, 7)
	locs = definition(t, c, uri, pos)
	if want := at(templated, `param "issues"`, 0, 0)["line"]; len(locs) != 1 || locs[0].Range.Start.Line != want {
		t.Errorf("definition of param.issues: %+v, want line %v", locs, want)
	}
	r = c.request("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos})
	if got := fmt.Sprint(r["result"]); !strings.Contains(got, "**param** `issues` of template `debug`: `list(string)`, required") {
		t.Errorf("hover on param.issues: %s", got)
	}
	r = c.request("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": at(templated, "param.issues", 0, 6)})
	if got := fmt.Sprint(r["result"]); !strings.Contains(got, "label:issues") || !strings.Contains(got, "label:label") {
		t.Errorf("completion after param.: %s", got)
	}
	r = c.request("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": at(templated, "template.debug", 0, 9)})
	if got := fmt.Sprint(r["result"]); !strings.Contains(got, "label:debug") {
		t.Errorf("completion after template.: %s", got)
	}
}

// TestHoverByTheSyntaxTree: the name under the cursor is read from the
// syntax tree. A step's name in a comment or in a description's prose
// names nothing, so hover says nothing there (reading the text, it showed
// the step); in a traversal inside a template, across lines within
// parentheses and by a string index it names the step or its field; in
// an expr condition (a string to HCL) the text still names it.
func TestHoverByTheSyntaxTree(t *testing.T) {
	text := strings.Replace(named, `step "plan" {`, "# steps.plan is where it starts\nstep \"plan\" {\n  description = \"Runs before steps.plan is read.\"", 1)
	text = strings.Replace(text, "otherwise {}", "otherwise {\n      log = \"${length(steps[\"plan\"].output.tasks)} tasks, ${(steps.plan\n        .status)}\"\n    }", 1)
	root := project(t, nil)
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main.hcl"))
	open(c, uri, text)
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	hover := func(pos map[string]any) string {
		r := c.request("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos})
		if r["result"] == nil {
			return ""
		}
		return fmt.Sprint(r["result"])
	}
	for _, tc := range []struct {
		name string
		pos  map[string]any
		want string // "" for no hover
	}{
		{"comment", at(text, "# steps.plan", 0, 9), ""},
		{"description", at(text, "before steps.plan", 0, 14), ""},
		{"string index", at(text, `steps["plan"]`, 0, 8), "step"},
		{"field after a string index", at(text, `.output.tasks)}`, 0, 10), "tasks"},
		{"function", at(text, "length(", 0, 2), "length"},
		{"across lines", at(text, "(steps.plan\n", 0, 8), "step"},
		{"condition", at(text, "steps.plan.output.tasks) == 0", 0, 8), "step"},
	} {
		if got := hover(tc.pos); tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: hover = %q, want %q", tc.name, got, tc.want)
		}
	}
}
