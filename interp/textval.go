package interp

import (
	"unsafe"

	"github.com/zclconf/go-cty/cty"
)

// textVal is cty.StringVal(s). cty normalizes every string to NFC on the
// way in, and for an agent's answer of tens of megabytes that pass (x/text
// looking at each byte) was most of what taking the answer cost. ASCII is
// NFC as it is, so a large text that is all ASCII, checked eight bytes at
// a time, becomes the value cty.StringVal would make without the pass.
func textVal(s string) cty.Value {
	if len(s) < 64<<10 || !rawStrings || !isASCII(s) {
		return cty.StringVal(s)
	}
	return *(*cty.Value)(unsafe.Pointer(&ctyValue{ty: cty.String, v: s}))
}

// ctyValue has the layout of cty.Value: its type and its value. rawStrings
// checks, once, that a string made through it is the value StringVal
// makes; should cty change, textVal falls back to StringVal.
type ctyValue struct {
	ty cty.Type
	v  any
}

var rawStrings = func() bool {
	if unsafe.Sizeof(ctyValue{}) != unsafe.Sizeof(cty.Value{}) {
		return false
	}
	const probe = "an ASCII probe"
	v := *(*cty.Value)(unsafe.Pointer(&ctyValue{ty: cty.String, v: probe}))
	return v.Type() == cty.String && v.IsKnown() && !v.IsNull() && v.AsString() == probe && v.RawEquals(cty.StringVal(probe))
}()

// isASCII reports whether s holds only ASCII bytes.
func isASCII(s string) bool {
	const highs = 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if x&highs != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
