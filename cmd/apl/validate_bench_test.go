package main

import (
	"io"
	"testing"
)

// BenchmarkValidateStdlib measures `apl validate` of every stdlib playbook
// in one process (issue 11: under 50 ms cold). The command loads each
// playbook with its prompt files and sub-playbooks and runs every check.
func BenchmarkValidateStdlib(b *testing.B) {
	args := []string{"validate", "stdlib:phase-runner", "stdlib:orchestrator", "stdlib:conductor", "stdlib:risk-pipeline"}
	for b.Loop() {
		if code := Main(args, io.Discard, io.Discard); code != 0 {
			b.Fatalf("apl validate exited %d", code)
		}
	}
}
