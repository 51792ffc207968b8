package lang

import (
	"strings"
	"testing"

	"github.com/expr-lang/expr/parser"
)

// condPlaybook declares a gate whose rules read inputs, step outputs,
// step fields and run fields.
const condPlaybook = `
playbook "conds" {
  description = "Conditions to evaluate."
}

input "pass_threshold" {
  type    = number
  default = 9
  validation {
    condition = "value >= 0 && value <= 10"
    message   = "a score out of 10"
  }
}

step "rate" {
  returns = object({
    alignment_score = number
    checks          = list(object({ name = string, pass = bool }))
    recommendation  = string
  })
  shell {
    command = ["rate"]
    parse   = "json"
  }
  gate {
    rule "pass" {
      when = <<-EXPR
        all(steps.rate.output.checks, .pass)
        && steps.rate.output.alignment_score >= inputs.pass_threshold
        && steps.rate.output.recommendation == 'proceed'
      EXPR
      finish = "completed"
    }
    rule "retry" {
      when = "steps.rate.attempts < 3 && run.mode != 'strict'"
      goto = "rate"
      max  = 3
      on_exhausted { fail = "halt" }
    }
    otherwise { fail = "halt" }
  }
}
`

// TestConditionEval runs compiled conditions against sample run states
// shaped as interp builds them.
func TestConditionEval(t *testing.T) {
	pb := loadString(t, condPlaybook)
	gate := pb.Step("rate").Gate
	pass, retry := gate.Rules[0].When, gate.Rules[1].When
	if pass == nil || retry == nil {
		t.Fatal("the rules' conditions were not compiled")
	}
	if !strings.Contains(pass.Source, "all(steps.rate.output.checks, .pass)") {
		t.Errorf("Source = %q, want the heredoc's text", pass.Source)
	}
	wantLine := strings.Count(condPlaybook[:strings.Index(condPlaybook, "<<-EXPR")], "\n") + 1
	if pass.Range.Filename != "playbook.hcl" || pass.Range.Start.Line != wantLine {
		t.Errorf("Range = %s, want playbook.hcl line %d", pass.Range, wantLine)
	}
	env := func(score float64, checks []bool, rec string, attempts int, mode string) map[string]any {
		var cs []any
		for i, p := range checks {
			cs = append(cs, map[string]any{"name": string(rune('a' + i)), "pass": p})
		}
		return map[string]any{
			"inputs": map[string]any{"pass_threshold": 9.0},
			"steps": map[string]any{"rate": map[string]any{
				"status":   "ok",
				"attempts": attempts,
				"output":   map[string]any{"alignment_score": score, "checks": cs, "recommendation": rec},
			}},
			"run":  map[string]any{"mode": mode},
			"vars": map[string]any{},
		}
	}
	tests := []struct {
		name string
		cond *Condition
		env  map[string]any
		want bool
	}{
		{"pass", pass, env(9.5, []bool{true, true}, "proceed", 1, ""), true},
		{"pass at the threshold", pass, env(9, []bool{true}, "proceed", 1, ""), true},
		{"pass with no checks", pass, env(9, nil, "proceed", 1, ""), true},
		{"below threshold", pass, env(8.9, []bool{true}, "proceed", 1, ""), false},
		{"a failing check", pass, env(10, []bool{true, false}, "proceed", 1, ""), false},
		{"judge says halt", pass, env(10, []bool{true}, "halt", 1, ""), false},
		{"retry", retry, env(0, nil, "", 2, "lenient"), true},
		{"retry exhausted", retry, env(0, nil, "", 3, "lenient"), false},
		{"retry in strict mode", retry, env(0, nil, "", 1, "strict"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.cond.Eval(tt.env)
			if err != nil {
				t.Fatalf("Eval: %v", err)
			}
			if got != tt.want {
				t.Errorf("Eval = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestConditionEvalValidation runs an input's validation, which sees the
// value as value.
func TestConditionEvalValidation(t *testing.T) {
	pb := loadString(t, condPlaybook)
	in := pb.Input("pass_threshold")
	if len(in.Validations) != 1 || in.Validations[0].Condition.Program == nil {
		t.Fatalf("validation not compiled: %+v", in.Validations)
	}
	v := in.Validations[0]
	if v.Message != "a score out of 10" {
		t.Errorf("Message = %q", v.Message)
	}
	for value, want := range map[float64]bool{0: true, 7.5: true, 10: true, 10.5: false, -1: false} {
		got, err := v.Condition.Eval(map[string]any{"value": value, "inputs": map[string]any{"pass_threshold": value}})
		if err != nil {
			t.Fatalf("Eval(%v): %v", value, err)
		}
		if got != want {
			t.Errorf("validation of %v = %v, want %v", value, got, want)
		}
	}
}

// TestConditionEvalError checks that a run state of the wrong shape is an
// error, not a panic or a silent false.
func TestConditionEvalError(t *testing.T) {
	pb := loadString(t, condPlaybook)
	pass := pb.Step("rate").Gate.Rules[0].When
	_, err := pass.Eval(map[string]any{
		"inputs": map[string]any{"pass_threshold": 9.0},
		"steps":  map[string]any{"rate": map[string]any{"output": map[string]any{"checks": "not a list"}}},
	})
	if err == nil {
		t.Errorf("Eval with checks as a string succeeded; want an error")
	}
}

// Only a condition that may read run.events has Run set: the interpreter
// builds the event list (up to a thousand events) for those alone.
func TestConditionReadsRunEvents(t *testing.T) {
	for src, want := range map[string]bool{
		"run.circuit_breaker.state == 'open'":  false,
		"run.tokens > 100 && run.attempts < 3": false,
		"len(run.events) > 0":                  true,
		"run['events'] != nil":                 true,
		"any(run.events, {.event == 'x'})":     true,
		"steps.a.output == 'x'":                false,
	} {
		tree, err := parser.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := readsRunEvents(tree.Node); got != want {
			t.Errorf("%s: reads run.events = %v, want %v", src, got, want)
		}
	}
}
