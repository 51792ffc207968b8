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

// TestRootsMatchLang: the names an expression sees at run time are the
// roots lang's Scope lists for where it is, at the top level and in a
// for_each item, in both languages.
func TestRootsMatchLang(t *testing.T) {
	pb := load(t, `
playbook "roots" {}
locals {
  n = 1
}
step "each" {
  for_each = "['a']"
  step "one" {
    when = "local.n == 1 && item == 'a'"
    shell { command = ["true"] }
  }
}
`)
	r, _, err := newRun(pb, Options{Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r.st = &State{Steps: map[string]*StepRecord{"each": {Status: StepRunning}}}
	each := pb.Step("each")
	it := &item{parent: each, value: cty.StringVal("a"), rec: &ItemRecord{Steps: map[string]*StepRecord{"one": {Status: StepPending}}}}
	for name, f := range map[string]*frame{
		"top":  r.top(),
		"item": {item: it, recs: it.rec.Steps, outputs: map[string]cty.Value{}},
	} {
		want := slices.Sorted(slices.Values(scopeOf(f).Roots()))
		if got := slices.Sorted(maps.Keys(r.evalCtx(f, nil).Variables)); !slices.Equal(got, want) {
			t.Errorf("%s: values see %v, lang's scope has %v", name, got, want)
		}
		if got := slices.Sorted(maps.Keys(r.exprEnv(f, pb.Step("one").When))); !slices.Equal(got, want) {
			t.Errorf("%s: conditions see %v, lang's scope has %v", name, got, want)
		}
	}
	if got := slices.Sorted(slices.Values(scopeOf(&frame{item: it}).Roots())); !slices.Contains(got, lang.RootItem) {
		t.Errorf("an item's scope has no item: %v", got)
	}
}
