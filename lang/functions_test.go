package lang

import (
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

func TestFunctions(t *testing.T) {
	now := time.Date(2026, 11, 23, 9, 30, 0, 0, time.FixedZone("CET", 3600))
	funcs := RunFunctions(Impure{Now: func() time.Time { return now }, UUID: func() string { return "u-1" }})
	for _, tc := range []struct{ expr, want string }{
		{`timestamp()`, `"2026-11-23T08:30:00Z"`},
		{`formatdate("YYYY-MM-DD", timestamp())`, `"2026-11-23"`},
		{`uuid()`, `"u-1"`},
		{`sum([1, 2.5, 3])`, `6.5`},
		{`sum([])`, `0`},
		{`alltrue([true, true])`, `true`},
		{`alltrue([])`, `true`},
		{`anytrue([false, true])`, `true`},
		{`anytrue([])`, `false`},
		{`regexall("[0-9]+", "a1 b22 c333")`, `["1","22","333"]`},
		{`regex_replace("a1b22", "[0-9]+", "#")`, `"a#b#"`},
		{`replace("a1b22", "/[0-9]+/", "#")`, `"a#b#"`},
		{`replace("a.b.c", ".", "-")`, `"a-b-c"`},
		{`sha256("abc")`, `"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`},
		{`base64encode("apl")`, `"YXBs"`},
		{`base64decode("YXBs")`, `"apl"`},
		{`sort(setunion(["a"], ["b", "a"]))`, `["a","b"]`},
		{`sort(setintersection(["a", "b"], ["b", "c"]))`, `["b"]`},
		{`startswith("phase-6", "phase-")`, `true`},
		{`endswith("plan.md", ".json")`, `false`},
		{`jsondecode(jsonencode({a = [1]})).a[0]`, `1`},
		{`trimprefix("v1.2", "v")`, `"1.2"`},
		{`strrev("abc")`, `"cba"`},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			e, diags := hclsyntax.ParseExpression([]byte(tc.expr), "f.hcl", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			v, diags := e.Value(&hcl.EvalContext{Functions: funcs})
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := string(mustJSONValue(t, v))
			if got != tc.want {
				t.Errorf("%s = %s, want %s", tc.expr, got, tc.want)
			}
		})
	}
}

// TestImpureFunctionsInConstants checks that timestamp() and uuid() are
// refused where a value is fixed when the playbook loads.
func TestImpureFunctionsInConstants(t *testing.T) {
	for _, name := range ImpureFunctions {
		e, _ := hclsyntax.ParseExpression([]byte(name+"()"), "f.hcl", hcl.InitialPos)
		if _, diags := e.Value(&hcl.EvalContext{Functions: Functions()}); !diags.HasErrors() {
			t.Errorf("%s() in a constant: no error", name)
		}
	}
}

func mustJSONValue(t *testing.T, v cty.Value) []byte {
	t.Helper()
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		t.Fatal(err)
	}
	return b
}
