package lang

import (
	"reflect"
	"testing"

	"github.com/expr-lang/expr/checker/nature"
	"github.com/expr-lang/expr/types"
	"github.com/zclconf/go-cty/cty"
)

// TestEnvNature checks that an environment's nature and its unknown
// values made from its section's and its steps' cached ones are those
// expr and cty make from the whole type, so that conditions compile and
// expressions type-check against the same types either way.
func TestEnvNature(t *testing.T) {
	step := cty.ObjectWithOptionalAttrs(map[string]cty.Type{
		"output": cty.Object(map[string]cty.Type{"score": cty.Number, "issues": cty.List(cty.String)}),
		"status": cty.String,
		"note":   cty.String,
	}, []string{"note"})
	steps := map[string]*stepType{}
	stepRoots := map[string]rootType{}
	for name, out := range map[string]cty.Type{"a": step, "b": cty.DynamicPseudoType, "c": cty.List(step)} {
		rt := withFields(StepFields, map[string]rootType{"output": rootTypeOf(out)})
		steps[name] = &stepType{rt: rt, deep: rt.hcl.WithoutOptionalAttributesDeep()}
		stepRoots[name] = rt
	}
	sec := &sectionTypes{
		steps: steps,
		roots: map[string]rootType{
			RootSteps:  objectOf(stepRoots),
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
	for root := range sec.roots {
		if got, want := sec.unknown(root), unknownOf(sec.roots[root].hcl); !got.RawEquals(want) {
			t.Errorf("unknown(%s) = %#v, want %#v", root, got, want)
		}
	}
}
