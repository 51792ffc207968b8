package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// rateType is the returns type of the phase runner's rating step, roughly.
var rateType = cty.ObjectWithOptionalAttrs(map[string]cty.Type{
	"alignment_score": cty.Number,
	"verdict":         cty.String,
	"passed":          cty.Bool,
	"scorecard": cty.List(cty.Object(map[string]cty.Type{
		"criterion": cty.String,
		"score":     cty.Number,
	})),
	"notes": cty.String,
}, []string{"notes"})

func TestSchema(t *testing.T) {
	tests := []struct {
		name string
		typ  cty.Type
		want string
	}{
		{name: "string", typ: cty.String, want: `{"type":"string"}`},
		{name: "number", typ: cty.Number, want: `{"type":"number"}`},
		{name: "bool", typ: cty.Bool, want: `{"type":"boolean"}`},
		{name: "any", typ: cty.DynamicPseudoType, want: `{}`},
		{name: "list", typ: cty.List(cty.String), want: `{"items":{"type":"string"},"type":"array"}`},
		{name: "set", typ: cty.Set(cty.Number), want: `{"items":{"type":"number"},"type":"array","uniqueItems":true}`},
		{name: "map", typ: cty.Map(cty.Bool), want: `{"additionalProperties":{"type":"boolean"},"type":"object"}`},
		{
			name: "tuple",
			typ:  cty.Tuple([]cty.Type{cty.String, cty.Number}),
			want: `{"maxItems":2,"minItems":2,"prefixItems":[{"type":"string"},{"type":"number"}],"type":"array"}`,
		},
		{
			name: "object with optional attribute",
			typ: cty.ObjectWithOptionalAttrs(map[string]cty.Type{
				"b": cty.Number, "a": cty.String, "c": cty.List(cty.DynamicPseudoType),
			}, []string{"c"}),
			want: `{"additionalProperties":true,"properties":{"a":{"type":"string"},"b":{"type":"number"},"c":{"items":{},"type":"array"}},"required":["a","b"],"type":"object"}`,
		},
		{
			name: "object of optionals only has no required",
			typ:  cty.ObjectWithOptionalAttrs(map[string]cty.Type{"a": cty.String}, []string{"a"}),
			want: `{"additionalProperties":true,"properties":{"a":{"type":"string"}},"type":"object"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(Schema(tt.typ))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Schema() =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		typ  cty.Type
		want cty.Value
	}{
		{
			name: "rating with decimal score kept, extras dropped, optional null",
			raw:  `{"alignment_score": 8.5, "verdict": "PASS", "passed": true, "extra": 1, "scorecard": [{"criterion": "tests", "score": 9}]}`,
			typ:  rateType,
			want: cty.ObjectVal(map[string]cty.Value{
				"alignment_score": cty.MustParseNumberVal("8.5"),
				"verdict":         cty.StringVal("PASS"),
				"passed":          cty.True,
				"scorecard": cty.ListVal([]cty.Value{cty.ObjectVal(map[string]cty.Value{
					"criterion": cty.StringVal("tests"), "score": cty.NumberIntVal(9),
				})}),
				"notes": cty.NullVal(cty.String),
			}),
		},
		{name: "empty list", raw: `[]`, typ: cty.List(cty.String), want: cty.ListValEmpty(cty.String)},
		{name: "set", raw: `["a", "b", "a"]`, typ: cty.Set(cty.String), want: cty.SetVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b")})},
		{name: "map", raw: `{"x": 1, "y": 2}`, typ: cty.Map(cty.Number), want: cty.MapVal(map[string]cty.Value{"x": cty.NumberIntVal(1), "y": cty.NumberIntVal(2)})},
		{name: "empty map", raw: `{}`, typ: cty.Map(cty.Number), want: cty.MapValEmpty(cty.Number)},
		{name: "tuple", raw: `["a", 1]`, typ: cty.Tuple([]cty.Type{cty.String, cty.Number}), want: cty.TupleVal([]cty.Value{cty.StringVal("a"), cty.NumberIntVal(1)})},
		{name: "list of any unifies", raw: `[1, 2]`, typ: cty.List(cty.DynamicPseudoType), want: cty.ListVal([]cty.Value{cty.NumberIntVal(1), cty.NumberIntVal(2)})},
		{name: "any keeps the implied type", raw: `{"a": [1, "x"]}`, typ: cty.DynamicPseudoType, want: cty.ObjectVal(map[string]cty.Value{"a": cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.StringVal("x")})})},
		{name: "big number keeps precision", raw: `12345678901234567890.5`, typ: cty.Number, want: cty.MustParseNumberVal("12345678901234567890.5")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode(json.RawMessage(tt.raw), tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			if !got.RawEquals(tt.want) {
				t.Errorf("Decode() = %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestDecodeProblems(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		typ  cty.Type
		want []Problem
	}{
		{
			name: "all problems at once",
			raw:  `{"alignment_score": "8.5", "passed": "yes", "scorecard": [{"criterion": "a", "score": 1}, {"criterion": "b"}, {"criterion": 3, "score": "9"}]}`,
			typ:  rateType,
			want: []Problem{
				{Path: ".alignment_score", Msg: "expected number, got string"},
				{Path: ".passed", Msg: "expected bool, got string"},
				{Path: ".scorecard[1].score", Msg: "missing required field (number)"},
				{Path: ".scorecard[2].criterion", Msg: "expected string, got number"},
				{Path: ".scorecard[2].score", Msg: "expected number, got string"},
				{Path: ".verdict", Msg: "missing required field (string)"},
			},
		},
		{
			name: "root of the wrong kind",
			raw:  `[1]`,
			typ:  rateType,
			want: []Problem{{Path: "", Msg: "expected object, got array"}},
		},
		{
			name: "null for a required field",
			raw:  `{"a": null}`,
			typ:  cty.Object(map[string]cty.Type{"a": cty.String}),
			want: []Problem{{Path: ".a", Msg: "expected string, got null"}},
		},
		{
			name: "map element",
			raw:  `{"x": 1, "y": true}`,
			typ:  cty.Map(cty.Number),
			want: []Problem{{Path: `["y"]`, Msg: "expected number, got bool"}},
		},
		{
			name: "tuple length",
			raw:  `[1]`,
			typ:  cty.Tuple([]cty.Type{cty.Number, cty.Number}),
			want: []Problem{{Path: "", Msg: "expected 2 elements, got 1"}},
		},
		{
			name: "list of any with mixed elements",
			raw:  `[1, {"a": 1}]`,
			typ:  cty.List(cty.DynamicPseudoType),
			want: []Problem{{Path: "", Msg: "cannot read as list of any: all list elements must have the same type"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(json.RawMessage(tt.raw), tt.typ)
			var re *ReturnsError
			if !errors.As(err, &re) {
				t.Fatalf("Decode() error = %v, want a *ReturnsError", err)
			}
			if diff := cmp.Diff(tt.want, re.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReturnsErrorListsProblems(t *testing.T) {
	_, err := Decode(json.RawMessage(`{"scorecard": [{"criterion": "a", "score": "high"}]}`), rateType)
	want := "returns: 4 problems:\n" +
		"\t.alignment_score: missing required field (number)\n" +
		"\t.passed: missing required field (bool)\n" +
		"\t.scorecard[0].score: expected number, got string\n" +
		"\t.verdict: missing required field (string)"
	if err == nil || err.Error() != want {
		t.Fatalf("error =\n%v\nwant\n%s", err, want)
	}
	_, err = Decode(json.RawMessage(`"x"`), cty.Number)
	if want := "returns: (root): expected number, got string"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestDecodeSyntaxError(t *testing.T) {
	for _, raw := range []string{`{"a":`, `{"a": 1} {"b": 2}`, ``} {
		_, err := Decode(json.RawMessage(raw), cty.DynamicPseudoType)
		var re *ReturnsError
		if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "invalid JSON") {
			t.Errorf("Decode(%q) error = %v, want a plain invalid JSON error", raw, err)
		}
	}
}

func TestJSONToValue(t *testing.T) {
	got, err := JSONToValue([]byte(`{"n": 8.5, "s": "x", "b": false, "l": [1, "a"], "o": {}, "z": null}`))
	if err != nil {
		t.Fatal(err)
	}
	want := cty.ObjectVal(map[string]cty.Value{
		"n": cty.MustParseNumberVal("8.5"),
		"s": cty.StringVal("x"),
		"b": cty.False,
		"l": cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.StringVal("a")}),
		"o": cty.EmptyObjectVal,
		"z": cty.NullVal(cty.DynamicPseudoType),
	})
	if !got.RawEquals(want) {
		t.Errorf("JSONToValue() = %#v\nwant %#v", got, want)
	}
}

func TestSchemaWrapRoundTrip(t *testing.T) {
	list := Schema(cty.List(cty.String))
	wrapped, ok := objectSchema(list)
	if !ok || wrapped["type"] != "object" {
		t.Fatalf("objectSchema(list) = %v, %v", wrapped, ok)
	}
	if got := unwrap(json.RawMessage(`{"value": ["a"]}`), true); string(got) != `["a"]` {
		t.Errorf("unwrap = %s", got)
	}
	obj := Schema(rateType)
	if same, ok := objectSchema(obj); ok || same["type"] != "object" {
		t.Errorf("objectSchema(object) wrapped it")
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"alignment_score": 8.5, "verdict": "PASS", "passed": true, "scorecard": []}`, `[1, "a", null]`, `{"a": {"b": [{}]}}`, `1e999999`} {
		f.Add(s)
	}
	types := []cty.Type{
		rateType, cty.DynamicPseudoType, cty.List(cty.DynamicPseudoType), cty.Set(cty.DynamicPseudoType),
		cty.Map(cty.List(cty.Number)), cty.Set(cty.Object(map[string]cty.Type{"a": cty.DynamicPseudoType})),
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, typ := range types {
			v, err := Decode(json.RawMessage(raw), typ)
			if err == nil && !v.Type().Equals(typ.WithoutOptionalAttributesDeep()) && typ.Equals(rateType) {
				t.Fatalf("Decode(%q) = value of type %#v", raw, v.Type())
			}
		}
	})
}
