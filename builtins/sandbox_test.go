package builtins

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

func TestResolvePath(t *testing.T) {
	t.Parallel()
	root := realpath(t, t.TempDir())
	outside := t.TempDir()
	mustMkdir(t, filepath.Join(root, "in"))
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "in"), filepath.Join(root, "alias")); err != nil {
		t.Fatal(err)
	}
	// Dangling symlinks: EvalSymlinks fails on them as on a missing name.
	for name, target := range map[string]string{
		"dangling":    filepath.Join(outside, "x"),
		"dangling-up": "../" + filepath.Base(outside) + "/y",
		"dangling-in": "in/new.txt",
		"loop1":       "loop2",
		"loop2":       "loop1",
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		path string
		want string // "" means refused
	}{
		{path: "dangling", want: ""},
		{path: "dangling/new/file", want: ""},
		{path: "dangling-up", want: ""},
		{path: "dangling-in", want: filepath.Join(root, "in", "new.txt")},
		{path: "", want: root},
		{path: ".", want: root},
		{path: "a/b.txt", want: filepath.Join(root, "a/b.txt")},
		{path: "in/../x", want: filepath.Join(root, "x")},
		{path: filepath.Join(root, "in", "f"), want: filepath.Join(root, "in", "f")},
		{path: "alias/new/file", want: filepath.Join(root, "in", "new", "file")},
		{path: "..", want: ""},
		{path: "../x", want: ""},
		{path: "in/../../x", want: ""},
		{path: outside, want: ""},
		{path: "/", want: ""},
		{path: "out", want: ""},
		{path: "out/new/file", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			got, err := ResolvePath(root, tt.path)
			if tt.want == "" {
				if !errors.Is(err, ErrOutsideWorkdir) {
					t.Errorf("ResolvePath(%q) = %q, %v; want ErrOutsideWorkdir", tt.path, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ResolvePath(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
			}
		})
	}
	t.Run("symlink loop", func(t *testing.T) {
		if _, err := ResolvePath(root, "loop1/x"); err == nil || !strings.Contains(err.Error(), "too many") {
			t.Errorf("a symlink loop gave %v", err)
		}
	})
	t.Run("no root", func(t *testing.T) {
		if _, err := ResolvePath("", "x"); err == nil {
			t.Error("an empty root was accepted")
		}
	})
}

// TestAppendThroughDanglingSymlink is the regression test for issue 9: a
// dangling symlink led file.append and jsonl.append to create its target
// outside the project.
func TestAppendThroughDanglingSymlink(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	root := filepath.Join(parent, "project")
	mustMkdir(t, root)
	mustMkdir(t, filepath.Join(parent, "out"))
	env := Env{Workdir: root}
	for i, fn := range []string{"file.append", "jsonl.append", "file.write"} {
		link := fmt.Sprintf("dangling%d", i)
		target := filepath.Join(parent, "out", link)
		if err := os.Symlink("../out/"+link, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
		args := map[string]cty.Value{"path": str(link), "content": str("x\n")}
		if fn == "jsonl.append" {
			args = map[string]cty.Value{"path": str(link), "record": cty.ObjectVal(map[string]cty.Value{"a": str("b")})}
		}
		_, err := call(fn, env, args)
		if !errors.Is(err, ErrOutsideWorkdir) {
			t.Errorf("%s through a dangling symlink: err = %v, want ErrOutsideWorkdir", fn, err)
		}
		if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s created %s outside the project", fn, target)
		}
	}
}

func TestOpenConfinedRefusesSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "real"), "x")
	if err := os.Symlink("real", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenConfined(filepath.Join(dir, "link"), os.O_RDONLY, 0); err == nil {
		f.Close()
		t.Error("OpenConfined followed a symlink")
	}
}

func TestConfinedDir(t *testing.T) {
	t.Parallel()
	root := realpath(t, t.TempDir())
	outside := t.TempDir()
	mustMkdir(t, filepath.Join(root, "real"))
	writeFile(t, filepath.Join(root, "file"), "x")
	for name, target := range map[string]string{"planted": outside, "planted-dangling": filepath.Join(outside, "new"), "alias": "real"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		path, want string
		outside    bool
	}{
		{path: ".apl", want: filepath.Join(root, ".apl")},
		{path: "real", want: filepath.Join(root, "real")},
		{path: "alias", want: filepath.Join(root, "real")},
		{path: "planted", outside: true},
		{path: "planted-dangling", outside: true},
		{path: "planted/runs/x", outside: true},
		{path: "file"},
	} {
		got, err := ConfinedDir(root, tt.path)
		switch {
		case tt.outside:
			if !errors.Is(err, ErrOutsideWorkdir) {
				t.Errorf("ConfinedDir(%q) = %q, %v; want ErrOutsideWorkdir", tt.path, got, err)
			}
		case tt.want == "":
			if err == nil {
				t.Errorf("ConfinedDir(%q) accepted a file", tt.path)
			}
		case err != nil || got != tt.want:
			t.Errorf("ConfinedDir(%q) = %q, %v; want %q", tt.path, got, err, tt.want)
		}
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
