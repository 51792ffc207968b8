package lang

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestValid loads every playbook in testdata/valid: none may have a
// diagnostic, not even a warning, so each stays a clean example of the
// forms users rely on.
func TestValid(t *testing.T) {
	files, err := filepath.Glob("testdata/valid/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 8 {
		t.Fatalf("found %d valid playbooks, want at least 8", len(files))
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".hcl"), func(t *testing.T) {
			pb, diags := fixtureLoader.Load(f)
			for _, d := range diags {
				t.Errorf("%s", d)
			}
			if pb.Name == "" {
				t.Errorf("the playbook has no name")
			}
			if pb.Description == "" {
				t.Errorf("the playbook has no description")
			}
			if len(marks(pb.Sources)) > 0 {
				t.Errorf("a valid playbook carries ERROR or WARNING marks: %v", marks(pb.Sources))
			}
		})
	}
}
