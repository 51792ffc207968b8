package lang

import (
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// TestAnswerJSONAsCty checks that a mocked answer is the JSON ctyjson
// makes of it, byte for byte, error for error: the run's decoder judges
// the mock by that text, and an error names what could not be printed.
func TestAnswerJSONAsCty(t *testing.T) {
	big1 := new(big.Float).SetPrec(512)
	big1.SetString("123456789012345678901234567890")
	values := []cty.Value{
		cty.NumberIntVal(0), cty.NumberIntVal(-7), cty.NumberIntVal(1 << 62), cty.NumberFloatVal(0.1),
		cty.NumberFloatVal(-2.5e-9), cty.NumberFloatVal(1e30), cty.NumberVal(big1),
		cty.MustParseNumberVal("9.000"), cty.MustParseNumberVal("1e400"), cty.MustParseNumberVal("0.333333333333333333333333"),
		cty.PositiveInfinity, cty.NegativeInfinity,
		cty.StringVal(""), cty.StringVal(`<a href="x">&amp;</a> "q" \ é e` + "\u0301\t\n\u2028"),
		cty.True, cty.False, cty.NullVal(cty.String), cty.NullVal(cty.DynamicPseudoType),
		cty.UnknownVal(cty.String), cty.StringVal("secret").Mark("sensitive"),
		cty.ListValEmpty(cty.Number), cty.ListVal([]cty.Value{cty.NumberIntVal(3), cty.NullVal(cty.Number)}),
		cty.SetVal([]cty.Value{cty.StringVal("b"), cty.StringVal("a")}),
		cty.TupleVal([]cty.Value{cty.StringVal("x"), cty.NumberIntVal(1), cty.EmptyObjectVal}),
		cty.MapVal(map[string]cty.Value{"z": cty.NumberIntVal(1), "a": cty.NumberFloatVal(1.5)}),
		cty.MapValEmpty(cty.Bool),
		cty.ObjectVal(map[string]cty.Value{
			"score": cty.NumberIntVal(8), "verdict": cty.StringVal("pass"), "é": cty.True,
			"issues": cty.ListVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{"line": cty.NumberIntVal(3), "why": cty.NullVal(cty.String)})}),
			"later":  cty.UnknownVal(cty.Number),
		}),
		cty.ObjectVal(map[string]cty.Value{"a": cty.ObjectVal(map[string]cty.Value{"b": cty.ListVal([]cty.Value{cty.NumberFloatVal(2.25)})})}),
		cty.CapsuleVal(cty.Capsule("thing", reflect.TypeFor[int]()), new(int)),
	}
	// A list whose elements are typed any: ctyjson wraps each value with
	// its type.
	values = append(values, cty.ListVal([]cty.Value{cty.NullVal(cty.DynamicPseudoType)}))
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		values = append(values, randomValue(rng, 3))
	}
	for _, v := range values {
		want, wantErr := ctyjson.Marshal(v, v.Type())
		got, gotErr := answerJSON(v)
		if string(got) != string(want) || (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("answerJSON(%#v) = %s, %v; ctyjson: %s, %v", v, got, gotErr, want, wantErr)
		}
	}
}

// randomValue is a random answer-like value: objects, lists, maps and
// tuples of strings, numbers, bools and nulls, depth levels deep at most.
func randomValue(r *rand.Rand, depth int) cty.Value {
	n := 6
	if depth > 0 {
		n = 10
	}
	switch r.IntN(n) {
	case 0:
		return cty.NumberIntVal(r.Int64N(1<<40) - 1<<39)
	case 1:
		return cty.NumberFloatVal((r.Float64() - 0.5) * float64(r.IntN(1e6)))
	case 2:
		return cty.StringVal([]string{"", "a", "<b>", "ü", "x\ny", `"`}[r.IntN(6)])
	case 3:
		return cty.BoolVal(r.IntN(2) == 0)
	case 4:
		return cty.NullVal([]cty.Type{cty.String, cty.Number, cty.List(cty.String)}[r.IntN(3)])
	case 5:
		return cty.NumberIntVal(int64(r.IntN(100)))
	case 6:
		attrs := map[string]cty.Value{}
		for i := range r.IntN(4) {
			attrs[string(rune('a'+i*3%7))+"k"] = randomValue(r, depth-1)
		}
		return cty.ObjectVal(attrs)
	case 7:
		var elems []cty.Value
		for range r.IntN(4) {
			elems = append(elems, randomValue(r, depth-1))
		}
		return cty.TupleVal(elems)
	case 8:
		var elems []cty.Value
		for range 1 + r.IntN(3) {
			elems = append(elems, cty.NumberIntVal(int64(r.IntN(50))))
		}
		if r.IntN(2) == 0 {
			return cty.SetVal(elems)
		}
		return cty.ListVal(elems)
	}
	m := map[string]cty.Value{}
	for i := range 1 + r.IntN(3) {
		m[string(rune('z'-i))] = cty.StringVal(string(rune('A' + r.IntN(26))))
	}
	return cty.MapVal(m)
}
