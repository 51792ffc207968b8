package interp

import (
	"testing"
)

// TestLocals parses a plan once, in a local, for a for_each, a condition
// and the output: no gate set, and nothing stored in the state.
func TestLocals(t *testing.T) {
	pb := load(t, `
playbook "l" {}
locals {
  tasks   = [for m in regexall("<task id=\"([^\"]+)\">([^<]*)</task>", steps.plan.output) : { id = m[0], title = trimspace(m[1]) }]
  ids     = [for t in local.tasks : t.id]
  summary = "${length(local.tasks)} tasks: ${join(", ", local.ids)}"
  early   = steps.plan.output
}
step "plan" {
  returns = string
  shell {
    script = "printf '<task id=\"t1\">Fix typo</task>\\n<task id=\"t2\">Add test</task>\\n'"
  }
}
step "each" {
  when     = "len(local.tasks) == 2 && local.tasks[0].id == 't1'"
  for_each = "local.tasks"
  key      = "item.id"
  step "do" {
    shell { command = ["echo", item.title, local.summary] }
  }
}
output {
  summary = local.summary
  done    = steps.each.output.completed
  first   = local.tasks[0].title
}
`)
	res, _ := startWith(t, pb, Options{})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	if got, want := string(res.OutputJSON), `{"done":2,"first":"Fix typo","summary":"2 tasks: t1, t2"}`; got != want {
		t.Errorf("output\n got %s\nwant %s", got, want)
	}
	if lv := pb.Local("tasks"); lv.Type.FriendlyName() != "list of object" {
		t.Errorf("local.tasks has type %s", lv.Type.FriendlyName())
	}
	st, _, _ := ReadRun(res.Dir)
	if len(st.Vars) != 0 {
		t.Errorf("vars %v: locals are not stored", st.Vars)
	}
}
