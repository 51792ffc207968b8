package playtest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// compare lists how the run in res differs from e, in a fixed order:
// status, recommendation, path, visits, items, agents, output.
func compare(e *lang.Expect, res *Result) []string {
	var out []string
	if e.Status != "" && e.Status != res.Status {
		msg := fmt.Sprintf("status: want %q, got %q", e.Status, res.Status)
		if res.Reason != "" {
			msg += " (reason: " + res.Reason + ")"
		}
		out = append(out, msg)
	}
	if e.Recommendation != "" && e.Recommendation != res.Recommendation {
		out = append(out, fmt.Sprintf("recommendation: want %q, got %q", e.Recommendation, res.Recommendation))
	}
	if e.Path != nil && !slices.Equal(e.Path, res.Path) {
		out = append(out, fmt.Sprintf("path: want %v, got %v", e.Path, res.Path))
	}
	visits := map[string]int{}
	for _, s := range res.Path {
		visits[s]++
	}
	for _, s := range slices.Sorted(maps.Keys(e.Visits)) {
		if want, got := e.Visits[s], visits[s]; want != got {
			out = append(out, fmt.Sprintf("visits.%s: want %d, got %d", s, want, got))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e.Items)) {
		if want, got := e.Items[k], res.Items[k]; !slices.Equal(want, got) {
			out = append(out, fmt.Sprintf("items.%s: want %v, got %v", k, want, got))
		}
	}
	for _, s := range slices.Sorted(maps.Keys(e.Agents)) {
		if want, got := e.Agents[s], res.Agents[s]; want != got {
			out = append(out, fmt.Sprintf("agents.%s: want %q, got %q", s, want, got))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(e.Output)) {
		want := e.Output[k]
		got := cty.NullVal(cty.DynamicPseudoType)
		if res.Output != cty.NilVal && !res.Output.IsNull() && res.Output.Type().IsObjectType() && res.Output.Type().HasAttribute(k) {
			got = res.Output.GetAttr(k)
		}
		if !equal(want, got) {
			out = append(out, fmt.Sprintf("output.%s: want %s, got %s", k, show(want), show(got)))
		}
	}
	return out
}

// equal compares values by their structure, not their cty types: the
// tuple a test writes equals the list a step returned, the object it
// writes equals a map, and numbers compare by value.
func equal(a, b cty.Value) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() && b.IsNull()
	}
	if !a.IsWhollyKnown() || !b.IsWhollyKnown() {
		return false
	}
	at, bt := a.Type(), b.Type()
	switch {
	case at == cty.String || at == cty.Bool:
		return at == bt && a.Equals(b).True()
	case at == cty.Number:
		if bt != cty.Number {
			return false
		}
		x, y := a.AsBigFloat(), b.AsBigFloat()
		if x.Cmp(y) == 0 {
			return true
		}
		// The same decimal read at different precisions.
		fx, _ := x.Float64()
		fy, _ := y.Float64()
		return fx == fy
	case sequence(at):
		if !sequence(bt) || a.LengthInt() != b.LengthInt() {
			return false
		}
		ae, be := a.AsValueSlice(), b.AsValueSlice()
		for i := range ae {
			if !equal(ae[i], be[i]) {
				return false
			}
		}
		return true
	case record(at):
		if !record(bt) || a.LengthInt() != b.LengthInt() {
			return false
		}
		am, bm := a.AsValueMap(), b.AsValueMap()
		for k, av := range am {
			bv, ok := bm[k]
			if !ok || !equal(av, bv) {
				return false
			}
		}
		return true
	}
	return a.RawEquals(b)
}

func sequence(t cty.Type) bool { return t.IsListType() || t.IsTupleType() || t.IsSetType() }

func record(t cty.Type) bool { return t.IsObjectType() || t.IsMapType() }

// show renders a value for a mismatch line: JSON, so strings are quoted
// and a list reads as a list whatever its cty type.
func show(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	b, err := builtins.CtyToJSON(v)
	if err != nil {
		return v.GoString()
	}
	return strings.TrimSpace(string(b))
}
