package builtins

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
)

func TestJSONToCty(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    cty.Value
		wantErr string
	}{
		{in: `"s"`, want: cty.StringVal("s")},
		{in: ` true `, want: cty.True},
		{in: `null`, want: cty.NullVal(cty.DynamicPseudoType)},
		{in: `12345678901234567890.5`, want: cty.MustParseNumberVal("12345678901234567890.5")},
		{in: `[]`, want: cty.EmptyTupleVal},
		{in: `{}`, want: cty.EmptyObjectVal},
		{in: `[1, "a", null]`, want: cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.StringVal("a"), cty.NullVal(cty.DynamicPseudoType)})},
		{in: `{"a": {"b": [true]}, "c": "<&>"}`, want: cty.ObjectVal(map[string]cty.Value{
			"a": cty.ObjectVal(map[string]cty.Value{"b": cty.TupleVal([]cty.Value{cty.True})}),
			"c": cty.StringVal("<&>"),
		})},
		{in: ``, wantErr: "no JSON value"},
		{in: `{"a":`, wantErr: "unexpected EOF"},
		{in: `{} {}`, wantErr: "unexpected data after the JSON value"},
		{in: `{}]`, wantErr: "unexpected data after the JSON value"},
		{in: `nope`, wantErr: "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := JSONToCty([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.RawEquals(tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestCtyToJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      cty.Value
		want    string
		wantErr string
	}{
		{name: "object sorted", in: cty.ObjectVal(map[string]cty.Value{"b": cty.NumberIntVal(2), "a": cty.StringVal("<x>")}), want: `{"a":"<x>","b":2}`},
		{name: "dynamic null attr", in: cty.ObjectVal(map[string]cty.Value{"a": cty.NullVal(cty.DynamicPseudoType)}), want: `{"a":null}`},
		{name: "typed null", in: cty.NullVal(cty.String), want: `null`},
		{name: "list", in: cty.ListVal([]cty.Value{cty.StringVal("x")}), want: `["x"]`},
		{name: "empty list", in: cty.ListValEmpty(cty.String), want: `[]`},
		{name: "set", in: cty.SetVal([]cty.Value{cty.NumberIntVal(1)}), want: `[1]`},
		{name: "map", in: cty.MapVal(map[string]cty.Value{"k": cty.True}), want: `{"k":true}`},
		{name: "fraction", in: cty.NumberFloatVal(0.25), want: `0.25`},
		{name: "big", in: cty.MustParseNumberVal("123456789012345678901234567890"), want: `123456789012345678901234567890`},
		{name: "unknown", in: cty.ObjectVal(map[string]cty.Value{"a": cty.TupleVal([]cty.Value{cty.UnknownVal(cty.String)})}), wantErr: "a[0]: value is not known yet"},
		{name: "marked", in: cty.StringVal("secret").Mark("sensitive"), wantErr: "marked"},
		{name: "infinity", in: cty.PositiveInfinity, wantErr: "json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CtyToJSON(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"a":[1,"x",null,{"b":false}],"c":{}}`,
		`[[],{},"é\n\"q\""]`,
		`-0.5`,
	} {
		v, err := JSONToCty([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		out, err := CtyToJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != in {
			t.Errorf("round trip of %s gave %s", in, out)
		}
	}
}

// appendJSONString writes what encoding/json writes, so that a large text
// answer's fast path changes nothing in the state.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" back\\ nl\n tab\t", "\x00\x01\x1f\x7f", "<&>", "\u2028\u2029", "\xff\xfe", "é日本", "a\xc3",
		"eight by", "sixteen bytes ok\"then a quote", "0123456789abcdef\\", "a longer plain line of text, then é and \x01 and \u2028 at the end"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}

// TestSpecial8 checks the eight-bytes-at-a-time test of appendJSONString
// against every byte value at every place in a word of plain bytes, and
// with a second special byte after it: it must never pass over a byte
// that needs escaping or starts a multi-byte sequence.
func TestSpecial8(t *testing.T) {
	special := func(b byte) bool { return b < 0x20 || b == '"' || b == '\\' || b >= utf8.RuneSelf }
	for pos := range 8 {
		for v := range 256 {
			w := []byte("abcdefgh")
			w[pos] = byte(v)
			if got := special8(load8(string(w), 0)); got != special(byte(v)) && special(byte(v)) {
				t.Errorf("byte %#x at %d: special8 = %v", v, pos, got)
			}
			if !special(byte(v)) && special8(load8(string(w), 0)) {
				t.Errorf("byte %#x at %d: a plain word counted as special", v, pos)
			}
			for _, other := range []byte{0, 0x1f, '"', '\\', 0x80, 0xff} {
				w2 := append([]byte(nil), w...)
				w2[(pos+3)%8] = other
				if !special8(load8(string(w2), 0)) {
					t.Errorf("%q: special8 missed %#x", w2, other)
				}
			}
		}
	}
}

// WriteJSONString writes what appendJSONString writes, however the string
// is cut into pieces.
func FuzzWriteJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote\" back\\ nl\n", "é日本\U0001F600", "a\xc3", "\x80\x80\x80\x80\x80", "\xf0\x9f\x98"} {
		f.Add(s, uint8(1))
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, piece uint8) {
		var buf bytes.Buffer
		if err := writeJSONString(&buf, s, int(piece%8)+1); err != nil {
			t.Fatal(err)
		}
		if want := appendJSONString(nil, s); !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%q in pieces of %d: got %s, want %s", s, int(piece%8)+1, buf.Bytes(), want)
		}
	})
}
