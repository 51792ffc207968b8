package lang

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// loadString loads one in-memory file and fails the test on any error.
func loadString(t *testing.T, src string) *Playbook {
	t.Helper()
	pb, diags := (&Loader{}).LoadSources(map[string][]byte{"playbook.hcl": []byte(src)}, t.TempDir())
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags)
	}
	return pb
}

// TestExitCode checks the defaults (0 for completed, 1 for anything else)
// and that exit_codes overrides them status by status.
func TestExitCode(t *testing.T) {
	plain := &Playbook{}
	custom := loadString(t, `
playbook "codes" {
  description = "Custom exit codes."
  exit_codes  = { blocked = 2, completed = 3 }
}
`)
	tests := []struct {
		pb     *Playbook
		status string
		want   int
	}{
		{plain, "completed", 0},
		{plain, "failed", 1},
		{plain, "blocked", 1},
		{plain, "", 1},
		{custom, "completed", 3},
		{custom, "blocked", 2},
		{custom, "failed", 1},
		{custom, "halt", 1},
	}
	for _, tt := range tests {
		if got := tt.pb.ExitCode(tt.status); got != tt.want {
			t.Errorf("%s: ExitCode(%q) = %d, want %d", tt.pb.Name, tt.status, got, tt.want)
		}
	}
}

// TestExitCodesInvalid checks that exit codes outside 0..125 and
// fractions are refused.
func TestExitCodesInvalid(t *testing.T) {
	for _, codes := range []string{`{ failed = 126 }`, `{ failed = -1 }`, `{ failed = 1.5 }`, `["a"]`} {
		src := `playbook "codes" {
  exit_codes = ` + codes + `
}
`
		_, diags := (&Loader{}).LoadSources(map[string][]byte{"playbook.hcl": []byte(src)}, t.TempDir())
		if len(diags) != 1 || diags[0].Summary != "Invalid exit_codes" {
			t.Errorf("exit_codes = %s: got %v, want one Invalid exit_codes error", codes, diags)
		}
	}
}

// TestProgressSteps checks that only main steps with a progress label
// count, in declared order (not the order next or gates visit them).
func TestProgressSteps(t *testing.T) {
	pb := loadString(t, `
playbook "progress" {
  description = "Progress labels."
}

step "preflight" {
  next = "execute"
  shell { command = ["true"] }
}

step "plan" {
  progress = "PLAN"
  shell { command = ["true"] }
}

step "execute" {
  progress = "EXECUTE"
  returns  = object({ replan = bool })
  shell {
    command = ["true"]
    parse   = "json"
  }
  gate {
    rule "replan" {
      when = "steps.execute.output.replan"
      goto = "plan"
      max  = 1
      on_exhausted { fail = "halt" }
    }
    otherwise { log = "done" }
  }
}

step "summary" {
  shell { command = ["true"] }
}

step "verify" {
  progress = "VERIFY"
  shell { command = ["true"] }
}

on_failure {
  step "postmortem" {
    progress = "POSTMORTEM"
    shell { command = ["true"] }
  }
}
`)
	var got []string
	for _, s := range pb.ProgressSteps() {
		got = append(got, s.Name+"="+s.Progress)
	}
	want := []string{"plan=PLAN", "execute=EXECUTE", "verify=VERIFY"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ProgressSteps (-want +got):\n%s", diff)
	}
	if n := len((&Playbook{}).ProgressSteps()); n != 0 {
		t.Errorf("an empty playbook has %d progress steps", n)
	}
}

// TestStepLookup checks Step finds main and on_failure steps by name, and
// their Index is the position in their own section.
func TestStepLookup(t *testing.T) {
	pb := loadString(t, `
playbook "lookup" {
  description = "Steps by name."
}
step "a" {
  shell { command = ["true"] }
}
step "b" {
  shell { command = ["true"] }
}
on_failure {
  step "c" {
    shell { command = ["true"] }
  }
}
`)
	for name, want := range map[string]struct {
		index     int
		onFailure bool
	}{"a": {0, false}, "b": {1, false}, "c": {0, true}} {
		s := pb.Step(name)
		if s == nil {
			t.Errorf("Step(%q) is nil", name)
			continue
		}
		if s.Name != name || s.Index != want.index || s.OnFailure != want.onFailure {
			t.Errorf("Step(%q) = {Name %q, Index %d, OnFailure %v}, want index %d on_failure %v", name, s.Name, s.Index, s.OnFailure, want.index, want.onFailure)
		}
	}
	if pb.Step("d") != nil {
		t.Errorf("Step(%q) is not nil", "d")
	}
	if pb.Step("a").Next != pb.Step("b") || pb.Step("b").Next != nil {
		t.Errorf("main steps are not linked a -> b -> end")
	}
}
