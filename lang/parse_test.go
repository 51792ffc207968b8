package lang

import (
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// oneLineSrc has one-line blocks, which the loader parses by rewriting the
// file, followed by multi-line steps.
const oneLineSrc = `playbook "x" { description = "One-line blocks, then ranges." }

step "a" { shell { command = ["a"] } }

step "b" { shell { command = ["b"] } }

step "c" {
  when = "steps.a.exit_code == 0"
  shell {
    command = ["c"]
  }
  gate {
    otherwise {
      goto = "a"
      max  = 1
      on_exhausted { fail = "halt" }
    }
  }
}
`

// TestOneLineBlockDeclRanges checks that the ranges diagnostics use are
// those of the file as written.
func TestOneLineBlockDeclRanges(t *testing.T) {
	pb := loadString(t, oneLineSrc)
	for name, line := range map[string]int{"a": 3, "b": 5, "c": 7} {
		if got := pb.Step(name).DeclRange.Start.Line; got != line {
			t.Errorf("step %s: DeclRange line %d, want %d", name, got, line)
		}
	}
	if got := pb.DeclRange.Start.Line; got != 1 {
		t.Errorf("playbook DeclRange line %d, want 1", got)
	}
}

// TestOneLineBlockRuntimeRanges checks the ranges the interpreter reports
// run-time failures with (actions, expressions, conditions, gates, edges):
// after a one-line block they must still be lines of the file as written.
func TestOneLineBlockRuntimeRanges(t *testing.T) {
	pb := loadString(t, oneLineSrc)
	a, b, c := pb.Step("a"), pb.Step("b"), pb.Step("c")
	tests := []struct {
		what string
		rng  hcl.Range
		line int
	}{
		{"a's shell action", a.Action.Range(), 3},
		{"a's command", a.Action.(*Shell).Command.Range(), 3},
		{"b's shell action", b.Action.Range(), 5},
		{"b's command", b.Action.(*Shell).Command.Range(), 5},
		{"c's when", c.When.Range, 8},
		{"c's shell action", c.Action.Range(), 9},
		{"c's command", c.Action.(*Shell).Command.Range(), 10},
		{"c's gate", c.Gate.DeclRange, 12},
		{"c's goto edge", c.Edges[len(c.Edges)-1].Range, 14},
	}
	for _, tt := range tests {
		if tt.rng.Start.Line != tt.line {
			t.Errorf("%s: line %d, want %d", tt.what, tt.rng.Start.Line, tt.line)
		}
	}
}
