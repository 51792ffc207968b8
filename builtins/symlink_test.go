package builtins

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// TestFileSymlink points a "latest" link at a run's report directory, then
// at the next one, as a pipeline does after each run.
func TestFileSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := Env{Workdir: dir}
	for _, run := range []string{"run-1", "run-2"} {
		writeFile(t, filepath.Join(dir, "reports", run, "report.json"), run)
		got, err := call("file.symlink", env, map[string]cty.Value{"path": str("reports/latest"), "target": str(run)})
		if err != nil {
			t.Fatal(err)
		}
		want := cty.ObjectVal(map[string]cty.Value{"path": str("reports/latest"), "target": str(run)})
		if !got.RawEquals(want) {
			t.Errorf("got %#v, want %#v", got, want)
		}
		if s := readString(t, filepath.Join(dir, "reports", "latest", "report.json")); s != run {
			t.Errorf("latest/report.json = %q, want %q", s, run)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "reports"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary link %s left behind", e.Name())
		}
	}
}

// TestFileSymlinkMakesParents links into a directory that does not exist
// yet; the link may dangle.
func TestFileSymlinkMakesParents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := call("file.symlink", Env{Workdir: dir}, map[string]cty.Value{"path": str("a/b/latest"), "target": str("r1")}); err != nil {
		t.Fatal(err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "a", "b", "latest")); err != nil || target != "r1" {
		t.Errorf("link = %q, %v", target, err)
	}
}

func TestFileSymlinkErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "plain.txt"), "keep me")
	tests := []struct {
		path, target, want string
	}{
		{"plain.txt", "x", "plain.txt exists and is not a symlink"},
		{"latest", "/etc", `argument "target" must be relative`},
		{"latest", "../..", `argument "target"`},
		{"../latest", "x", `argument "path"`},
		{"sub/latest", "../../x", "outside the working directory"},
		{"", "x", `argument "path" is required`},
		{"latest", "", `argument "target" is required`},
	}
	for _, tt := range tests {
		_, err := call("file.symlink", Env{Workdir: dir}, map[string]cty.Value{"path": str(tt.path), "target": str(tt.target)})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("file.symlink(%q -> %q): error %v, want one containing %q", tt.path, tt.target, err, tt.want)
		}
	}
	if s := readString(t, filepath.Join(dir, "plain.txt")); s != "keep me" {
		t.Errorf("plain.txt = %q", s)
	}
}
