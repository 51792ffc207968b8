package lang

import (
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestOneScope: conditions, value type checks, the locals' inferred
// types, a for_each item's type and a session's type all see one
// description of what an expression may read. Each case is a mistake
// that one of them used to miss, where the output of a step without
// returns was any: the playbook loaded and the run failed when it got
// there.
func TestOneScope(t *testing.T) {
	const steps = `
playbook "scope" {}

step "list" {
  shell {
    command = ["ls"]
    parse   = "lines"
  }
}

step "count" {
  shell {
    command = ["wc", "-l"]
  }
}
`
	for _, tc := range []struct {
		name, src string
		summary   string // the diagnostic, "" for none
		detail    string
	}{
		{
			// Conditions typed an untyped output as any.
			name: "condition compares a command's text with a number",
			src: `
step "big" {
  when = "steps.count.output > 3"
  shell {
    command = ["true"]
  }
}`,
			summary: "Invalid condition",
			detail:  "mismatched types string and int",
		},
		{
			// A local typed an untyped output as any, so what read the
			// local was not checked.
			name: "local of a command's lines read as an object",
			src: `
locals {
  files = steps.list.output
}

step "show" {
  shell {
    command = ["echo", local.files.name]
  }
}`,
			summary: "Unsupported attribute",
			detail:  "does not have any attributes",
		},
		{
			name: "local of a command's lines in a condition",
			src: `
locals {
  files = steps.list.output
}

step "show" {
  when = "local.files.name == 'x'"
  shell {
    command = ["true"]
  }
}`,
			summary: "Invalid condition",
		},
		{
			// A for_each item was typed only from a declared returns.
			name: "item of a command's lines read as an object",
			src: `
step "each" {
  for_each = "steps.list.output"
  step "one" {
    shell {
      command = ["echo", item.name]
    }
  }
}`,
			summary: "Unsupported attribute",
		},
		{
			// A for_each item was typed only from an input's or a
			// step's returns, not from a local.
			name: "item of a local's list read with a typo",
			src: `
locals {
  tasks = [for f in steps.list.output : { id = f, size = 0 }]
}

step "each" {
  for_each = "local.tasks"
  key      = "item.id"
  step "one" {
    shell {
      command = ["echo", item.nmae]
    }
  }
}`,
			summary: "Unsupported attribute",
			detail:  `It has "id" and "size".`,
		},
		{
			// A session was typed only from a declared returns.
			name: "session from a command's lines",
			src: `
agent "a" {
  type = "general-purpose"
}

step "ask" {
  agent "a" {
    prompt  = "go on"
    session = steps.list.output
  }
}`,
			summary: "Invalid session",
			detail:  "steps.list.output is list(string)",
		},
		{
			name: "what the run makes is accepted",
			src: `
locals {
  files = steps.list.output
}

step "each" {
  when     = "len(local.files) > 0 && steps.count.output != ''"
  for_each = "steps.list.output"
  step "one" {
    shell {
      command = ["echo", item, "${length(local.files)}", trimspace(steps.count.output)]
    }
  }
}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := fixtureLoader.LoadSources(map[string][]byte{"scope.hcl": []byte(steps + tc.src)}, t.TempDir())
			var errs []string
			found := false
			for _, d := range diags {
				if d.Severity != hcl.DiagError {
					continue
				}
				errs = append(errs, d.Error())
				if d.Summary == tc.summary && strings.Contains(d.Detail, tc.detail) {
					found = true
				}
			}
			switch {
			case tc.summary == "" && len(errs) > 0:
				t.Errorf("want no error, got:\n%s", strings.Join(errs, "\n"))
			case tc.summary != "" && !found:
				t.Errorf("want %q saying %q, got:\n%s", tc.summary, tc.detail, strings.Join(errs, "\n"))
			}
		})
	}
}
