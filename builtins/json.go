package builtins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

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
	if v != cty.NilVal && v.Type() == cty.String && v.IsKnown() && !v.IsNull() && !v.IsMarked() {
		// An agent's text answer can be tens of megabytes: encode it into
		// one buffer of the right size, not through encoding/json's
		// growing ones.
		return appendJSONString(nil, v.AsString()), nil
	}
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
			// The path grows in place as the walk goes down and is only
			// read to report an error: copying it at every level made deep
			// values quadratic.
			g, err := ctyToGo(e, append(path, cty.IndexStep{Key: k}))
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
			g, err := ctyToGo(e, append(path, cty.GetAttrStep{Name: k.AsString()}))
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

// WriteJSONString writes s to w as a JSON string, exactly as CtyToJSON
// encodes a string value, a piece at a time: a text answer of tens of
// megabytes is encoded into its file without a second copy of it in
// memory.
func WriteJSONString(w io.Writer, s string) error {
	return writeJSONString(w, s, 64<<10)
}

func writeJSONString(w io.Writer, s string, piece int) error {
	buf := make([]byte, 0, piece+piece/8+8)
	first := true
	for first || len(s) > 0 {
		n := min(piece, len(s))
		// Cut at the start of a rune, so that no valid UTF-8 sequence is
		// split (a cut inside one would encode as U+FFFD). A byte behind
		// three continuation bytes is in no valid sequence begun before
		// it: the cut can stay there.
		for k := 0; n < len(s) && k < utf8.UTFMax && k <= n; k++ {
			if !utf8.RuneStart(s[n-k]) {
				continue
			}
			if k < n {
				n -= k
			} else if _, size := utf8.DecodeRuneInString(s); size > n {
				n = size // a piece shorter than the first rune
			}
			break
		}
		enc := appendJSONString(buf[:0], s[:n])
		enc = enc[:len(enc)-1] // the closing quote
		if !first {
			enc = enc[1:] // the opening quote
		}
		if _, err := w.Write(enc); err != nil {
			return err
		}
		first = false
		s = s[n:]
	}
	_, err := w.Write([]byte{'"'})
	return err
}

// AppendJSONString appends s to dst as a JSON string, as an encoding/json
// Encoder with SetEscapeHTML(false) writes it.
func AppendJSONString(dst []byte, s string) []byte {
	if dst == nil {
		dst = []byte{}
	}
	return appendJSONString(dst, s)
}

// appendJSONString appends s as a JSON string, exactly as an
// encoding/json Encoder with SetEscapeHTML(false) writes it: invalid UTF-8
// becomes U+FFFD (as encoding/json of this build writes it: invalidUTF8),
// and U+2028 and U+2029 are escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	if dst == nil {
		dst = make([]byte, 0, len(s)+len(s)/64+2)
	}
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look of its own: a
		// large answer is mostly plain ASCII.
		for i+8 <= len(s) && !special8(load8(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, invalidUTF8()...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// invalidUTF8 is what encoding/json writes for a byte that is not
// UTF-8: the escape `\ufffd` up to Go 1.26, U+FFFD itself from Go 1.27
// on. Both decode to the same string; apl's own encoders write what
// encoding/json writes, so that a file reads the same whichever of them
// wrote it.
var invalidUTF8 = sync.OnceValue(func() string {
	b, err := json.Marshal("\xff")
	if err != nil || len(b) < 2 {
		return `\ufffd`
	}
	return string(b[1 : len(b)-1])
})

// load8 is the eight bytes of s from i on, the first in the lowest byte.
func load8(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// special8 reports whether any of the eight bytes in x is one that
// appendJSONString cannot copy as it is: a control character, '"', '\\'
// or a byte of a multi-byte (or invalid) sequence. It may say yes for a
// word that holds none (the byte loop then finds nothing), never no for
// one that does.
func special8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs } // high bit set in each zero byte (and maybe above one)
	control := (x - 0x20*ones) & ^x & highs
	return (control | zero(x^('"'*ones)) | zero(x^('\\'*ones)) | x&highs) != 0
}
