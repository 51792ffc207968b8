package lsp

import "testing"

// TestGCPace checks the collector's pace apl lsp sets: a small live heap
// may grow by the headroom before a collection (not double, as Go's
// default would, every few megabytes), and a large one is collected at
// Go's default pace, so that memory stays bounded by twice the live heap.
func TestGCPace(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{5 << 20, 1280},       // phase-runner open: 64 MB more, not 5
		{0, 1600},             // before the first load: as for Go's smallest heap, 4 MB
		{1 << 20, 1600},       // so the heap goal is 64 MB, not a gigabyte
		{64 << 20, 100},       // as large as the headroom: Go's default
		{500 << 20, 100},      // larger: never below the default
		{(64 << 20) / 3, 300}, // a third of it
	} {
		if got := gcPercent(c.live, HeapHeadroom); got != c.want {
			t.Errorf("gcPercent(%d, %d) = %d, want %d", c.live, HeapHeadroom, got, c.want)
		}
	}
}
