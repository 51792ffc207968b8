package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins"
	"github.com/zclconf/go-cty/cty"
)

// BenchmarkDeepJSON reads an answer nested n levels deep the ways a run
// does: extract it, decode it against a returns type, and write it back
// as JSON for the state (issue 9: linear, not quadratic; 9,999 levels
// took 846 MB).
func BenchmarkDeepJSON(b *testing.B) {
	for _, n := range []int{2500, 5000, 10000} {
		js := strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
		b.Run(fmt.Sprintf("levels=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				raw, err := ExtractJSON("answer:\n" + js + "\n")
				if err != nil {
					b.Fatal(err)
				}
				v, err := Decode(raw, cty.Object(map[string]cty.Type{"a": cty.DynamicPseudoType}))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := builtins.CtyToJSON(v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
