package lang

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSuccessors lists a step's ways out in the order readers meet them:
// the skip, the rules in the order they are tried with each on_exhausted
// after its rule, the way out when no rule matches, and the failure last.
func TestSuccessors(t *testing.T) {
	pb := loadString(t, `
playbook "p" {}

input "go" {
  type    = bool
  default = true
}

step "build" {
  shell { command = ["true"] }
}

step "check" {
  when  = "inputs.go"
  shell { command = ["true"] }
  gate {
    rule "retry" {
      when = "steps.check.exit_code != 0"
      goto = "build"
      max  = 2
      on_exhausted { fail = "halt" }
    }
    rule "done" {
      when   = "steps.check.exit_code == 0"
      finish = "done"
    }
    rule "pass" {
      when = "true"
    }
  }
}
`)
	var got []string
	for _, x := range pb.Step("check").Successors() {
		s := map[Exit]string{ExitSkip: "skip", ExitBody: "body", ExitNext: "next", ExitRule: "rule", ExitExhausted: "exhausted", ExitFailure: "failure"}[x.Exit]
		if x.Rule != nil {
			s += " " + x.Rule.Name
		}
		switch {
		case x.To != nil:
			s += " -> " + x.To.Name
		default:
			s += " -> " + map[End]string{EndSection: "section end", EndFinish: "finish", EndFail: "fail", EndFailure: "step failed"}[x.End]
		}
		got = append(got, s)
	}
	want := []string{
		"skip -> section end", // the last step: past it the run completes
		"rule retry -> build",
		"exhausted retry -> fail",
		"rule done -> finish",
		"rule pass -> section end",
		"next -> section end",
		"failure -> step failed",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Successors (-want +got):\n%s", d)
	}
}
