package agent

import (
	"encoding/json"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

func TestStrictSchema(t *testing.T) {
	tests := []struct {
		name string
		typ  cty.Type
		want string // empty: not expressible in strict mode
	}{
		{name: "string", typ: cty.String, want: `{"type":"string"}`},
		{
			name: "object with optional attribute",
			typ: cty.ObjectWithOptionalAttrs(map[string]cty.Type{
				"b": cty.Number, "a": cty.String, "c": cty.List(cty.Bool),
			}, []string{"c"}),
			want: `{"additionalProperties":false,"properties":{"a":{"type":"string"},"b":{"type":"number"},"c":{"items":{"type":"boolean"},"type":["array","null"]}},"required":["a","b","c"],"type":"object"}`,
		},
		{
			name: "nested objects are closed too",
			typ:  cty.List(cty.Object(map[string]cty.Type{"x": cty.Object(map[string]cty.Type{})})),
			want: `{"items":{"additionalProperties":false,"properties":{"x":{"additionalProperties":false,"properties":{},"required":[],"type":"object"}},"required":["x"],"type":"object"},"type":"array"}`,
		},
		{name: "set loses uniqueItems", typ: cty.Set(cty.String), want: `{"items":{"type":"string"},"type":"array"}`},
		{name: "map", typ: cty.Map(cty.String)},
		{name: "any", typ: cty.DynamicPseudoType},
		{name: "tuple", typ: cty.Tuple([]cty.Type{cty.String})},
		{name: "any inside an object", typ: cty.Object(map[string]cty.Type{"a": cty.DynamicPseudoType})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := StrictSchema(Schema(tt.typ))
			if tt.want == "" {
				if ok {
					t.Fatalf("StrictSchema() = %v, want not ok", got)
				}
				return
			}
			if !ok {
				t.Fatal("StrictSchema() not ok")
			}
			data, _ := json.Marshal(got)
			if string(data) != tt.want {
				t.Errorf("StrictSchema() =\n%s\nwant\n%s", data, tt.want)
			}
		})
	}
}

// A strict schema makes the model send null for an optional attribute it
// has no value for; Decode must read that as absent.
func TestDecodeNullOptionalIsAbsent(t *testing.T) {
	v, err := Decode(json.RawMessage(`{"alignment_score": 8, "verdict": "PASS", "passed": true, "scorecard": [], "notes": null}`), rateType)
	if err != nil {
		t.Fatal(err)
	}
	if n := v.GetAttr("notes"); !n.IsNull() {
		t.Errorf("notes = %#v, want null", n)
	}
}
