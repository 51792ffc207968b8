package lang

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/zclconf/go-cty/cty"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// answerJSON is ctyjson.Marshal(v, v.Type()), byte for byte: a mocked
// answer as the JSON an agent would print, for the run's own decoder to
// check. ctyjson prints every number through big.Float's shortest
// decimal at 512 bits of precision, which was most of a test file's
// check of its mocks; an integer here is printed as an integer. What it
// does not handle plainly (an unknown, marked or infinite value, a
// capsule, a dynamic type) goes to ctyjson, for its output or its error.
func answerJSON(v cty.Value) ([]byte, error) {
	if b, ok := appendAnswerJSON(nil, v, v.Type()); ok {
		return b, nil
	}
	return ctyjson.Marshal(v, v.Type())
}

// appendAnswerJSON appends the JSON of v, of type t where it sits (an
// element or attribute type: ctyjson wraps a value where t is dynamic),
// to b; ok false for a value it leaves to ctyjson.
func appendAnswerJSON(b []byte, v cty.Value, t cty.Type) ([]byte, bool) {
	if v.IsMarked() || !v.IsKnown() || t == cty.DynamicPseudoType || t.IsCapsuleType() {
		return b, false
	}
	if v.IsNull() {
		return append(b, "null"...), true
	}
	ok := true
	switch {
	case t == cty.String:
		s, err := json.Marshal(v.AsString())
		if err != nil {
			return b, false
		}
		return append(b, s...), true
	case t == cty.Bool:
		return strconv.AppendBool(b, v.True()), true
	case t == cty.Number:
		f := v.AsBigFloat()
		if f.IsInf() {
			return b, false
		}
		if f.IsInt() {
			if i, acc := f.Int64(); acc == 0 {
				return strconv.AppendInt(b, i, 10), true
			}
		}
		return f.Append(b, 'f', -1), true
	case t.IsListType(), t.IsSetType(), t.IsTupleType():
		b = append(b, '[')
		for i, it := 0, v.ElementIterator(); ok && it.Next(); i++ {
			if i > 0 {
				b = append(b, ',')
			}
			var et cty.Type
			if t.IsTupleType() {
				et = t.TupleElementType(i)
			} else {
				et = t.ElementType()
			}
			_, ev := it.Element()
			b, ok = appendAnswerJSON(b, ev, et)
		}
		return append(b, ']'), ok
	case t.IsMapType():
		b = append(b, '{')
		for it, first := v.ElementIterator(), true; ok && it.Next(); first = false {
			if !first {
				b = append(b, ',')
			}
			ek, ev := it.Element()
			if b, ok = appendAnswerJSON(b, ek, cty.String); ok {
				b, ok = appendAnswerJSON(append(b, ':'), ev, t.ElementType())
			}
		}
		return append(b, '}'), ok
	case t.IsObjectType():
		b = append(b, '{')
		atys := t.AttributeTypes()
		for i, k := range slices.Sorted(maps.Keys(atys)) {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendAnswerJSON(b, cty.StringVal(k), cty.String); !ok {
				return b, false
			}
			if b, ok = appendAnswerJSON(append(b, ':'), v.GetAttr(k), atys[k]); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	}
	return b, false
}
