package diff

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestForkRecordRoundTrip checks that .apl-fork gives back every file
// byte for byte: one holding a line like a txtar marker, one without a
// final newline.
func TestForkRecordRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rec := &Record{Upstream: "stdlib:x", Version: "v1", Hash: "sha256:ab", Base: map[string][]byte{
		"main.hcl":     []byte("playbook \"x\" {}\n"),
		"prompts/a.md": []byte("Before\n-- b.md --\nAfter\n"),
		"prompts/c.md": []byte("no newline"),
		"empty.md":     {},
	}}
	if err := os.WriteFile(filepath.Join(dir, ForkFile), rec.Format(dir), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFork(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(rec, got); d != "" {
		t.Errorf("read back (-want +got):\n%s", d)
	}
}
