package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/apl-lang/apl/cmd/apl/internal/shortlived"
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

// TestShortLivedStartCollectsNothing runs apl validate as a process (this
// test binary, as apl) and checks in Go's own trace of package init and
// collections that package shortlived's init runs before the Temporal,
// gRPC and protobuf packages allocate theirs (about 2 MB), and that
// nothing is collected after it: without it, their allocations started a
// collection, and validating the stdlib with Go's default pacing
// collected eleven times.
func TestShortLivedStartCollectsNothing(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("runs this binary as apl through a symbolic link")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	apl := filepath.Join(t.TempDir(), "apl")
	if err := os.Symlink(self, apl); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(apl, "validate", "stdlib:phase-runner", "stdlib:conductor", "stdlib:risk-pipeline", "stdlib:orchestrator")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1,gctrace=1", "GOGC=", "GOMEMLIMIT=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("apl validate: %v\n%s%s", err, out, stderr.String())
	}
	// An init line reads "init PACKAGE @T ms, C ms clock, B bytes, N allocs";
	// a collection's "gc N @T ...", printed as it ends.
	ours, before, gcBefore, gcAfter := false, 0, 0, 0
	for _, line := range strings.Split(stderr.String(), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 6 && f[0] == "init" && f[1] == "github.com/apl-lang/apl/cmd/apl/internal/shortlived":
			ours = true
		case len(f) > 6 && f[0] == "init" && !ours:
			n, _ := strconv.Atoi(f[6])
			before += n
		case len(f) > 0 && f[0] == "gc" && !ours:
			gcBefore++
		case len(f) > 0 && f[0] == "gc":
			gcAfter++
		}
	}
	// Its own: the ballast's allocation starts one, and it collects the
	// span it advised.
	if !ours || before > 256<<10 || gcBefore > 2 || gcAfter > 0 {
		t.Errorf("package shortlived's init ran %v, after %d bytes allocated in init and %d collections; %d collections after it: want it before 256 KiB and 2 collections (its own), and none after\n%s", ours, before, gcBefore, gcAfter, stderr.String())
	}
}
