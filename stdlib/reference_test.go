package stdlib_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the stdlib playbooks' reference pages")

// TestReference checks that each stdlib playbook's reference page is the
// one its files make now; go test ./stdlib -update (make update) writes
// them again after a change.
func TestReference(t *testing.T) {
	for _, n := range stdlib.Names() {
		t.Run(n, func(t *testing.T) {
			ref := lang.StdlibPrefix + n
			pb, diags := loader().Load(ref)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			got := stdlib.Reference(ref, pb)
			path := filepath.Join("playbooks", n, stdlib.ReferenceFile)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v; write it with go test ./stdlib -update", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("%s is stale; write it again with go test ./stdlib -update (-on disk +generated):\n%s", path, diff)
			}
		})
	}
}
