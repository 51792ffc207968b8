package interp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// finallyPlaybook ends in the way its input says, and its finally step
// writes a report of how it ended, once.
const finallyPlaybook = `
playbook "f" {
  exit_codes = { completed = 0, blocked = 2, gate_failed = 4 }
}
input "end" {}
limits { max_retries = 1 }
step "work" {
  retry { max = 3 }
  shell { script = "[ ${inputs.end} != trip ]" }
  gate {
    rule "blocked" {
      when   = "inputs.end == 'blocked'"
      finish = "blocked"
      reason = "blocked on purpose"
    }
    rule "fail" {
      when   = "inputs.end == 'fail'"
      fail   = "gate_failed"
      reason = "failed on purpose"
    }
    otherwise {}
  }
}
on_failure {
  step "alert" {
    shell { command = ["true"] }
  }
}
finally {
  step "report" {
    shell {
      script = "echo '${run.status} ${run.recommendation} ${steps.alert.status}' >> report.txt"
    }
  }
}
output { status = run.status }
`

func TestFinallyRunsAfterEveryEnding(t *testing.T) {
	pb := load(t, finallyPlaybook)
	for _, tc := range []struct {
		end, status, report string
		exit                int
	}{
		{"ok", StatusCompleted, "completed  pending", 0},
		{"blocked", "blocked", "blocked  pending", 2},
		{"fail", StatusFailed, "failed gate_failed completed", 4},
		{"trip", StatusFailed, "failed halt completed", 1},
	} {
		t.Run(tc.end, func(t *testing.T) {
			dir := t.TempDir()
			res, _ := startWith(t, pb, Options{Workdir: dir, Inputs: map[string]cty.Value{"end": cty.StringVal(tc.end)}})
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s (%s)", res.Status, tc.status, res.Reason)
			}
			b, err := os.ReadFile(filepath.Join(dir, "report.txt"))
			if err != nil || strings.TrimSpace(string(b)) != tc.report {
				t.Errorf("report %q, want %q (%v)", b, tc.report, err)
			}
			if code := pb.ExitCodeOf(res.Status, res.Recommendation); code != tc.exit {
				t.Errorf("exit code %d, want %d", code, tc.exit)
			}
		})
	}
}

// TestFinallyResumes pauses a run in its finally steps: it keeps its
// status, and resume goes on with the finally steps only.
func TestFinallyResumes(t *testing.T) {
	pb := load(t, `
playbook "f" {}
step "work" {
  shell { script = "echo work >> log" }
  gate {
    otherwise { finish = "shipped" }
  }
}
finally {
  step "confirm" {
    ask {
      question = "Publish the report?"
      options  = ["yes", "no"]
    }
  }
  step "report" {
    shell { script = "echo 'report ${run.status} ${steps.confirm.output}' >> log" }
  }
}
`)
	dir := t.TempDir()
	res, _ := startWith(t, pb, Options{Workdir: dir})
	if res.Status != StatusWaiting {
		t.Fatalf("status %s (%s)", res.Status, res.Reason)
	}
	st, _, err := ReadRun(res.Dir)
	if err != nil || st.Meta.Status != "shipped" || st.Meta.FinallyStep != "confirm" {
		t.Fatalf("state: status %q, finally step %q (%v)", st.Meta.Status, st.Meta.FinallyStep, err)
	}
	res, err = Resume(context.Background(), pb, res.Dir, Options{NoSync: true, Workdir: dir, Answers: map[string]string{"confirm": "yes"}})
	if err != nil || res.Status != "shipped" {
		t.Fatalf("resume: %v, status %v", err, res)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "log"))
	if got := string(b); got != "work\nreport shipped yes\n" {
		t.Errorf("log %q", got)
	}
}
