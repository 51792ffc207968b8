package lang

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/expr-lang/expr/types"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// A value function called from a condition gives what it gives in a
// value: the same source text, evaluated as HCL and as expr-lang, gives
// the same result.
func TestConditionsCallValueFunctions(t *testing.T) {
	for _, src := range []string{
		`length(["a", "b", "c"])`,
		`contains(["a", "b"], "b")`,
		`contains(["a", "b"], "z")`,
		`keys({"b": 1, "a": 2, "c": 3})`,
		`values({"b": 1, "a": 2, "c": 3})`,
		`merge({"a": 1, "b": 2}, {"b": 3})`,
		`concat(["a"], ["b", "c"])`,
		`coalesce("", "x", "y")`,
		`join(", ", ["a", "b"])`,
		`split(",", "a,b,c")`,
		`replace("a.go b.go", "/[.]go/", ".rs")`,
		`replace("aaa", "a", "b")`,
		`startswith("feature/x", "feature/")`,
		`distinct(["a", "b", "a"])`,
		`lookup({"a": "x"}, "b", "none")`,
		`element(["a", "b"], 3)`,
		`format("%s-%03d", "run", 7)`,
		`trimspace("  x  ")`,
		`sort(["b", "a"])`,
		`upper("x")`,
		`max(1, 5, 3)`,
		`alltrue([true, true])`,
		`anytrue([false, false])`,
		`jsonencode({"a": [1, 2]})`,
		`regex("[0-9]+", "abc123def")`,
		`compact(["a", "", "b"])`,
		`flatten([["a"], ["b", ["c"]]])`,
		`range(3)`,
		`sum([1, 2, 3.5])`,
		`abs(-2)`,
	} {
		t.Run(src, func(t *testing.T) {
			hexpr, diags := hclsyntax.ParseExpression([]byte(src), "value.hcl", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			hv, diags := hexpr.Value(&hcl.EvalContext{Functions: functions})
			if diags.HasErrors() {
				t.Fatalf("as a value: %s", diags)
			}
			c, diags := compileExpr(src, hexpr, newCondEnv(types.Map{}), false)
			if diags.HasErrors() {
				t.Fatalf("as a condition: %s", diags)
			}
			cv, err := c.Value(map[string]any{})
			if err != nil {
				t.Fatalf("as a condition: %v", err)
			}
			if want := condValue(hv); !reflect.DeepEqual(numbersAsFloat(cv), numbersAsFloat(want)) {
				t.Errorf("as a condition %#v, as a value %#v", cv, want)
			}
		})
	}
}

func numbersAsFloat(v any) any {
	switch v := v.(type) {
	case int:
		return float64(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = numbersAsFloat(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = numbersAsFloat(e)
		}
		return out
	}
	return v
}

// The names conditions had before keep working: expr-lang's builtins,
// join in expr's order, and contains as an operator.
func TestConditionBuiltinsStay(t *testing.T) {
	env := map[string]any{"xs": []any{"a", "b"}, "s": "abc"}
	envTypes := types.Map{"xs": types.Array(types.String), "s": types.String}
	for src, want := range map[string]any{
		`len(xs)`:                             2,
		`join(xs, "+")`:                       "a+b",
		`join(xs)`:                            "ab",
		`s contains "b"`:                      true,
		`contains(xs, "a") && s contains "c"`: true,
		`all(xs, # != "")`:                    true,
		`length(xs) - 1`:                      1,
		`xs[length(xs) - 1]`:                  "b",
		`"contains(" + s`:                     "contains(abc",
	} {
		rng := hcl.Range{Filename: "c.hcl"}
		c, diags := compileExpr(src, hcl.StaticExpr(ctyString0(), rng), newCondEnv(envTypes), false)
		if diags.HasErrors() {
			t.Errorf("%s: %s", src, diags)
			continue
		}
		got, err := c.Value(env)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", src, got, want)
		}
	}
}

// A name from the other language gets the name it has here.
func TestFunctionNamesOfTheOtherLanguage(t *testing.T) {
	cond := func(src string) string {
		rng := hcl.Range{Filename: "c.hcl"}
		_, diags := compileExpr(src, hcl.StaticExpr(ctyString0(), rng), newCondEnv(types.Map{"xs": types.Array(types.String)}), true)
		return diags.Error()
	}
	for src, want := range map[string]string{
		`lenght(xs) > 0`:          `there is no function named "lenght". Did you mean "length"?`,
		`try(xs[0], "") == ""`:    `try() is a value function that conditions cannot call: conditions use ?. and ??`,
		`timestamp() != ""`:       `a condition cannot read the clock`,
		`split(xs[0], ",") == []`: `split takes its separator first, as in values: split(",", xs[0])`,
	} {
		if got := cond(src); !strings.Contains(got, want) {
			t.Errorf("condition %s: %s\nwant it to say %s", src, got, want)
		}
	}
	for call, want := range map[string]string{
		"len":       `in a value, did you mean "length"?`,
		"hasPrefix": `did you mean "startswith"?`,
		"filter":    `use a for expression: [for x in LIST : x if CONDITION]`,
		"all":       `alltrue([for x in LIST : CONDITION])`,
		"lenght":    `Did you mean "length"?`,
	} {
		pb := `playbook "p" {}
step "s" {
  shell { command = ["echo", "${` + call + `(["a"])}"] }
}
`
		_, diags := (&Loader{}).LoadSources(map[string][]byte{"playbook.hcl": []byte(pb)}, t.TempDir())
		if got := diags.Error(); !strings.Contains(got, want) {
			t.Errorf("value %s(...): %s\nwant it to say %s", call, got, want)
		}
	}
}

func ctyString0() cty.Value { return cty.StringVal("") }

// spec/language.md's function table is FunctionTable: every function of
// either language, and where it may be called.
func TestSpecFunctionTable(t *testing.T) {
	const path = "../spec/language.md"
	const begin, end = "<!-- functions:begin", "<!-- functions:end -->"
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s ... %s block", path, begin, end)
	}
	i += strings.Index(s[i:], "\n") + 1
	if got, want := s[i:j], FunctionTable(); got != want {
		if *update {
			if err := os.WriteFile(path, []byte(s[:i]+want+s[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's function table is out of date: run go test ./lang -run TestSpecFunctionTable -update", path)
	}
}
