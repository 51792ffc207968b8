package lang

import (
	"testing"

	"github.com/zclconf/go-cty/cty"
)

const namedTypesSrc = `playbook "named" {}

type "verdict" {
  type    = object({ pass = bool, failures = list(type.failure) })
  example = { pass = true, failures = [] }
}

type "failure" {
  type = object({ criterion = string, evidence = optional(string) })
}

input "known" {
  type    = list(type.failure)
  default = []
}

var "last" {
  type = type.verdict
}

step "first" {
  returns = type.verdict
  shell {
    command = ["verify"]
    parse   = "json"
  }
}

step "second" {
  returns = type.verdict
  example = { pass = false, failures = [{ criterion = "tests", evidence = "1 failing" }] }
  shell {
    command = ["verify"]
    parse   = "json"
  }
}

step "wrapped" {
  returns = object({ verdict = type.verdict })
  shell {
    command = ["verify"]
    parse   = "json"
  }
  gate {
    rule "failed" {
      when = "!steps.wrapped.output.verdict.pass || len(inputs.known) > 0"
      set  = { last = steps.wrapped.output.verdict }
      fail = "failed"
    }
    otherwise {}
  }
}
`

// A named type reads as its definition wherever it is used, and a step
// returning exactly it takes its example unless it has its own.
func TestNamedTypes(t *testing.T) {
	pb := loadString(t, namedTypesSrc)
	failure := cty.ObjectWithOptionalAttrs(map[string]cty.Type{"criterion": cty.String, "evidence": cty.String}, []string{"evidence"})
	verdict := cty.Object(map[string]cty.Type{"pass": cty.Bool, "failures": cty.List(failure)})
	for name, want := range map[string]cty.Type{
		"first":   verdict,
		"second":  verdict,
		"wrapped": cty.Object(map[string]cty.Type{"verdict": verdict}),
	} {
		if got := pb.Step(name).Returns; !got.Equals(want) {
			t.Errorf("step %s returns %s, want %s", name, typeString(got), typeString(want))
		}
	}
	if got := pb.Input("known").Type; !got.Equals(cty.List(failure)) {
		t.Errorf("input type %s", typeString(got))
	}
	if got := pb.vars["last"].Type; !got.Equals(verdict) {
		t.Errorf("var type %s", typeString(got))
	}
	if ex := pb.Step("first").Example; ex == cty.NilVal || !ex.GetAttr("pass").True() {
		t.Errorf("first's example = %#v, want the type's", ex)
	}
	if ex := pb.Step("second").Example; ex == cty.NilVal || ex.GetAttr("pass").True() {
		t.Errorf("second's example = %#v, want its own", ex)
	}
	if ex := pb.Step("wrapped").Example; ex != cty.NilVal {
		t.Errorf("wrapped's example = %#v, want none (its returns is not exactly the type)", ex)
	}
}

// A fork that redefines a type changes every step that uses it.
func TestExtendsOverridesType(t *testing.T) {
	dir := writeTree(t, markRepo(t, t.TempDir()), map[string]string{
		"base/main.hcl": namedTypesSrc,
		"fork/main.hcl": `extends = "../base"

type "failure" {
  type = object({ criterion = string, evidence = optional(string), severity = optional(string) })
}
`,
	})
	pb, diags := Load(dir + "/fork")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	failures := pb.Step("first").Returns.AttributeType("failures").ElementType()
	if !failures.HasAttribute("severity") {
		t.Errorf("first returns failures of %s, want the fork's type with severity", typeString(failures))
	}
}
