package interp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apl-lang/apl/lang"
)

// Issue 9: keys differing only in characters outside [A-Za-z0-9._-]
// shared one sub-run directory and artifacts, and a 300-character key
// failed with "file name too long".
func TestSafeNameIsInjectiveAndShort(t *testing.T) {
	keys := []string{"a/b", "a_b", "a?b", "a b", "a_2fb", "..", ".", "", "ü", "a.b", "A-1", strings.Repeat("k", 300), strings.Repeat("k", 299) + "j"}
	seen := map[string]string{}
	for _, k := range keys {
		n := safeName(k)
		if prev, dup := seen[n]; dup {
			t.Errorf("keys %q and %q share the file name %q", prev, k, n)
		}
		seen[n] = k
		if len(n) > 100 {
			t.Errorf("key %q: name %q is %d bytes", k, n, len(n))
		}
		if strings.ContainsAny(n, "/\x00") || n == "." || n == ".." {
			t.Errorf("key %q: %q is not a safe file name", k, n)
		}
	}
	if got := safeName("task-1.2"); got != "task-1.2" {
		t.Errorf("a plain key changed: %q", got)
	}
}

// Two items whose keys differ only in an unsafe character keep their own
// artifacts.
func TestItemArtifactsDoNotCollide(t *testing.T) {
	pb := load(t, `
playbook "k" {}
step "work" {
  for_each = "['a/b', 'a_b', 'a?b']"
  key      = "item"
  step "do" { shell { script = "echo ${item}" } }
}
`)
	res, _, _ := start(t, pb, nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	for _, k := range []string{"a/b", "a_b", "a?b"} {
		name := artifactBase(&frame{item: &item{rec: &ItemRecord{Key: k}}}, &lang.Step{Name: "do"}, 1) + ".stdout"
		b, err := os.ReadFile(filepath.Join(res.Dir, "artifacts", name))
		if err != nil || strings.TrimSpace(string(b)) != k {
			t.Errorf("item %q: artifact holds %q (%v)", k, b, err)
		}
	}
}
