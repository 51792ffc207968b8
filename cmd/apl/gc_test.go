package main

import (
	"runtime/debug"

	"github.com/apl-lang/apl/cmd/apl/internal/shortlived"
	"testing"
)

// TestShortLivedGC checks that validate-like commands run without the
// collector's pacing under a memory limit, that Main puts the settings
// back (tests call it in-process), and that a GOGC the user set and the
// commands that run playbooks are left alone.
func TestShortLivedGC(t *testing.T) {
	percent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1)
	restore := shortLivedGC("validate", "")
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("validate: GC percent %d, want -1 (off)", got)
	}
	if got := debug.SetMemoryLimit(-1); got != shortlived.Limit {
		t.Errorf("validate: memory limit %d, want %d", got, shortlived.Limit)
	}
	// A second command at once keeps the setting until both returned.
	restore2 := shortLivedGC("fmt", "")
	restore()
	if got := debug.SetGCPercent(-1); got != -1 {
		t.Errorf("one of two commands returned: GC percent %d, want -1 still", got)
	}
	restore2()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after validate: GC percent %d, want 100 back", got)
	}
	if got := debug.SetMemoryLimit(-1); got != limit {
		t.Errorf("after validate: memory limit %d, want %d back", got, limit)
	}
	for _, tc := range []struct{ cmd, gogc string }{{"run", ""}, {"resume", ""}, {"validate", "200"}} {
		restore := shortLivedGC(tc.cmd, tc.gogc)
		if got := debug.SetGCPercent(100); got != 100 {
			t.Errorf("%s with GOGC=%q: GC percent %d, want 100", tc.cmd, tc.gogc, got)
		}
		restore()
	}
}
