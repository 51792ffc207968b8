package lang

import (
	"maps"
	"slices"
	"testing"
)

// TestFileCallSyntaxErrorRange is what FuzzLoad found: after a syntax
// error inside file( ... the partial call's range ends at 0:0, before it
// starts, and the loader reports "Invalid file call" with that range on
// top of the syntax error; a snippet of it shows the wrong text.
func TestFileCallSyntaxErrorRange(t *testing.T) {
	src := "playbook \"x\" {}\nstep \"s\" {\nagent \"a\" {prompt=file(\"\","
	pb, diags := (&Loader{}).LoadSources(map[string][]byte{"fuzz.hcl": []byte(src)}, t.TempDir())
	checkDiagnostics(t, pb, diags)
	for _, d := range diags {
		if d.Summary == "Invalid file call" {
			t.Errorf("a syntax error in file( also reports %s", d)
		}
	}
}

// TestFilePrompt checks that a prompt read with file() keeps the file's
// text as its template and that the file becomes a source, so diagnostics
// in it can be shown.
func TestFilePrompt(t *testing.T) {
	pb, diags := Load("testdata/valid/prompts.hcl")
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	p := pb.Prompts["review"]
	if p == nil || p.Template == nil {
		t.Fatal("prompt review has no template")
	}
	if got := p.Template.Range().Filename; got != "testdata/valid/prompts/review.md" {
		t.Errorf("template range is in %q, want the prompt file", got)
	}
	if pb.Sources["testdata/valid/prompts/review.md"] == nil {
		t.Errorf("the prompt file is not among the sources: %v", slices.Sorted(maps.Keys(pb.Sources)))
	}
	if pb.Step("review").Action.(*AgentCall).Prompt != p {
		t.Errorf("step review does not use prompt review")
	}
}
