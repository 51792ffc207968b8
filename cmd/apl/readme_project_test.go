package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdlibReadmesYourProject checks that each stdlib playbook's README
// tells a new user what their project must hold ("## Your project") and
// names the entry point for a roadmap, stdlib:orchestrator.
func TestStdlibReadmesYourProject(t *testing.T) {
	readmes, err := filepath.Glob(filepath.Join("..", "..", "stdlib", "playbooks", "*", "README.md"))
	if err != nil || len(readmes) == 0 {
		t.Fatalf("no stdlib READMEs: %v", err)
	}
	for _, p := range readmes {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		_, sec, ok := strings.Cut(string(b), "\n## Your project\n")
		if !ok {
			t.Errorf("%s has no \"## Your project\" section", p)
			continue
		}
		sec, _, _ = strings.Cut(sec, "\n## ")
		if !strings.Contains(sec, "orchestrator") {
			t.Errorf("%s: its \"Your project\" section does not name stdlib:orchestrator, the entry point for a roadmap", p)
		}
	}
}
