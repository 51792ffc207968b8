package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// Problem is one way an agent's JSON answer does not fit a step's returns
// type.
type Problem struct {
	// Path locates the value, like .scorecard[2].score; empty is the root.
	Path string
	// Msg says what is wrong, e.g. "expected number, got string".
	Msg string
}

// String formats the problem as "path: msg".
func (p Problem) String() string {
	path := p.Path
	if path == "" {
		path = "(root)"
	}
	return path + ": " + p.Msg
}

// ReturnsError lists every problem Decode found, so an agent can be told all
// of them in one retry.
type ReturnsError struct {
	Problems []Problem
}

// Error lists the problems, one per line after the first.
func (e *ReturnsError) Error() string {
	if len(e.Problems) == 1 {
		return "returns: " + e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "returns: %d problems:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n\t")
		b.WriteString(p.String())
	}
	return b.String()
}

// Schema returns the JSON Schema of values of type t, the form backends take
// for structured output. Objects list their attributes as properties, the
// non-optional ones as required, and allow additional properties (Decode
// drops them); lists are arrays, sets arrays of unique items, maps objects
// whose additional properties share one schema, tuples arrays with
// prefixItems, and any (cty.DynamicPseudoType) the empty schema.
func Schema(t cty.Type) map[string]any {
	switch {
	case t == cty.DynamicPseudoType:
		return map[string]any{}
	case t == cty.String:
		return map[string]any{"type": "string"}
	case t == cty.Number:
		return map[string]any{"type": "number"}
	case t == cty.Bool:
		return map[string]any{"type": "boolean"}
	case t.IsListType():
		return map[string]any{"type": "array", "items": Schema(t.ElementType())}
	case t.IsSetType():
		return map[string]any{"type": "array", "items": Schema(t.ElementType()), "uniqueItems": true}
	case t.IsMapType():
		return map[string]any{"type": "object", "additionalProperties": Schema(t.ElementType())}
	case t.IsTupleType():
		elems := t.TupleElementTypes()
		items := make([]any, len(elems))
		for i, et := range elems {
			items[i] = Schema(et)
		}
		return map[string]any{"type": "array", "prefixItems": items, "minItems": len(elems), "maxItems": len(elems)}
	case t.IsObjectType():
		props := map[string]any{}
		var required []string
		for name, at := range t.AttributeTypes() {
			props[name] = Schema(at)
			if !t.AttributeOptional(name) {
				required = append(required, name)
			}
		}
		sort.Strings(required)
		s := map[string]any{"type": "object", "properties": props, "additionalProperties": true}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	default:
		// Capsule types have no JSON form; accept anything and let Decode
		// report the problem.
		return map[string]any{}
	}
}

// Decode parses raw and checks it against t, converting it to a value of
// that type. Every problem is collected into a *ReturnsError; a syntax error
// in raw is a plain error.
//
// Decode is strict where an agent's slip should be caught: a string is never
// read as a number or a number as a string, and null is accepted only for an
// optional attribute or where t is any. Attributes an object does not declare
// are dropped from the value (the raw JSON stays the caller's artifact);
// missing optional attributes become null. Numbers keep their precision:
// 8.5 stays 8.5.
func Decode(raw json.RawMessage, t cty.Type) (cty.Value, error) {
	v, err := parseJSON(raw)
	if err != nil {
		return cty.NilVal, err
	}
	d := &decoder{}
	val := d.value(v, t, nil)
	if len(d.problems) > 0 {
		return cty.NilVal, &ReturnsError{Problems: d.problems}
	}
	return val, nil
}

// JSONToValue converts untyped JSON to a cty value of its implied type:
// objects become object values, arrays tuples, null a null of any type.
func JSONToValue(raw []byte) (cty.Value, error) {
	return Decode(raw, cty.DynamicPseudoType)
}

// parseJSON decodes one JSON value, keeping numbers as json.Number.
func parseJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid JSON: data after the value")
	}
	return v, nil
}

// decoder walks a parsed JSON value against a type, collecting problems.
type decoder struct {
	problems []Problem
}

func (d *decoder) fail(path *jsonPath, format string, args ...any) {
	d.problems = append(d.problems, Problem{Path: path.String(), Msg: fmt.Sprintf(format, args...)})
}

// value converts v to type t. After a problem the returned value is a
// placeholder of the right type; Decode discards it.
func (d *decoder) value(v any, t cty.Type, path *jsonPath) cty.Value {
	concrete := t.WithoutOptionalAttributesDeep()
	if t == cty.DynamicPseudoType {
		return d.implied(v, path)
	}
	if v == nil {
		d.fail(path, "expected %s, got null", typeName(t))
		return cty.NullVal(concrete)
	}
	before := len(d.problems)
	mismatch := func() cty.Value {
		d.fail(path, "expected %s, got %s", typeName(t), jsonKind(v))
		return cty.NullVal(concrete)
	}
	switch {
	case t == cty.String:
		s, ok := v.(string)
		if !ok {
			return mismatch()
		}
		return cty.StringVal(s)
	case t == cty.Bool:
		b, ok := v.(bool)
		if !ok {
			return mismatch()
		}
		return cty.BoolVal(b)
	case t == cty.Number:
		n, ok := v.(json.Number)
		if !ok {
			return mismatch()
		}
		nv, err := cty.ParseNumberVal(string(n))
		if err != nil {
			d.fail(path, "invalid number %s", n)
			return cty.NullVal(cty.Number)
		}
		return nv
	case t.IsListType(), t.IsSetType():
		arr, ok := v.([]any)
		if !ok {
			return mismatch()
		}
		et := t.ElementType()
		elems := make([]cty.Value, len(arr))
		for i, e := range arr {
			elems[i] = d.value(e, et, path.index(i))
		}
		if len(d.problems) > before {
			return cty.NullVal(concrete)
		}
		return d.collection(t, elems, path, func() cty.Value { return cty.TupleVal(elems) })
	case t.IsMapType():
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch()
		}
		et := t.ElementType()
		elems := make(map[string]cty.Value, len(obj))
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			elems[k] = d.value(obj[k], et, path.key(k))
		}
		if len(d.problems) > before {
			return cty.NullVal(concrete)
		}
		return d.collection(t, nil, path, func() cty.Value { return cty.ObjectVal(elems) })
	case t.IsTupleType():
		arr, ok := v.([]any)
		if !ok {
			return mismatch()
		}
		ets := t.TupleElementTypes()
		if len(arr) != len(ets) {
			d.fail(path, "expected %d elements, got %d", len(ets), len(arr))
			return cty.NullVal(concrete)
		}
		elems := make([]cty.Value, len(arr))
		for i, e := range arr {
			elems[i] = d.value(e, ets[i], path.index(i))
		}
		if len(d.problems) > before {
			return cty.NullVal(concrete)
		}
		return cty.TupleVal(elems)
	case t.IsObjectType():
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch()
		}
		attrs := map[string]cty.Value{}
		types := t.AttributeTypes()
		for _, name := range slices.Sorted(maps.Keys(types)) {
			at := types[name]
			ap := path.attr(name)
			e, present := obj[name]
			switch {
			case t.AttributeOptional(name) && (!present || e == nil):
				attrs[name] = cty.NullVal(at.WithoutOptionalAttributesDeep())
			case !present:
				d.fail(ap, "missing required field (%s)", typeName(at))
				attrs[name] = cty.NullVal(at.WithoutOptionalAttributesDeep())
			default:
				attrs[name] = d.value(e, at, ap)
			}
		}
		if len(d.problems) > before {
			return cty.NullVal(concrete)
		}
		if len(attrs) == 0 {
			return cty.EmptyObjectVal
		}
		return cty.ObjectVal(attrs)
	default:
		d.fail(path, "type %s cannot be read from JSON", typeName(t))
		return cty.NullVal(concrete)
	}
}

// collection builds a list, set or map of type t. When the element type is
// concrete the elements already share it; when it involves any, the
// elements are unified by conversion from their structural form, as HCL
// does for list(any).
func (d *decoder) collection(t cty.Type, elems []cty.Value, path *jsonPath, structural func() cty.Value) cty.Value {
	concrete := t.WithoutOptionalAttributesDeep()
	et := concrete.ElementType()
	if !et.HasDynamicTypes() {
		switch {
		case t.IsListType() && len(elems) == 0:
			return cty.ListValEmpty(et)
		case t.IsListType():
			return cty.ListVal(elems)
		case t.IsSetType() && len(elems) == 0:
			return cty.SetValEmpty(et)
		case t.IsSetType():
			return cty.SetVal(elems)
		}
	}
	v, err := convert.Convert(structural(), concrete)
	if err != nil {
		d.fail(path, "cannot read as %s: %s", typeName(t), err)
		return cty.NullVal(concrete)
	}
	return v
}

// implied converts v to a value of its own type.
func (d *decoder) implied(v any, path *jsonPath) cty.Value {
	switch v := v.(type) {
	case nil:
		return cty.NullVal(cty.DynamicPseudoType)
	case bool:
		return cty.BoolVal(v)
	case string:
		return cty.StringVal(v)
	case json.Number:
		n, err := cty.ParseNumberVal(string(v))
		if err != nil {
			d.fail(path, "invalid number %s", v)
			return cty.NullVal(cty.Number)
		}
		return n
	case []any:
		if len(v) == 0 {
			return cty.EmptyTupleVal
		}
		elems := make([]cty.Value, len(v))
		for i, e := range v {
			elems[i] = d.implied(e, path.index(i))
		}
		return cty.TupleVal(elems)
	case map[string]any:
		if len(v) == 0 {
			return cty.EmptyObjectVal
		}
		attrs := make(map[string]cty.Value, len(v))
		for k, e := range v {
			attrs[k] = d.implied(e, path.attr(k))
		}
		return cty.ObjectVal(attrs)
	}
	d.fail(path, "unexpected JSON value %T", v)
	return cty.DynamicVal
}

// typeName names a type for messages: "number", "list of object",
// "map of any".
func typeName(t cty.Type) string {
	switch {
	case t == cty.DynamicPseudoType:
		return "any"
	case t.IsListType():
		return "list of " + typeName(t.ElementType())
	case t.IsSetType():
		return "set of " + typeName(t.ElementType())
	case t.IsMapType():
		return "map of " + typeName(t.ElementType())
	case t.IsObjectType():
		return "object"
	case t.IsTupleType():
		return "tuple"
	}
	return t.FriendlyName()
}

// jsonKind names the JSON kind of a parsed value for messages.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// wrapKey is the property under which a non-object schema is wrapped.
const wrapKey = "value"

// objectSchema returns a schema whose root is an object, as structured-output
// backends require: schema itself when it describes an object, else an
// object with one required property wrapKey holding it. wrapped reports the
// second case; unwrap undoes it on the answer.
func objectSchema(schema map[string]any) (out map[string]any, wrapped bool) {
	if schema["type"] == "object" {
		return schema, false
	}
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{wrapKey: schema},
		"required":   []string{wrapKey},
	}, true
}

// unwrap returns the wrapKey property of a wrapped answer, or raw unchanged
// when it is not wrapped or not an object with that property.
func unwrap(raw json.RawMessage, wrapped bool) json.RawMessage {
	if !wrapped || len(raw) == 0 {
		return raw
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return raw
	}
	if v, ok := obj[wrapKey]; ok {
		return v
	}
	return raw
}

// jsonPath is where in a JSON value the decoder is, built as it goes down
// and spelt out only for a problem: spelling it at every level made deeply
// nested answers quadratic.
type jsonPath struct {
	parent *jsonPath
	step   string // ".name", "[3]" or ["key"]
}

func (p *jsonPath) attr(name string) *jsonPath { return &jsonPath{p, "." + name} }
func (p *jsonPath) index(i int) *jsonPath      { return &jsonPath{p, "[" + strconv.Itoa(i) + "]"} }
func (p *jsonPath) key(k string) *jsonPath     { return &jsonPath{p, "[" + strconv.Quote(k) + "]"} }

// String is the path as problems show it: "" at the root, else
// ".tasks[2].id".
func (p *jsonPath) String() string {
	var steps []string
	for ; p != nil; p = p.parent {
		steps = append(steps, p.step)
	}
	var b strings.Builder
	for i := len(steps) - 1; i >= 0; i-- {
		b.WriteString(steps[i])
	}
	return b.String()
}
