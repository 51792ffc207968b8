package interp

import (
	"encoding/binary"
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

// isASCII reports whether s holds only ASCII bytes, looking at 32 bytes
// at a time.
func isASCII(s string) bool {
	const highs = 0x8080808080808080
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	i := 0
	for ; i+32 <= len(b); i += 32 {
		x := binary.LittleEndian.Uint64(b[i:]) | binary.LittleEndian.Uint64(b[i+8:]) |
			binary.LittleEndian.Uint64(b[i+16:]) | binary.LittleEndian.Uint64(b[i+24:])
		if x&highs != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 {
			return false
		}
	}
	return true
}
