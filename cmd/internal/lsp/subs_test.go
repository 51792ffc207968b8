package lsp

import (
	"bytes"
	"encoding/json"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apl-lang/apl/lang"
)

// TestSubPlaybookKeptAcrossEdits: a playbook runs another, which extends
// a third and reads a prompt file. An edit of the first does not load
// the sub-playbook again; a change to any file the sub-playbook read
// (its upstream's, its prompt file, a new file beside it), on disk or in
// the editor, does: after each, the diagnostics are those a server that
// never loaded anything publishes.
func TestSubPlaybookKeptAcrossEdits(t *testing.T) {
	mainText := "playbook \"main\" {\n  description = \"d\"\n}\nstep \"other\" {\n  playbook {\n    source = \"../other\"\n    inputs = { word = \"yo\" }\n  }\n}\n"
	base := "playbook \"base\" {}\ninput \"word\" {\n  type    = string\n  default = \"hi\"\n}\n" +
		"step \"say\" {\n  shell { command = [\"echo\", inputs.word] }\n}\n"
	other := "extends = \"../base.hcl\"\nplaybook \"other\" {}\nprompt \"p\" {\n  template = file(\"prompts/p.md\")\n}\n"
	root := project(t, map[string]string{
		"main/playbook.hcl":  mainText,
		"other/a.hcl":        other,
		"other/prompts/p.md": "Say ${inputs.word}.",
		"base.hcl":           base,
	})
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main", "playbook.hcl"))
	open(c, uri, mainText)
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Fatalf("diagnostics on open: %v", ds)
	}
	sub := func() *lang.Playbook {
		idle(c)
		b := c.srv.books[filepath.Join(root, "main")]
		if b == nil || b.pb == nil || b.pb.Step("other") == nil {
			t.Fatal("the playbook main is not loaded")
		}
		a, _ := b.pb.Step("other").Action.(*lang.SubPlaybook)
		if a == nil {
			t.Fatal("step other runs no sub-playbook")
		}
		return a.Playbook
	}
	version := 1
	docs := map[string]string{uri: mainText}
	// edit types a space at the end of main's description and returns
	// what is published for it, checking it against a fresh server.
	edit := func(what string) []any {
		t.Helper()
		version++
		c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version},
			"contentChanges": []any{map[string]any{"range": Range{Position{1, 17}, Position{1, 17}}, "text": " "}}})
		ds := c.diagnostics(uri)
		docs[uri] = docs[uri][:36] + " " + docs[uri][36:]
		f := initialized(t, root)
		for u, text := range docs {
			if u != uri {
				open(f, u, text)
			}
		}
		idle(f)
		open(f, uri, docs[uri])
		want := f.diagnostics(uri)
		if got, want := jsonOf(ds), jsonOf(want); got != want {
			t.Errorf("%s: the server publishes\n%s\na fresh server\n%s", what, got, want)
		}
		return ds
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	first := sub()
	if ds := edit("an edit of main"); len(ds) != 0 {
		t.Errorf("diagnostics after an edit of main: %v", ds)
	}
	if sub() != first {
		t.Error("an edit of main loaded its sub-playbook again")
	}

	write("base.hcl", base[:30]+"phrase"+base[34:])
	if ds := edit("the sub-playbook's upstream renamed its input"); len(ds) == 0 {
		t.Error("no diagnostic for an input the sub-playbook no longer has")
	}
	write("base.hcl", base)
	write("other/prompts/p.md", "Say ${inputs.nope}.")
	if ds := edit("the sub-playbook's prompt file reads an input that is not there"); len(ds) == 0 {
		t.Error("no diagnostic for a sub-playbook whose prompt file is wrong")
	}
	write("other/prompts/p.md", "Say ${inputs.word}.")
	if ds := edit("the prompt file mended"); len(ds) != 0 {
		t.Errorf("diagnostics after the prompt file was mended: %v", ds)
	}
	kept := sub()
	write("other/b.hcl", "step \"again\" {\n  shell { command = [\"echo\", inputs.missing] }\n}\n")
	if ds := edit("a new file beside the sub-playbook's"); len(ds) == 0 {
		t.Error("no diagnostic for a new file of the sub-playbook that reads a missing input")
	}
	os.Remove(filepath.Join(root, "other", "b.hcl"))
	edit("the new file removed")
	if sub() == kept {
		t.Error("the sub-playbook was not loaded again after a file appeared beside it")
	}

	// An unsaved buffer of the sub-playbook's file counts, not the disk's.
	otherURI := pathURI(filepath.Join(root, "other", "a.hcl"))
	broken := other + "step \"x\" {\n  shell { command = [inputs.none] }\n}\n"
	open(c, otherURI, broken)
	docs[otherURI] = broken
	idle(c)
	if ds := edit("the sub-playbook's file open with a change"); len(ds) == 0 {
		t.Error("no diagnostic for the sub-playbook's unsaved change")
	}
}

// TestBrokenSubPlaybookMended is the regression test of a playbook whose
// sub-playbook did not load: the files of the sub-playbook were not among
// those the parent's load read, so mending the sub-playbook in the editor
// left the parent's diagnostic in place.
func TestBrokenSubPlaybookMended(t *testing.T) {
	mainText := "playbook \"main\" {}\nstep \"other\" {\n  playbook {\n    source = \"../other\"\n  }\n}\n"
	good := "playbook \"other\" {}\nstep \"say\" {\n  shell { command = [\"echo\", \"hi\"] }\n}\n"
	bad := strings.Replace(good, `"hi"`, `inputs.nope`, 1)
	root := project(t, map[string]string{"main/playbook.hcl": mainText, "other/a.hcl": bad})
	c := initialized(t, root)
	uri := pathURI(filepath.Join(root, "main", "playbook.hcl"))
	open(c, uri, mainText)
	if ds := c.diagnostics(uri); len(ds) != 1 {
		t.Fatalf("diagnostics of main, whose sub-playbook does not load: %v", ds)
	}
	other := pathURI(filepath.Join(root, "other", "a.hcl"))
	open(c, other, bad)
	idle(c)
	c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": other, "version": 2},
		"contentChanges": []any{map[string]any{"text": good}}})
	if ds := c.diagnostics(uri); len(ds) != 0 {
		t.Errorf("diagnostics of main once its sub-playbook is mended: %v", ds)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestKeptLoadsAgreeUnderRandomEdits copies every stdlib playbook into a
// project, orchestrator running phase-runner as a sub-playbook from
// there, opens a file of orchestrator and of phase-runner and applies
// random edits to the playbooks' files and prompt files (opening each
// as it is first edited): letters typed after a quote,
// random characters, deletions, files put back as they were. After each
// edit, what the server has published for every open file must be what
// a server that opens the same buffers afresh publishes: a kept
// sub-playbook load, a kept parse or a playbook left as it was never
// shows anything a full load would not.
func TestKeptLoadsAgreeUnderRandomEdits(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"orchestrator", "phase-runner", "conductor", "risk-pipeline"} {
		copyStdlibTo(t, root, name, name)
	}
	steps := filepath.Join(root, "orchestrator", "steps.hcl")
	b, err := os.ReadFile(steps)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte(`source = "stdlib:phase-runner"`), []byte(`source = "../phase-runner"`), 1)
	if err := os.WriteFile(steps, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, pattern := range []string{"*/*.hcl", "*/prompts/*.md"} {
		m, _ := filepath.Glob(filepath.Join(root, pattern))
		files = append(files, m...)
	}
	original, text := map[string]string{}, map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		original[f], text[f] = string(b), string(b)
	}
	opts := Options{Loader: aplLoader(root)}
	c := newClient(t, opts)
	c.request("initialize", map[string]any{})
	version := map[string]int{}
	openFile := func(f string) {
		if version[f] == 0 {
			version[f] = 1
			open(c, pathURI(f), text[f])
		}
	}
	openFile(steps)
	openFile(filepath.Join(root, "phase-runner", "steps-1-preflight.hcl"))
	idle(c)
	if p := c.srv.published[pathURI(steps)]; p != "[]" {
		t.Fatalf("orchestrator's copy has diagnostics: %s", p)
	}

	r := rand.New(rand.NewPCG(7, 22))
	edits := 12 // each compared with a fresh server's loads of all it has open
	if testing.Short() {
		edits = 3
	}
	for i := range edits {
		f := files[r.IntN(len(files))]
		openFile(f)
		old := text[f]
		at := func() int { // a rune boundary
			n := r.IntN(len(old) + 1)
			for n < len(old) && !utf8.RuneStart(old[n]) {
				n++
			}
			return n
		}
		start, end, insert, what := 0, 0, "", ""
		switch k := r.IntN(10); {
		case k < 4:
			quotes := strings.Count(old, `"`)
			if quotes == 0 {
				continue
			}
			n, j := r.IntN(quotes), -1
			for ; n >= 0; n-- {
				j += 1 + strings.Index(old[j+1:], `"`)
			}
			start, end, insert, what = j+1, j+1, string(rune('a'+r.IntN(26))), "a letter after a quote"
		case k < 6:
			start = at()
			end, insert, what = start, string(" x{}\"=\n$#."[r.IntN(11)]), "a character"
		case k < 9:
			start = at()
			end = start
			for range 1 + r.IntN(5) {
				if end < len(old) {
					_, size := utf8.DecodeRuneInString(old[end:])
					end += size
				}
			}
			what = "a deletion"
		default:
			start, end, insert, what = 0, len(old), original[f], "the file put back"
		}
		version[f]++
		c.notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": pathURI(f), "version": version[f]},
			"contentChanges": []any{map[string]any{"range": Range{position([]byte(old), start), position([]byte(old), end)}, "text": insert}},
		})
		text[f] = old[:start] + insert + old[end:]
		idle(c)

		fresh := newClient(t, opts)
		fresh.request("initialize", map[string]any{})
		for _, g := range slices.Sorted(maps.Keys(version)) {
			open(fresh, pathURI(g), text[g])
		}
		idle(fresh)
		for _, g := range slices.Sorted(maps.Keys(version)) {
			u := pathURI(g)
			if got, want := c.srv.published[u], fresh.srv.published[u]; got != want {
				rel, _ := filepath.Rel(root, f)
				t.Fatalf("edit %d, %s in %s at %d: the server published for %s\n%s\na fresh server\n%s", i, what, rel, start, g, got, want)
			}
		}
	}
}
