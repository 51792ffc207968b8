package builtins

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

func TestGlob(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, f := range []string{
		"main.go", "README.md", ".hidden.go",
		"src/a.go", "src/a_test.go", "src/b.txt",
		"src/deep/er/c.go", "src/deep/er/d.md",
		"docs/x.md",
		".git/objects/o.go",
		"src/.git/config.go",
	} {
		writeFile(t, filepath.Join(root, f), "")
	}
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.go"), "")
	if err := os.Symlink(outside, filepath.Join(root, "src", "link")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		pattern string
		want    []string
	}{
		{"*.go", []string{".hidden.go", "main.go"}},
		{"src/*.go", []string{"src/a.go", "src/a_test.go"}},
		{"src/*", []string{"src/.git", "src/a.go", "src/a_test.go", "src/b.txt", "src/deep"}},
		{"*/*.md", []string{"docs/x.md"}},
		{"src/?.go", []string{"src/a.go"}},
		{"nothing*", []string{}},
		{"src/**/*.go", []string{"src/a.go", "src/a_test.go", "src/deep/er/c.go"}},
		{"**/*.md", []string{"README.md", "docs/x.md", "src/deep/er/d.md"}},
		{"**/er", []string{"src/deep/er"}},
		{"src/**", []string{"src", "src/a.go", "src/a_test.go", "src/b.txt", "src/deep", "src/deep/er", "src/deep/er/c.go", "src/deep/er/d.md"}}, // not src/link: it leads outside
		{"missing/**/*.go", []string{}},
		{"./src/../*.md", []string{"README.md"}},
		{filepath.Join(root, "docs", "*.md"), []string{"docs/x.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.pattern, func(t *testing.T) {
			got, err := Glob(root, tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Glob(%q) (-want +got):\n%s", tt.pattern, diff)
			}
		})
	}

	t.Run("symlink out is dropped", func(t *testing.T) {
		got, err := Glob(root, "src/link/*.go")
		if err != nil || len(got) != 0 {
			t.Errorf("got %v, %v; want no matches", got, err)
		}
	})
	t.Run("as a builtin", func(t *testing.T) {
		got, err := call("glob", Env{Workdir: root}, map[string]cty.Value{"pattern": str("docs/*")})
		want := cty.ObjectVal(map[string]cty.Value{"matches": cty.ListVal([]cty.Value{str("docs/x.md")})})
		if err != nil || !got.RawEquals(want) {
			t.Errorf("got %#v, %v", got, err)
		}
		got, err = call("glob", Env{Workdir: root}, map[string]cty.Value{"pattern": str("none")})
		if err != nil || !got.GetAttr("matches").RawEquals(cty.ListValEmpty(cty.String)) {
			t.Errorf("no matches: got %#v, %v; want an empty list of string", got, err)
		}
	})
}

func TestMatchSegs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pat, name string
		want      bool
	}{
		{"**", "", true},
		{"**", "a/b/c", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"**/**/x", "x", true},
		{"a/*/c", "a/b/b/c", false},
	}
	for _, tt := range tests {
		var name []string
		if tt.name != "" {
			name = splitSlash(tt.name)
		}
		if got := matchSegs(splitSlash(tt.pat), name); got != tt.want {
			t.Errorf("matchSegs(%q, %q) = %v, want %v", tt.pat, tt.name, got, tt.want)
		}
	}
}

func splitSlash(s string) []string { return strings.Split(s, "/") }
