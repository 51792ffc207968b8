package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeForkSection runs each "$ apl ..." command shown in the
// README's "Forking a playbook" section, from the repository root, and
// checks that it prints what the README shows.
func TestReadmeForkSection(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "## Forking a playbook\n")
	if !ok {
		t.Fatal("README.md has no Forking a playbook section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	n := 0
	for _, block := range strings.Split(sec, "```text\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		var lines []string
		for _, l := range strings.Split(block, "\n") {
			lines = append(lines, strings.TrimPrefix(l, "  "))
		}
		cmd, ok := strings.CutPrefix(lines[0], "$ apl ")
		if !ok {
			continue
		}
		n++
		want := strings.Join(lines[1:], "\n")
		want = strings.TrimRight(want, " \n") + "\n"
		var out, errOut strings.Builder
		Main(strings.Fields(cmd), &out, &errOut)
		if out.String() != want {
			t.Errorf("apl %s prints\n%s%s\nbut README.md shows (copy the output into README.md when the change is right)\n%s", cmd, out.String(), errOut.String(), want)
		}
	}
	if n < 2 {
		t.Errorf("found %d commands in the fork section; want the diff and the explain", n)
	}
}
