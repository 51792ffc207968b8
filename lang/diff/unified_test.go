package diff

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnifiedDiffApplies checks fmt --diff's unified diffs by applying
// them: git apply, which allows no fuzz, must turn the old text into the
// new, for random edits, with and without a final newline.
func TestUnifiedDiffApplies(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewSource(1))
	for range 200 {
		var a, b []string
		for i := 0; i < r.Intn(40); i++ {
			l := fmt.Sprintf("line %d", r.Intn(8))
			a = append(a, l)
			switch r.Intn(6) {
			case 0:
			case 1:
				b = append(b, "new", l)
			case 2:
				b = append(b, l+" changed")
			default:
				b = append(b, l)
			}
		}
		as, bs := strings.Join(a, "\n"), strings.Join(b, "\n")
		if r.Intn(2) == 0 && as != "" {
			as += "\n"
		}
		if r.Intn(2) == 0 && bs != "" {
			bs += "\n"
		}
		if as == bs {
			continue
		}
		d := Unified("f.hcl", as, bs)
		if err := os.WriteFile(filepath.Join(dir, "f.hcl"), []byte(as), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "d.patch"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("git", "apply", "d.patch")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git apply: %v: %s\nold %q\nnew %q\ndiff:\n%s", err, out, as, bs, d)
		}
		got, err := os.ReadFile(filepath.Join(dir, "f.hcl"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != bs {
			t.Fatalf("applied, got %q, want %q\ndiff:\n%s", got, bs, d)
		}
	}
}
