package lang

import (
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

const templateSrc = `
playbook "t" {}

agent "debugger" {}
agent "backup" {}

template "debug" {
  param "issues" {
    type = list(string)
  }
  param "label" {
    default = "debug"
  }
  returns = object({ fixed = bool })
  agent "debugger" {
    prompt = <<-EOT
      %{ for i in param.issues ~}
      - ${i}
      %{ endfor ~}
      Answer {"fixed": true}.
    EOT
  }
  check "answered" {
    condition = "self?.output?.fixed != nil && len(param.issues) >= 0"
    message   = "${param.label}: no answer"
  }
  gate {
    rule "fixed" {
      when = "self.output.fixed"
      log  = "${param.label} by ${self.agent}"
    }
  }
}

step "first" {
  use  = template.debug
  with = { issues = ["a"] }
  next = "second"
}

step "second" {
  use  = template.debug
  with = { issues = [for s in ["b", "c"] : upper(s)], label = "second" }
  agent "backup" {}
}
`

// TestTemplateInstances checks that each step using a template is the
// template's body with its own over it, and that param and self read the
// instance's arguments and the instance itself, in both languages.
func TestTemplateInstances(t *testing.T) {
	pb := loadString(t, templateSrc)
	for _, tc := range []struct{ step, agent string }{{"first", "debugger"}, {"second", "backup"}} {
		s := pb.Step(tc.step)
		if s.Template != "debug" {
			t.Errorf("%s: Template = %q, want debug", tc.step, s.Template)
		}
		a, ok := s.Action.(*AgentCall)
		if !ok || a.Agent.Name != tc.agent {
			t.Fatalf("%s: action %v, want agent %s", tc.step, s.Action, tc.agent)
		}
		var names []string
		for _, lv := range s.Locals {
			names = append(names, lv.Name)
		}
		if want := []string{"param.issues", "param.label"}; !slices.Equal(names, want) {
			t.Errorf("%s: locals %v, want the arguments %v", tc.step, names, want)
		}
		// No instance reads param or self any more: each reads its own
		// locals and its own record.
		for _, e := range []hcl.Expression{a.Template, s.Gate.Rules[0].Outcome.Log, s.Checks[0].Message} {
			for _, tr := range e.Variables() {
				switch tr.RootName() {
				case RootParam, RootSelf:
					t.Errorf("%s: %s still reads %s", tc.step, e.Range(), tr.RootName())
				case RootSteps:
					if name := tr[1].(hcl.TraverseAttr).Name; name != tc.step {
						t.Errorf("%s: self reads steps.%s", tc.step, name)
					}
				}
			}
		}
		for _, c := range []*Condition{s.Gate.Rules[0].When, s.Checks[0].Condition} {
			if !slices.Equal(c.Steps, []string{tc.step}) {
				t.Errorf("%s: condition %q reads steps %v, want [%s]", tc.step, c.Source, c.Steps, tc.step)
			}
		}
		if c := s.Checks[0].Condition; !c.Locals {
			t.Errorf("%s: condition %q does not read the arguments (locals)", tc.step, c.Source)
		}
	}
	if got := pb.Template("debug").Uses; !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("Uses = %v", got)
	}
	origins, _, err := pb.Explain("step.second")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range origins {
		fromTemplate := !strings.Contains(o.Addr, ".with.") && o.Addr != "step.second.next"
		if (o.Template == "debug") != fromTemplate {
			t.Errorf("%s: Template = %q", o.Addr, o.Template)
		}
	}
}

// TestTemplateUnused warns of a template no step uses: nothing checks its
// body.
func TestTemplateUnused(t *testing.T) {
	_, diags := (&Loader{}).LoadSources(map[string][]byte{"playbook.hcl": []byte(`
playbook "t" {}
template "idle" {
  shell { command = ["true"] }
}
step "s" {
  shell { command = ["true"] }
}
`)}, t.TempDir())
	if diags.HasErrors() || len(diags) != 1 || diags[0].Summary != "Unused template" {
		t.Errorf("diagnostics %v, want one Unused template warning", diags)
	}
}

// TestTemplateRuleBeforeOtherwise checks that a rule a step adds to its
// template's gate is tried before the template's otherwise, and that a
// rule it names again keeps its place.
func TestTemplateRuleBeforeOtherwise(t *testing.T) {
	pb, diags := (&Loader{}).LoadSources(map[string][]byte{"playbook.hcl": []byte(`
playbook "t" {}
template "check" {
  shell { command = ["true"] }
  gate {
    rule "first" {
      when = "self.status == 'failed'"
      fail = "broken"
    }
    otherwise {
      log = "ok"
    }
  }
}
step "s" {
  use = template.check
  gate {
    rule "added" {
      when = "self.output == 'x'"
      log  = "x"
    }
    rule "first" {
      fail = "still_broken"
    }
  }
}
`)}, t.TempDir())
	if len(diags) > 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	var names []string
	for _, r := range pb.Step("s").Gate.Rules {
		names = append(names, r.Name)
	}
	if want := []string{"first", "added"}; !slices.Equal(names, want) {
		t.Errorf("rules %v, want %v", names, want)
	}
	if pb.Step("s").Gate.Otherwise == nil {
		t.Error("the template's otherwise is gone")
	}
}
