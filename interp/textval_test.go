package interp

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// textVal makes the value cty.StringVal makes, with or without its NFC
// pass: a large ASCII text skips it, anything else (a decomposed accent,
// which NFC composes) goes through it. The fast path must still work
// (rawStrings), or a cty upgrade has changed cty.Value.
func TestTextVal(t *testing.T) {
	if !rawStrings {
		t.Fatal("cty.Value no longer has the layout textVal builds: update ctyValue")
	}
	big := strings.Repeat("plain ASCII answer line {\"x\": 1}\n", 4000)
	for name, s := range map[string]string{
		"small":             "hello",
		"large ASCII":       big,
		"large, one accent": big + "e\u0301",
		"accent in a word":  big[:70001] + "\u00e9" + big[70001:],
		"high byte at 8k":   big[:8*1024] + "\xc3\xa9" + big[8*1024:],
		"ASCII, odd length": big + "abc",
		"empty":             "",
	} {
		got, want := textVal(s), cty.StringVal(s)
		if !got.RawEquals(want) || got.AsString() != want.AsString() {
			t.Errorf("%s: textVal differs from cty.StringVal", name)
		}
		n, err := stdlib.Strlen(got)
		m, _ := stdlib.Strlen(want)
		if err != nil || !n.RawEquals(m) {
			t.Errorf("%s: length %v (%v), want %v", name, n, err, m)
		}
	}
	for s, want := range map[string]bool{"": true, "abcdefgh": true, "abcdefg\x80": false, "\x80bcdefghij": false, "abcdefghi\xff": false, "a\x7f": true} {
		if got := isASCII(s); got != want {
			t.Errorf("isASCII(%q) = %v", s, got)
		}
	}
	// A high byte in every place of a 32-byte block and of the tail.
	plain := strings.Repeat("x", 70)
	for i := range len(plain) {
		if s := plain[:i] + "\x80" + plain[i+1:]; isASCII(s) {
			t.Errorf("isASCII misses the high byte at %d", i)
		}
	}
	if !isASCII(plain) {
		t.Error("isASCII refuses plain ASCII")
	}
}
