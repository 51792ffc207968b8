package builtins

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ShellSpec.Live sees every line of both streams, a last line without its
// newline included, and the result keeps the output as without it.
func TestShellLive(t *testing.T) {
	var mu sync.Mutex
	got := map[bool][]string{}
	spec := ShellSpec{
		Script:    `printf 'one\ntwo\r\n'; echo err >&2; printf 'three'`,
		MaxOutput: 4,
		Live: func(stderr bool, line string) {
			mu.Lock()
			defer mu.Unlock()
			got[stderr] = append(got[stderr], line)
		},
	}
	res, err := (&Shell{Workdir: t.TempDir()}).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	want := map[bool][]string{false: {"one", "two", "three"}, true: {"err"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
	if res.Stdout != "one\n" || !res.StdoutTruncated {
		t.Errorf("stdout %q (truncated %v), want the first 4 bytes, truncated", res.Stdout, res.StdoutTruncated)
	}
}
