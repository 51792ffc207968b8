package builtins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/zclconf/go-cty/cty"
)

// JSONToCty decodes one JSON document whose shape is not known in advance.
// cty's own decoder needs a type; this one implies it from the data, the
// way a playbook expects: objects become cty objects, arrays become tuples
// (their elements may differ in type), numbers keep their full precision and
// null becomes a null of dynamic type. Anything after the document other
// than white space is an error, so a log line glued to a JSON result is not
// silently ignored.
func JSONToCty(data []byte) (cty.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return cty.NilVal, errors.New("no JSON value")
		}
		return cty.NilVal, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return cty.NilVal, fmt.Errorf("unexpected data after the JSON value at offset %d", dec.InputOffset())
	}
	return goToCty(raw)
}

func goToCty(raw any) (cty.Value, error) {
	switch v := raw.(type) {
	case nil:
		return cty.NullVal(cty.DynamicPseudoType), nil
	case bool:
		return cty.BoolVal(v), nil
	case string:
		return cty.StringVal(v), nil
	case json.Number:
		return cty.ParseNumberVal(string(v))
	case []any:
		if len(v) == 0 {
			return cty.EmptyTupleVal, nil
		}
		elems := make([]cty.Value, len(v))
		for i, e := range v {
			ev, err := goToCty(e)
			if err != nil {
				return cty.NilVal, err
			}
			elems[i] = ev
		}
		return cty.TupleVal(elems), nil
	case map[string]any:
		if len(v) == 0 {
			return cty.EmptyObjectVal, nil
		}
		attrs := make(map[string]cty.Value, len(v))
		for k, e := range v {
			ev, err := goToCty(e)
			if err != nil {
				return cty.NilVal, err
			}
			attrs[k] = ev
		}
		return cty.ObjectVal(attrs), nil
	}
	return cty.NilVal, fmt.Errorf("unexpected JSON value of Go type %T", raw)
}

// CtyToJSON encodes any known cty value as compact JSON without needing its
// type at the other end: lists, sets and tuples become arrays, maps and
// objects become objects with sorted keys, and nulls of any type (including
// dynamic ones, which cty's own encoder would wrap in type information)
// become null. HTML characters are not escaped, so the text stays as a
// reader of a JSONL log expects. Unknown and marked values are refused: they
// mean the caller passed something not yet evaluated or deliberately hidden.
func CtyToJSON(v cty.Value) ([]byte, error) {
	raw, err := ctyToGo(v, nil)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(raw); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func ctyToGo(v cty.Value, path cty.Path) (any, error) {
	if v == cty.NilVal {
		return nil, pathError(path, "value is missing")
	}
	if v.IsMarked() {
		return nil, pathError(path, "value is marked (sensitive) and cannot be written as JSON")
	}
	if !v.IsKnown() {
		return nil, pathError(path, "value is not known yet")
	}
	if v.IsNull() {
		return nil, nil
	}
	ty := v.Type()
	switch {
	case ty.Equals(cty.String):
		return v.AsString(), nil
	case ty.Equals(cty.Bool):
		return v.True(), nil
	case ty.Equals(cty.Number):
		return json.Number(v.AsBigFloat().Text('f', -1)), nil
	case ty.IsListType() || ty.IsSetType() || ty.IsTupleType():
		out := make([]any, 0, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			g, err := ctyToGo(e, path.Index(k))
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		return out, nil
	case ty.IsMapType() || ty.IsObjectType():
		out := make(map[string]any, v.LengthInt())
		for it := v.ElementIterator(); it.Next(); {
			k, e := it.Element()
			g, err := ctyToGo(e, path.GetAttr(k.AsString()))
			if err != nil {
				return nil, err
			}
			out[k.AsString()] = g
		}
		return out, nil
	}
	return nil, pathError(path, fmt.Sprintf("values of type %s cannot be written as JSON", ty.FriendlyName()))
}

// pathError names where in a nested value the problem is, since a record
// with one bad attribute deep inside is otherwise hard to find.
func pathError(path cty.Path, msg string) error {
	if len(path) == 0 {
		return errors.New(msg)
	}
	return fmt.Errorf("%s: %s", formatPath(path), msg)
}

func formatPath(path cty.Path) string {
	var b bytes.Buffer
	for _, step := range path {
		switch s := step.(type) {
		case cty.GetAttrStep:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name)
		case cty.IndexStep:
			switch {
			case s.Key.Type().Equals(cty.String):
				fmt.Fprintf(&b, "[%q]", s.Key.AsString())
			case s.Key.Type().Equals(cty.Number):
				fmt.Fprintf(&b, "[%s]", s.Key.AsBigFloat().Text('f', -1))
			default:
				b.WriteString("[…]") // a set element: it has no index to show
			}
		}
	}
	return b.String()
}
