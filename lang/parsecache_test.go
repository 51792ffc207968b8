package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestParseCacheParsesOnlyWhatChanged loads a fork of a stdlib playbook
// (its own files, the upstream's, a prompt file, its tests) again and
// again with one cache: a second load parses nothing, an edit parses the
// file edited, and every load reports what a load without the cache does.
func TestParseCacheParsesOnlyWhatChanged(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"main.hcl":   "extends = \"stdlib:phase-runner\"\n\nplaybook \"fork\" {\n  description = \"A fork.\"\n}\n",
		"extra.hcl":  "prompt \"note\" {\n  template = file(\"note.md\")\n}\n",
		"note.md":    "A note for ${inputs.phase}.\n",
		"a_test.hcl": "mock \"find_phase\" {\n  output = { dir = \"x\" }\n}\n",
	}
	for n, text := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := NewParseCache(4 << 20)
	load := func(ld Loader) (*Playbook, string) {
		t.Helper()
		ld.Stdlib = os.DirFS("../stdlib/playbooks")
		ld.Root = dir
		pb, diags := ld.Load(dir)
		tests, err := ld.TestFiles(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, td := LoadTests(pb, tests)
		var out []string
		for _, d := range append(diags, td...) {
			out = append(out, d.Error())
		}
		return pb, strings.Join(out, "\n")
	}
	_, want := load(Loader{})
	_, got := load(Loader{Parses: c})
	if got != want {
		t.Fatalf("with a cache the load reports\n%s\nwithout\n%s", got, want)
	}
	first := c.Stats()
	if first.Hits != 0 || first.Misses == 0 {
		t.Fatalf("a first load: %+v", first)
	}
	_, got = load(Loader{Parses: c})
	if s := c.Stats(); s.Misses != first.Misses || got != want {
		t.Errorf("a second load parsed %d files again (%+v), reporting\n%s", s.Misses-first.Misses, s, got)
	}

	// One file edited: only it is parsed, and the edit is seen.
	edited := strings.Replace(files["main.hcl"], "A fork.", "A fork", 1) + "step \"nope\" {\n  next = \"nowhere\"\n}\n"
	before := c.Stats()
	_, want = load(Loader{Files: map[string][]byte{filepath.Join(dir, "main.hcl"): []byte(edited), filepath.Join(dir, "extra.hcl"): []byte(files["extra.hcl"])}})
	_, got = load(Loader{Parses: c, Files: map[string][]byte{filepath.Join(dir, "main.hcl"): []byte(edited), filepath.Join(dir, "extra.hcl"): []byte(files["extra.hcl"])}})
	if s := c.Stats(); s.Misses != before.Misses+1 {
		t.Errorf("an edit of one file parsed %d files, want 1", s.Misses-before.Misses)
	}
	if got != want || !strings.Contains(got, "nowhere") {
		t.Errorf("after an edit, with a cache the load reports\n%s\nwithout\n%s", got, want)
	}
}

// TestParseCacheBounded fills a small cache: it keeps the files most
// recently used up to its bound, and drops the others.
func TestParseCacheBounded(t *testing.T) {
	c := NewParseCache(1000)
	src := func(i int) []byte {
		return fmt.Appendf(nil, "playbook \"p%d\" {\n  description = %q\n}\n", i, strings.Repeat("x", 200))
	}
	for i := range 10 {
		c.Parse(src(i), fmt.Sprintf("f%d.hcl", i))
	}
	s := c.Stats()
	if s.Bytes > 1000 || s.Files != 1000/len(src(0)) {
		t.Errorf("a cache bounded at 1000 bytes holds %+v", s)
	}
	c.Parse(src(9), "f9.hcl")
	c.Parse(src(0), "f0.hcl")
	if s2 := c.Stats(); s2.Hits != s.Hits+1 || s2.Misses != s.Misses+1 {
		t.Errorf("the last file is kept and the first dropped: %+v then %+v", s, s2)
	}
	// The same name with other content is another file.
	f, _ := c.Parse([]byte("playbook \"other\" {}\n"), "f9.hcl")
	if got := f.Body.(*hclsyntax.Body).Blocks[0].Labels[0]; got != "other" {
		t.Errorf("a changed file is parsed again: its playbook is %q", got)
	}
}

// TestParseCachePrefetch parses a playbook's test files ahead of its
// load, as apl validate does: the check of the tests then parses nothing
// and reports what it reports without the prefetch.
func TestParseCachePrefetch(t *testing.T) {
	ld := Loader{Stdlib: os.DirFS("../stdlib/playbooks")}
	const ref = "stdlib:risk-pipeline"
	tests, err := ld.TestFiles(ref)
	if err != nil || len(tests) == 0 {
		t.Fatalf("TestFiles: %d files, %v", len(tests), err)
	}
	pb, diags := ld.Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, want := LoadTests(pb, tests)

	ld.Parses = NewParseCache(4 << 20)
	ld.Parses.Prefetch(tests)
	if s := ld.Parses.Stats(); s.Files != len(tests) || s.Misses != int64(len(tests)) {
		t.Fatalf("after a prefetch of %d files the cache holds %+v", len(tests), s)
	}
	pb, diags = ld.Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	before := ld.Parses.Stats()
	_, got := LoadTests(pb, tests)
	if s := ld.Parses.Stats(); s.Misses != before.Misses || s.Hits < before.Hits+int64(len(tests)) {
		t.Errorf("the tests' check parsed %d files again (%+v before, %+v after)", s.Misses-before.Misses, before, s)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after a prefetch the tests report\n%v\nwithout\n%v", got, want)
	}
}
