package lang

import (
	"fmt"
	"strings"
	"testing"
)

// bigPlaybook generates a playbook of about lines lines: agents, prompts,
// typed steps and capped gates, like a large real protocol.
func bigPlaybook(lines int) []byte {
	var b strings.Builder
	b.WriteString("playbook \"big\" {\n  description = \"generated\"\n  label = \"Phase ${inputs.phase}\"\n}\n")
	b.WriteString("input \"phase\" {\n  type = string\n}\ninput \"threshold\" {\n  type = number\n  default = 9\n}\n")
	b.WriteString("agent \"worker\" {\n  type = \"general-purpose\"\n  budget = budget.main\n}\n")
	b.WriteString("budget \"main\" {\n  max_response_lines = 200\n  max_summary_lines = 10\n}\n")
	for i := 0; strings.Count(b.String(), "\n") < lines; i++ {
		fmt.Fprintf(&b, `prompt "p%d" {
  template = <<-EOT
    Step %d of phase ${inputs.phase}.
    %%{ if vars.previous != null }Previous score: ${vars.previous}%%{ endif }
    Return JSON: {"score": 8.5, "issues": ["..."]}
  EOT
}
step "s%d" {
  progress = "S%d"
  returns = object({ score = number, issues = list(string) })
  agent "worker" {
    prompt = prompt.p%d
    vars = { previous = try(steps.s%d.output.score, null) }
  }
  gate {
    rule "retry" {
      when = "steps.s%d.output.score < inputs.threshold && len(steps.s%d.output.issues) > 0"
      goto = "s%d"
      max  = 2
      on_exhausted {
        fail = "halt"
      }
    }
    otherwise {
      log = "step %d scored ${steps.s%d.output.score}"
    }
  }
}
`, i, i, i, i, i, i, i, i, i, i, i)
	}
	return []byte(b.String())
}

// BenchmarkLoad2000Lines measures loading and checking a 2,000-line
// playbook (goal: under 50 ms).
func BenchmarkLoad2000Lines(b *testing.B) {
	src := bigPlaybook(2000)
	ld := &Loader{}
	if _, diags := ld.LoadSources(map[string][]byte{"big.hcl": src}, "."); diags.HasErrors() {
		b.Fatal(diags)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		ld.LoadSources(map[string][]byte{"big.hcl": src}, ".")
	}
}

// BenchmarkGateCondition measures one evaluation of a compiled gate
// condition (goal: under 3 µs).
func BenchmarkGateCondition(b *testing.B) {
	pb, diags := (&Loader{}).LoadSources(map[string][]byte{"g.hcl": []byte(`
playbook "g" {}
input "pass_threshold" {
  type    = number
  default = 9
}
step "verify" {
  returns = object({ automated_checks = list(object({ name = string, pass = bool })) })
  shell {
    command = ["true"]
    parse   = "json"
  }
}
step "rate" {
  returns = object({ alignment_score = number })
  shell {
    command = ["true"]
    parse   = "json"
  }
}
step "judge" {
  returns = object({ recommendation = string })
  shell {
    command = ["true"]
    parse   = "json"
  }
  gate {
    rule "pass" {
      when = "all(steps.verify.output.automated_checks, .pass) && steps.rate.output.alignment_score >= inputs.pass_threshold && steps.judge.output.recommendation == 'proceed'"
    }
    otherwise {}
  }
}
`)}, ".")
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	cond := pb.Step("judge").Gate.Rules[0].When
	env := map[string]any{
		"inputs": map[string]any{"pass_threshold": 9.0},
		"steps": map[string]any{
			"verify": map[string]any{"output": map[string]any{"automated_checks": []any{
				map[string]any{"name": "build", "pass": true}, map[string]any{"name": "test", "pass": true}}}},
			"rate":  map[string]any{"output": map[string]any{"alignment_score": 9.2}},
			"judge": map[string]any{"output": map[string]any{"recommendation": "proceed"}},
		},
	}
	if ok, err := cond.Eval(env); err != nil || !ok {
		b.Fatalf("eval = %v, %v", ok, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		cond.Eval(env)
	}
}

// oneLinePlaybook generates n steps written as one-line blocks holding a
// nested block, the form HCL's native syntax rejects.
func oneLinePlaybook(n int) []byte {
	var b strings.Builder
	b.WriteString("playbook \"oneline\" {}\n")
	for i := range n {
		fmt.Fprintf(&b, "step \"s%d\" { shell { command = [\"/bin/true\", \"%d\"] } }\n", i, i)
	}
	return []byte(b.String())
}

// BenchmarkLoadOneLine1000 measures loading 1,000 one-line steps that hold
// a nested block (goal: under 200 ms; it was 30 s, by re-parsing the file
// once per block).
func BenchmarkLoadOneLine1000(b *testing.B) {
	src := oneLinePlaybook(1000)
	ld := &Loader{}
	if _, diags := ld.LoadSources(map[string][]byte{"oneline.hcl": src}, "."); diags.HasErrors() {
		b.Fatal(diags)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		ld.LoadSources(map[string][]byte{"oneline.hcl": src}, ".")
	}
}

// chainPlaybook generates a chain of n shell steps; every hundredth has a
// gate whose rule reads the step before and loops back to it, capped.
func chainPlaybook(n int) []byte {
	var b strings.Builder
	b.WriteString("playbook \"chain\" {}\n")
	for i := range n {
		fmt.Fprintf(&b, "step \"s%d\" {\n  shell { command = [\"/bin/true\"] }\n", i)
		if i > 0 && i%100 == 0 {
			fmt.Fprintf(&b, `  gate {
    rule "again" {
      when = "steps.s%d.exit_code != 0"
      goto = "s%d"
      max  = 2
      on_exhausted { fail = "halt" }
    }
    otherwise {}
  }
`, i-1, i-1)
		}
		b.WriteString("}\n")
	}
	return []byte(b.String())
}

// BenchmarkLoad10000Steps measures loading and checking a chain of 10,000
// steps (goal: under 200 ms and 60 MB).
func BenchmarkLoad10000Steps(b *testing.B) {
	src := chainPlaybook(10000)
	ld := &Loader{}
	if _, diags := ld.LoadSources(map[string][]byte{"chain.hcl": src}, "."); diags.HasErrors() {
		b.Fatal(diags)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		ld.LoadSources(map[string][]byte{"chain.hcl": src}, ".")
	}
}
