package interp

import (
	"maps"
	"slices"
	"testing"

	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// What expressions see of a step and of the run is typed by lang's field
// tables when a playbook loads and built by interp when it runs: the two
// must name the same fields with the same types, or a condition that
// validate accepted fails at run time.
func TestFieldsMatchLang(t *testing.T) {
	r := &run{st: &State{}, vars: map[string]cty.Value{}, inputs: cty.EmptyObjectVal}
	r.host = newLocalHost(Options{})
	exit := 3
	step := stepValue(&StepRecord{Status: StepCompleted, Attempts: 2, ExitCode: &exit}, cty.StringVal("x"), cty.StringVal("raw"))
	for name, v := range map[string]struct {
		val    cty.Value
		fields map[string]lang.Field
		extra  []string
	}{
		"steps.X": {step, lang.StepFields, []string{"output"}},
		"run":     {r.runValue(true), lang.RunFields, nil},
	} {
		got := slices.Sorted(maps.Keys(v.val.AsValueMap()))
		want := slices.Sorted(slices.Values(append(slices.Collect(maps.Keys(v.fields)), v.extra...)))
		if !slices.Equal(got, want) {
			t.Errorf("%s: interp builds %v, lang declares %v", name, got, want)
			continue
		}
		for f, decl := range v.fields {
			a := v.val.GetAttr(f)
			if !a.IsNull() && decl.Type != cty.DynamicPseudoType && !a.Type().Equals(decl.Type) {
				t.Errorf("%s.%s: interp gives %s, lang declares %s", name, f, a.Type().FriendlyName(), decl.Type.FriendlyName())
			}
		}
		env := lang.ExprFields(v.val, v.fields)
		for f, decl := range v.fields {
			if _, isInt := env[f].(int); decl.Whole && env[f] != nil && !isInt {
				t.Errorf("%s.%s: conditions see %T, lang types it as a whole number", name, f, env[f])
			}
		}
	}
}
