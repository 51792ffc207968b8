package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

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

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
