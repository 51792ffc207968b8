package interp

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
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

// TestStepLocals names values computed from the item once per step, in
// a for_each body: the shell command, the check, the gate's rule and its
// set all read the same evaluation (uuid() is called once per attempt).
func TestStepLocals(t *testing.T) {
	pb := load(t, `
playbook "l" {}
input "tasks" {
  type = list(object({ id = string, spec = string }))
}
var "seen" {
  type    = map(string)
  default = {}
}
step "each" {
  for_each = "inputs.tasks"
  key      = "item.id"
  step "do" {
    locals {
      parts = split(":", item.spec)
      task  = { kind = local.parts[0], arg = join(":", slice(local.parts, 1, length(local.parts))) }
      nonce = uuid()
    }
    progress_start = "${local.task.kind} ${local.task.arg}"
    shell {
      command = ["printf", "%s", local.nonce]
    }
    check "same" {
      condition = "steps.do.output == local.nonce && local.task.kind in ['echo', 'test']"
    }
    gate {
      rule "test" {
        when = "local.task.kind == 'test'"
        set  = { seen = merge(vars.seen, { (item.id) = "test ${local.task.arg} ${local.nonce == steps.do.output}" }) }
      }
      otherwise {
        set = { seen = merge(vars.seen, { (item.id) = "${local.task.kind} ${local.task.arg}" }) }
      }
    }
  }
}
output {
  seen = vars.seen
}
`)
	res, _ := startWith(t, pb, Options{Inputs: map[string]cty.Value{"tasks": cty.TupleVal([]cty.Value{
		cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("t1"), "spec": cty.StringVal("echo:a:b")}),
		cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal("t2"), "spec": cty.StringVal("test:go test ./...")}),
	})}})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	if got, want := string(res.OutputJSON), `{"seen":{"t1":"echo a:b","t2":"test go test ./... true"}}`; got != want {
		t.Errorf("output\n got %s\nwant %s", got, want)
	}
	if lv := pb.Steps[0].ForEach.Steps[0].Locals; len(lv) != 3 || lv[2].Name != "task" || lv[2].Type.FriendlyName() != "object" {
		t.Errorf("step locals %v", lv)
	}
}
