package lsp

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
)

// aplLoader is the loader apl's commands use.
func aplLoader(root string) lang.Loader {
	return lang.Loader{Stdlib: stdlib.FS(), Builtins: builtins.Funcs().Names(), Signatures: builtins.Funcs(),
		DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}, Root: root}
}

// BenchmarkDidChangePhaseRunner measures a one-character edit in a copy
// of stdlib:phase-runner, warm, to its diagnostics published.
func BenchmarkDidChangePhaseRunner(b *testing.B) {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(root, "phase-runner")
	fsys := stdlib.FS()
	err = fs.WalkDir(fsys, "phase-runner", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		out := filepath.Join(root, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(out), 0o755)
		return os.WriteFile(out, src, 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var file string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".hcl") && !strings.HasSuffix(e.Name(), "_test.hcl") {
			file = filepath.Join(dir, e.Name())
			break
		}
	}
	text, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	c := newClient(b, Options{Loader: aplLoader(root)})
	c.request("initialize", map[string]any{})
	uri := pathURI(file)
	open(c, uri, string(text))
	if ds := c.diagnostics(uri); len(ds) != 0 {
		b.Fatalf("diagnostics of %s: %v", path.Base(file), ds)
	}
	end := position(text, len(text))
	b.ResetTimer()
	for i := range b.N {
		ch := " "
		if i%2 == 1 {
			ch = "#"
		}
		c.notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": i + 2},
			"contentChanges": []any{map[string]any{"range": map[string]any{"start": end, "end": end}, "text": ch}},
		})
		end.Character++
		c.diagnostics(uri)
	}
}
