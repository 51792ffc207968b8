package lsp

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEditParsesOnlyTheEditedFile: a playbook of three files with a test
// file, one of them open; an edit parses that file again, not the others
// nor the test file.
func TestEditParsesOnlyTheEditedFile(t *testing.T) {
	main := demo
	root := project(t, map[string]string{
		"pb/main.hcl":       main,
		"pb/agents.hcl":     "agent \"other\" {\n  type = \"general-purpose\"\n}\n",
		"pb/prompts.hcl":    "prompt \"p\" {\n  template = file(\"p.md\")\n}\n",
		"pb/p.md":           "Say ${inputs.phase}.\n",
		"pb/tests/a.hcl":    "mock \"rate\" {\n  output = { score = 1 }\n}\n",
		"pb/extra_test.hcl": "test \"t\" {\n  expect {\n    path = [\"rate\", \"report\"]\n  }\n}\n",
	})
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "pb", "main.hcl"))
	open(c, uri, main)
	c.diagnostics(uri)
	idle(c)
	before := c.srv.parses.Stats()
	c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"range": Range{Position{1, 2}, Position{1, 2}}, "text": "x"}}})
	c.diagnostics(uri)
	idle(c)
	after := c.srv.parses.Stats()
	if after.Misses != before.Misses+1 {
		t.Errorf("an edit parsed %d files, want 1 (the edited one): %+v then %+v", after.Misses-before.Misses, before, after)
	}
	if after.Hits == before.Hits {
		t.Errorf("an edit took no parsed file from the cache: %+v then %+v", before, after)
	}
}

// TestPlaybooksBeyondTheBoundArePutAway opens more playbooks than the
// server keeps loaded, the last by name first: the least recently used
// are put away, their diagnostics kept, and loaded again when asked
// about.
func TestPlaybooksBeyondTheBoundArePutAway(t *testing.T) {
	files := map[string]string{}
	broken := strings.Replace(demo, `next = "report"`, `next = "reprt"`, 1)
	n := maxBooks + 3
	for i := range n {
		files[fmt.Sprintf("pb%02d/main.hcl", i)] = broken
	}
	root := project(t, files)
	c := initialized(t, root)
	uri := func(i int) string { return pathURI(filepath.Join(root, fmt.Sprintf("pb%02d", i), "main.hcl")) }
	for i := n - 1; i >= 0; i-- {
		open(c, uri(i), broken)
		if ds := c.diagnostics(uri(i)); len(ds) == 0 {
			t.Fatalf("diagnostics of playbook %d: %v", i, ds)
		}
	}
	idle(c)
	loaded := func() string {
		var out []string
		for ref, b := range c.srv.books {
			if b.pb != nil {
				out = append(out, filepath.Base(ref))
			}
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	var want []string
	for i := range maxBooks {
		want = append(want, fmt.Sprintf("pb%02d", i))
	}
	if got := loaded(); len(c.srv.books) != n || got != strings.Join(want, " ") {
		t.Errorf("%d playbooks open, the last by name first: %d known, loaded %s; want the %d opened last", n, len(c.srv.books), got, maxBooks)
	}
	// The first opened, put away, still answers, loaded again; its
	// diagnostics were never cleared. The least recently used of the
	// others is put away for it.
	r := c.request("textDocument/hover", map[string]any{"textDocument": map[string]any{"uri": uri(n - 1)}, "position": at(broken, "steps.rate", 0, 8)})
	if got := fmt.Sprint(r["result"]); !strings.Contains(got, "agent step") {
		t.Errorf("hover in a playbook put away: %s", got)
	}
	for _, m := range c.notes {
		if p, _ := m["params"].(map[string]any); p != nil && p["uri"] == uri(n-1) {
			t.Errorf("the diagnostics of a playbook put away were published again: %v", p)
		}
	}
	want = append(want[:maxBooks-1], fmt.Sprintf("pb%02d", n-1))
	if got := loaded(); got != strings.Join(want, " ") {
		t.Errorf("after a hover in pb%02d, loaded %s", n-1, got)
	}
}

// TestTestFilesCheckedAfterAnEdit: an edit of the playbook that breaks
// its test file (a step renamed) is published for the edited file first,
// and then for the test file, unopened, as the playbook is now.
func TestTestFilesCheckedAfterAnEdit(t *testing.T) {
	root := project(t, map[string]string{
		"pb/main.hcl":      demo,
		"pb/main_test.hcl": "test \"t\" {\n  expect {\n    path = [\"rate\", \"report\"]\n  }\n}\n",
	})
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "pb", "main.hcl"))
	testURI := pathURI(filepath.Join(root, "pb", "main_test.hcl"))
	open(c, uri, demo)
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("diagnostics: %v", ds)
	}
	idle(c)
	c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"text": strings.ReplaceAll(demo, `"report"`, `"final"`)}}})
	var order []string
	for len(order) < 2 {
		m := c.next()
		p, _ := m["params"].(map[string]any)
		if p == nil {
			continue
		}
		order = append(order, fmt.Sprint(p["uri"]))
		if p["uri"] == testURI && !strings.Contains(fmt.Sprint(p["diagnostics"]), "report") {
			t.Errorf("the test file's diagnostics: %v", p["diagnostics"])
		}
	}
	if order[0] != uri || order[1] != testURI {
		t.Errorf("published for %v, want the edited file and then its test file", order)
	}
}

// TestEditsInABurstCheckedOnce: edits that arrive together (fast typing)
// are checked once, after the last, and its diagnostics are published.
func TestEditsInABurstCheckedOnce(t *testing.T) {
	root := project(t, nil)
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main.hcl"))
	open(c, uri, demo)
	c.diagnostics(uri)
	idle(c)
	var burst strings.Builder
	for i, text := range []string{"r", "re", "rep"} {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": i + 2},
			"contentChanges": []any{map[string]any{"text": strings.Replace(demo, `next = "report"`, `next = "`+text+`"`, 1)}}}})
		fmt.Fprintf(&burst, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	io.WriteString(c.in, burst.String())
	ds := c.diagnostics(uri)
	if !strings.Contains(fmt.Sprint(ds), `"rep"`) {
		t.Errorf("the diagnostics after a burst are not of its last edit: %v", ds)
	}
	idle(c)
	for _, m := range c.notes {
		if p, _ := m["params"].(map[string]any); p != nil && p["uri"] == uri {
			t.Errorf("a burst of edits was published more than once: %v", p)
		}
	}
}
