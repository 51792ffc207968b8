package lang

import (
	"reflect"
	"testing"

	"github.com/expr-lang/expr/checker/nature"
	"github.com/expr-lang/expr/types"
	"github.com/zclconf/go-cty/cty"
)

// TestEnvNature checks that an environment's nature made from its
// section's cached root natures is the one expr makes from the whole
// map, so that conditions compile against the same types either way.
func TestEnvNature(t *testing.T) {
	step := cty.ObjectWithOptionalAttrs(map[string]cty.Type{
		"output": cty.Object(map[string]cty.Type{"score": cty.Number, "issues": cty.List(cty.String)}),
		"status": cty.String,
		"note":   cty.String,
	}, []string{"note"})
	sec := &sectionTypes{
		roots: map[string]rootType{
			RootSteps:  objectOf(map[string]rootType{"a": rootTypeOf(step), "b": rootTypeOf(cty.DynamicPseudoType)}),
			RootInputs: objectOf(map[string]rootType{"phase": rootTypeOf(cty.String), "n": rootTypeOf(cty.Number)}),
			RootRun:    withFields(RunFields, nil),
		},
		unknowns: map[string]cty.Value{},
		natures:  map[string]nature.Nature{},
	}
	m := types.Map{
		RootLocal: objectOf(map[string]rootType{"x": rootTypeOf(cty.Map(cty.Bool))}).cond,
		RootVars:  types.Map{types.Extra: types.Any, "v": types.Int},
	}
	for name, rt := range sec.roots {
		m[name] = rt.cond
	}
	for range 2 { // the second time from the cache
		if got, want := envNature(m, sec), m.Nature(); !reflect.DeepEqual(got, want) {
			t.Fatalf("envNature differs from types.Map.Nature:\n got %#v\nwant %#v", got, want)
		}
	}
	extra := types.Map{types.Extra: types.String, RootSteps: sec.roots[RootSteps].cond}
	if got, want := envNature(extra, sec), extra.Nature(); !reflect.DeepEqual(got, want) {
		t.Fatalf("with Extra, envNature differs from types.Map.Nature:\n got %#v\nwant %#v", got, want)
	}
	if v := sec.unknown(RootSteps); !v.Type().Equals(unknownOf(sec.roots[RootSteps].hcl).Type()) || v.IsKnown() {
		t.Fatalf("unknown(steps) = %#v", v)
	}
}
