package builtins

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
	tests := []struct {
		path string
		want string // "" means refused
	}{
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
	t.Run("no root", func(t *testing.T) {
		if _, err := ResolvePath("", "x"); err == nil {
			t.Error("an empty root was accepted")
		}
	})
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}
