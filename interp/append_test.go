package interp

import (
	"strings"
	"testing"
)

// append adds to vars: a list's elements at the end, an object's
// attributes into a map, by the same rule under each name; a step may
// carry set, append and log without a gate.
func TestAppendAndStepActions(t *testing.T) {
	pb := load(t, `
playbook "a" {}
var "notes" {
  type    = list(string)
  default = ["start"]
}
step "tasks" {
  for_each    = "['t1', 't2']"
  key         = "item"
  concurrency = 1
  step "work" {
    shell { command = ["echo", "done ${item}"] }
    append = {
      notes    = [trimspace(steps.work.output)]
      feedback = { (item) = [{ attempt = item_attempt, summary = trimspace(steps.work.output) }] }
    }
  }
}
step "again" {
  shell { command = ["true"] }
  set    = { rounds = 2 }
  append = { feedback = { t1 = [{ attempt = 2, summary = "again" }] }, counts = { t1 = 1 } }
  log    = "t1 has ${length(vars.feedback.t1)} entries"
}
output {
  notes    = vars.notes
  t1       = [for f in vars.feedback.t1 : f.summary]
  t2       = length(vars.feedback.t2)
  rounds   = vars.rounds
  counts   = vars.counts
}
`)
	res, rec := startWith(t, pb, Options{})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	want := `{"counts":{"t1":1},"notes":["start","done t1","done t2"],"rounds":2,"t1":["done t1","again"],"t2":1}`
	if got := string(res.OutputJSON); got != want {
		t.Errorf("output %s\nwant   %s", got, want)
	}
	logged := false
	for _, e := range rec.events {
		if e.Type == EventLog && e.Message == "t1 has 2 entries" {
			logged = true
		}
	}
	if !logged {
		t.Error("the step's own log was not written after its set and append")
	}
}

// Appending a list to a value that is not a list fails the step, saying
// what the var holds.
func TestAppendToAnotherKind(t *testing.T) {
	pb := load(t, `
playbook "a" {}
step "one" {
  shell { command = ["true"] }
  set = { n = "text" }
}
step "two" {
  shell { command = ["true"] }
  append = { n = ["more"] }
}
`)
	res, _ := startWith(t, pb, Options{})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "vars.n is string; append adds a list only to a list") {
		t.Fatalf("status %s, reason %q", res.Status, res.Reason)
	}
}
