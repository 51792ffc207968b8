package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamplesAndStdlibFormatted runs apl fmt --check over every example
// and stdlib playbook directory: each must be as apl fmt writes it.
func TestExamplesAndStdlibFormatted(t *testing.T) {
	dirs, _ := filepath.Glob("../../examples/*")
	libs, _ := filepath.Glob("../../stdlib/playbooks/*")
	n := 0
	for _, d := range append(dirs, libs...) {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		n++
		var out, errOut strings.Builder
		if code := Main([]string{"fmt", "--check", d}, &out, &errOut); code != 0 {
			t.Errorf("apl fmt --check %s: exit %d\n%s%s", d, code, out.String(), errOut.String())
		}
	}
	if n < 4 {
		t.Errorf("checked %d directories; want every example and stdlib playbook", n)
	}
}
