package lsp

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
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
// of stdlib:phase-runner, open in the server and warm, to the edited
// file's diagnostics published, through the stdio protocol in-process:
// typing at the end of its first file (failure.hcl), and typing and
// deleting a letter in the description of its first step
// (steps-1-preflight.hcl; before the pipeline was split into five files,
// the middle of steps.hcl). The wait for the server to finish the rest of the edit's
// work (the test files' check) is not counted: it is the latency a user
// sees, edits being seconds apart.
func BenchmarkDidChangePhaseRunner(b *testing.B) {
	b.Run("end-of-failure.hcl", func(b *testing.B) {
		c, uri, text := phaseRunner(b, "failure.hcl")
		end := position(text, len(text))
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			ch := " "
			if i%2 == 1 {
				ch = "#"
			}
			edit(b, c, uri, i+2, Range{end, end}, ch)
			end.Character++
		}
	})
	b.Run("steps-1-preflight.hcl", func(b *testing.B) {
		typeAndDelete(b, "phase-runner", "steps-1-preflight.hcl", `"Find`)
	})
}

// BenchmarkDidChangeOrchestrator measures an edit of a copy of
// stdlib:orchestrator, which runs stdlib:phase-runner as a sub-playbook:
// typing and deleting a letter in a description of its steps.hcl, to its
// diagnostics published. The sub-playbook's load is kept across edits
// (Loader.Subs), so an edit decodes the orchestrator alone.
func BenchmarkDidChangeOrchestrator(b *testing.B) {
	typeAndDelete(b, "orchestrator", "steps.hcl", `"The`)
}

// typeAndDelete opens file of a copy of the stdlib playbook name and, at
// each edit, types a letter after the first occurrence of word in it or
// deletes it again.
func typeAndDelete(b *testing.B, name, file, word string) {
	c, uri, text := openStdlibCopy(b, name, file)
	at := position(text, strings.Index(string(text), word)+len(word))
	after := Position{at.Line, at.Character + 1}
	defer reportCPU(b)()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			edit(b, c, uri, i+2, Range{at, at}, "s")
		} else {
			edit(b, c, uri, i+2, Range{at, after}, "")
		}
	}
}

// BenchmarkOpen100Playbooks opens 100 copies of stdlib:phase-runner, each
// in its own directory, one file of each, and reports the heap the
// server holds then (after a collection): with the loaded playbooks
// bounded (maxBooks) and the parse cache bounded (parseCacheBytes), it
// stays the same however many more are opened. APL_BENCH_ITEMS opens
// fewer, for a quick look (make test).
func BenchmarkOpen100Playbooks(b *testing.B) {
	n := 100
	if m, err := strconv.Atoi(os.Getenv("APL_BENCH_ITEMS")); err == nil && m > 0 {
		n = min(n, m)
	}
	root := copyStdlib(b, "phase-runner", n)
	for b.Loop() {
		c := newClient(b, Options{Loader: aplLoader(root), HeapHeadroom: HeapHeadroom})
		c.request("initialize", map[string]any{})
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range n {
			path := filepath.Join(root, fmt.Sprintf("pb%03d", i), "failure.hcl")
			text, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			open(c, pathURI(path), string(text))
			idle(c)
		}
		var after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
		c.request("shutdown", nil)
		c.notify("exit", nil)
		<-c.done
	}
}

// copyStdlib copies the stdlib playbook name into a new project: into a
// directory of its name, or for n > 0 into n directories pb000, pb001, ….
func copyStdlib(b testing.TB, name string, n int) string {
	root, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	dirs := []string{name}
	if n > 0 {
		dirs = nil
		for i := range n {
			dirs = append(dirs, fmt.Sprintf("pb%03d", i))
		}
	}
	copyStdlibTo(b, root, name, dirs...)
	return root
}

// copyStdlibTo copies the files of the stdlib playbook name into each of
// dirs below root.
func copyStdlibTo(b testing.TB, root, name string, dirs ...string) {
	fsys := stdlib.FS()
	err := fs.WalkDir(fsys, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		for _, dir := range dirs {
			out := filepath.Join(root, dir, filepath.FromSlash(strings.TrimPrefix(p, name+"/")))
			os.MkdirAll(filepath.Dir(out), 0o755)
			if err := os.WriteFile(out, src, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

// reportCPU, deferred, reports the CPU time the process used per edit,
// the tests' check included: what an edit costs, whoever else runs.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N)/1e6, "cpu-ms/op")
		}
	}
}

// phaseRunner copies stdlib:phase-runner into a project, starts a server
// and opens file of it, checking that it has no diagnostics.
func phaseRunner(b *testing.B, file string) (*client, string, []byte) {
	return openStdlibCopy(b, "phase-runner", file)
}

// openStdlibCopy copies the stdlib playbook name into a project, starts
// a server and opens file of it, checking that it has no diagnostics.
func openStdlibCopy(b *testing.B, name, file string) (*client, string, []byte) {
	root := copyStdlib(b, name, 0)
	path := filepath.Join(root, name, file)
	text, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	c := newClient(b, Options{Loader: aplLoader(root), HeapHeadroom: HeapHeadroom})
	c.request("initialize", map[string]any{})
	uri := pathURI(path)
	open(c, uri, string(text))
	if ds := c.diagnostics(uri); len(ds) != 0 {
		b.Fatalf("diagnostics of %s: %v", file, ds)
	}
	idle(c)
	return c, uri, text
}

// edit sends one change of uri and waits for its diagnostics; then,
// with the timer stopped, for the server to finish the edit's work.
func edit(b *testing.B, c *client, uri string, version int, r Range, text string) {
	c.notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": version},
		"contentChanges": []any{map[string]any{"range": r, "text": text}},
	})
	if ds := c.diagnostics(uri); len(ds) != 0 {
		b.Fatalf("diagnostics after an edit: %v", ds)
	}
	b.StopTimer()
	idle(c)
	b.StartTimer()
}

// idle waits for the server to have handled every message sent so far:
// it answers requests in order.
func idle(c *client) {
	c.request("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": "file:///nowhere.hcl"}})
	c.notes = nil
}
