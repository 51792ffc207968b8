package lang

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins"
	"github.com/hashicorp/hcl/v2"
)

// typedBase declares a typed step, a for_each step over its list, an
// untyped agent step, a call step and a gate that sets a var, for the
// cases of TestTypeChecks.
const typedBase = `
playbook "typed" {
  description = "Types to misuse."
  exit_codes  = { completed = 0, blocked = 2 }
}

agent "a" {
  type = "claude-code"
}

step "plan" {
  returns = object({ tasks = list(object({ id = string, title = string })), score = number })
  agent "a" {
    prompt = "Plan, as {\"tasks\": [{\"id\": \"t1\", \"title\": \"...\"}], \"score\": 8.5}."
  }
  gate {
    otherwise {
      set = { issues = steps.plan.output.tasks }
    }
  }
}

step "draft" {
  agent "a" {
    prompt = "Draft."
  }
}

step "hash" {
  call "file.sha256" {
    path = "spec.md"
  }
}

step "work" {
  for_each = "steps.plan.output.tasks"
  key      = "item.id"
  step "do" {
    shell { command = ["do", item.id] }
  }
}
`

// TestTypeChecks checks that each kind of type error the loader finds
// before a run names what is wrong and suggests the likely name.
func TestTypeChecks(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		summary string
		detail  string
	}{
		{
			name:    "item field",
			src:     `step "w2" { shell { script = "echo ${steps.plan.output.tasks[0].titel}" } }`,
			summary: "Unsupported attribute",
			detail:  `Did you mean "title"?`,
		},
		{
			name:    "for variable field",
			src:     `output { ids = [for t in steps.plan.output.tasks : t.idd] }`,
			summary: "Unsupported attribute",
			detail:  `Did you mean "id"?`,
		},
		{
			name:    "function argument type",
			src:     `output { s = join("; ", steps.plan.output.score) }`,
			summary: "Invalid function argument",
			detail:  "list of string required",
		},
		{
			name:    "builtin argument",
			src:     `step "h2" { call "file.sha256" { pth = "x" } }`,
			summary: "Unsupported argument",
			detail:  `Did you mean "path"?`,
		},
		{
			name:    "builtin output field",
			src:     `output { h = steps.hash.output.sha265 }`,
			summary: "Unknown output field",
			detail:  `Did you mean "sha256"?`,
		},
		{
			name:    "var nothing sets",
			src:     `output { i = vars.isues }`,
			summary: "Var never set",
			detail:  `Did you mean "issues"?`,
		},
		{
			name:    "field of an agent's text",
			src:     `output { t = steps.draft.output.title }`,
			summary: "Output has no fields",
			detail:  "returns = object(",
		},
		{
			name: "finish status",
			src: `step "end" {
  shell { command = ["x"] }
  gate {
    otherwise { finish = "blokced" }
  }
}`,
			summary: "Status not in exit_codes",
			detail:  `Did you mean "blocked"?`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ld := &Loader{Signatures: builtins.Funcs()}
			_, diags := ld.LoadSources(map[string][]byte{"typed.hcl": []byte(typedBase + tt.src + "\n")}, t.TempDir())
			var errs hcl.Diagnostics
			for _, d := range diags {
				if d.Severity == hcl.DiagError {
					errs = append(errs, d)
				}
			}
			if len(errs) != 1 || errs[0].Summary != tt.summary {
				t.Fatalf("want one error, %q; got:\n%s", tt.summary, errs)
			}
			if !strings.Contains(errs[0].Detail, tt.detail) {
				t.Errorf("Detail = %q, want it to contain %q", errs[0].Detail, tt.detail)
			}
		})
	}
}

// TestTypedBaseIsClean checks that the base of TestTypeChecks loads
// without diagnostics, so that each case's error comes from its own text.
func TestTypedBaseIsClean(t *testing.T) {
	ld := &Loader{Signatures: builtins.Funcs()}
	_, diags := ld.LoadSources(map[string][]byte{"typed.hcl": []byte(typedBase)}, t.TempDir())
	for _, d := range diags {
		t.Error(fmt.Sprint(d))
	}
}
