package lang

import (
	"slices"
	"testing"
)

// TestAddressRoundTrip checks that an address BlockAddress writes splits
// back into the block's type and labels, quoted labels included, so that
// an address apl diff prints is one apl explain reads.
func TestAddressRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		typ    string
		labels []string
		want   string
	}{
		{"step", []string{"verify"}, "step.verify"},
		{"playbook", []string{"phase-runner"}, "playbook.phase-runner"},
		{"playbook", []string{"my playbook"}, `playbook."my playbook"`},
		{"rule", []string{"a.b"}, `rule."a.b"`},
		{"gate", nil, "gate"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			addr := BlockAddress("", tc.typ, tc.labels...)
			if addr != tc.want {
				t.Fatalf("BlockAddress = %s, want %s", addr, tc.want)
			}
			segs, err := SplitAddress(AttributeAddress(BlockAddress("step", tc.typ, tc.labels...), "when"))
			want := append(append([]string{"step", tc.typ}, tc.labels...), "when")
			if err != nil || !slices.Equal(segs, want) {
				t.Errorf("SplitAddress = %q, %v; want %q", segs, err, want)
			}
		})
	}
	for _, bad := range []string{"", "step..verify", "step.", `step."verify`, `step."a"b`} {
		if segs, err := SplitAddress(bad); err == nil {
			t.Errorf("SplitAddress(%q) = %q, want an error", bad, segs)
		}
	}
}
