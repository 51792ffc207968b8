package temporal

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
)

// A document's write after the first sends what changed, not the whole
// document, and the worker makes the whole document from the one it
// holds; a document changed on the worker meanwhile is refused, so that
// the whole is sent instead.
func TestDocumentWriteIsADiff(t *testing.T) {
	root := t.TempDir()
	f := interp.DocumentFile{Path: "out/state.json"}
	old := []byte(`{"pad": "` + strings.Repeat(" ", 4096) + `", "items": {"a": "completed"}, "after": null}`)
	if err := os.MkdirAll(filepath.Join(root, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, now := range []string{
		`{"pad": "` + strings.Repeat(" ", 4096) + `", "items": {"a": "completed", "b": "failed"}, "after": null}`,
		`{"pad": "` + strings.Repeat(" ", 4096) + `", "items": {}, "after": "done"}`,
		`{"pad": "` + strings.Repeat(" ", 4096) + `"}`,
		string(old),
		`{}`,
	} {
		if err := os.WriteFile(filepath.Join(root, f.Path), old, 0o644); err != nil {
			t.Fatal(err)
		}
		op := diff(docOp{File: f, Data: []byte(now)}, old)
		if len(old) >= diffMin && len(now) >= diffMin && (op.Base == "" || len(op.Data) > 64) {
			t.Errorf("the write of %.40q… sends %d bytes (base %q), want what changed alone", now, len(op.Data), op.Base)
		}
		got, err := patched(root, op)
		if err != nil || string(got) != now {
			t.Errorf("patched document:\n got %q (%v)\nwant %q", got, err, now)
		}
	}
	op := diff(docOp{File: f, Data: []byte(`{"pad": "` + strings.Repeat(" ", 4096) + `", "after": 1}`)}, old)
	if err := os.WriteFile(filepath.Join(root, f.Path), []byte("edited by hand"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := patched(root, op); agent.Kind(err) != staleDocument {
		t.Errorf("a diff of a document changed meanwhile: %v, want a %q failure", err, staleDocument)
	}
}
