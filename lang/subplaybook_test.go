package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// writeSubChain writes n playbooks p1.hcl … pn.hcl in dir; each but the
// last runs the next twice.
func writeSubChain(t *testing.T, dir string, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		var b strings.Builder
		fmt.Fprintf(&b, "playbook \"p%d\" {}\n", i)
		if i == n {
			b.WriteString("step \"leaf\" {\n  shell { command = [\"true\"] }\n}\n")
		} else {
			for _, s := range []string{"first", "second"} {
				fmt.Fprintf(&b, "step %q {\n  playbook { source = \"p%d.hcl\" }\n}\n", s, i+1)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("p%d.hcl", i)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSubPlaybookLoadedOnce is the regression test of sub-playbooks loaded
// again for every step that runs them: 15 playbooks each running the next
// twice were loaded 2^14 times (20 s). Each must be loaded once per load,
// so both steps of a playbook share the same sub-playbook.
func TestSubPlaybookLoadedOnce(t *testing.T) {
	dir := t.TempDir()
	const n = 15
	writeSubChain(t, dir, n)
	pb, diags := Load(filepath.Join(dir, "p1.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	loads := map[*Playbook]bool{}
	for p, i := pb, 1; i < n; i++ {
		first := p.Step("first").Action.(*SubPlaybook).Playbook
		second := p.Step("second").Action.(*SubPlaybook).Playbook
		if first != second {
			t.Fatalf("p%d loads p%d twice", i, i+1)
		}
		loads[first] = true
		p = first
	}
	if len(loads) != n-1 {
		t.Errorf("%d sub-playbook loads, want %d", len(loads), n-1)
	}
}

// TestSubPlaybookCacheKeepsCycles checks that a cycle is still found when
// the playbook that closes it was loaded before by another path.
func TestSubPlaybookCacheKeepsCycles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.hcl": "playbook \"a\" {}\nstep \"b\" {\n  playbook { source = \"b.hcl\" }\n}\nstep \"c\" {\n  playbook { source = \"c.hcl\" }\n}\n",
		"b.hcl": "playbook \"b\" {}\nstep \"c\" {\n  playbook { source = \"c.hcl\" }\n}\n",
		"c.hcl": "playbook \"c\" {}\nstep \"b\" {\n  playbook { source = \"./b.hcl\" }\n}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, diags := Load(filepath.Join(dir, "a.hcl"))
	if !diags.HasErrors() {
		t.Fatal("no error for b → c → b")
	}
	for _, d := range diags {
		if d.Subject == nil || d.Subject.Start.Line != 3 && d.Subject.Start.Line != 6 {
			t.Errorf("diagnostic not on a step of a.hcl: %s", d)
		}
	}
	if !strings.Contains(diags.Error(), "calls itself") {
		t.Errorf("diagnostics %s do not name the cycle", diags)
	}
}

// A playbook's Files load it, its sub-playbooks and their prompt files
// and upstreams, where none of its files is left (apl worker on another
// machine).
func TestFilesLoadWithoutTheFileSystem(t *testing.T) {
	dir := markRepo(t, t.TempDir())
	files := map[string]string{
		"main/playbook.hcl":  "playbook \"main\" {}\nstep \"other\" {\n  playbook { source = \"../other\" }\n}\n",
		"other/a.hcl":        "extends = \"../base.hcl\"\nplaybook \"other\" {}\nprompt \"p\" {\n  template = file(\"prompts/p.md\")\n}\n",
		"other/prompts/p.md": "Say ${inputs.word}.",
		"base.hcl": "playbook \"base\" {}\ninput \"word\" {\n  type    = string\n  default = \"hi\"\n}\n" +
			"step \"say\" {\n  shell { command = [\"echo\", inputs.word] }\n}\n",
	}
	for name, src := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ref := filepath.Join(dir, "main")
	pb, diags := Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got, err := Files(pb)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(files) {
		t.Errorf("Files: %d files, want %d: %v", len(got), len(files), got)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	again, diags := (&Loader{Files: got}).Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if again.Hash != pb.Hash {
		t.Errorf("hash %s, want %s", again.Hash, pb.Hash)
	}
	sub := again.Step("other").Action.(*SubPlaybook).Playbook
	if sub == nil || sub.Step("say") == nil || sub.Prompts["p"] == nil {
		t.Fatalf("the sub-playbook did not load whole: %+v", sub)
	}
	if sub.Hash != pb.Step("other").Action.(*SubPlaybook).Playbook.Hash {
		t.Error("the sub-playbook's hash changed")
	}
}

// With a Cache, a playbook loaded as another's sub-playbook is not read
// again when it is loaded itself (apl validate PARENT CHILD): the same
// Playbook comes back, whichever is loaded first.
func TestCacheServesLoadAfterSubLoad(t *testing.T) {
	dir := writeTree(t, markRepo(t, t.TempDir()), map[string]string{
		"child/main.hcl":  "playbook \"child\" {}\nstep \"work\" {\n  shell {\n    command = [\"true\"]\n  }\n}\n",
		"parent/main.hcl": "playbook \"parent\" {}\nstep \"phase\" {\n  playbook {\n    source = \"../child\"\n  }\n}\n",
	})
	ld := &Loader{Cache: NewCache()}
	parent, diags := ld.Load(dir + "/parent")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	child, diags := ld.Load(dir + "/child")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	sub := parent.Step("phase").Action.(*SubPlaybook).Playbook
	if child != sub {
		t.Errorf("loading the child again read it again: %p, its sub-playbook load %p", child, sub)
	}
}

// Loads through one Cache may run at once (apl validate loads its
// playbooks in parallel): a playbook that one load is loading is waited
// for by a load that runs it, not loaded twice, and two playbooks that
// run each other, loaded at once, report the cycle instead of each
// waiting for the other forever.
func TestCacheParallelLoads(t *testing.T) {
	dir := t.TempDir()
	writeSubChain(t, dir, 6)
	files := map[string]string{
		"a.hcl": "playbook \"a\" {}\nstep \"b\" {\n  playbook { source = \"b.hcl\" }\n}\n",
		"b.hcl": "playbook \"b\" {}\nstep \"a\" {\n  playbook { source = \"a.hcl\" }\n}\n",
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		ld := &Loader{Cache: NewCache()}
		refs := []string{"p1.hcl", "p2.hcl", "p3.hcl", "p4.hcl", "p5.hcl", "p6.hcl", "a.hcl", "b.hcl"}
		pbs := make([]*Playbook, len(refs))
		diags := make([]hcl.Diagnostics, len(refs))
		var wg sync.WaitGroup
		for i, ref := range refs {
			wg.Go(func() { pbs[i], diags[i] = ld.Load(filepath.Join(dir, ref)) })
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Fatal("parallel loads did not finish: waiting for each other")
		}
		for i := range 6 {
			if diags[i].HasErrors() {
				t.Fatalf("%s: %s", refs[i], diags[i])
			}
		}
		for i := range 5 {
			if sub := pbs[i].Step("first").Action.(*SubPlaybook).Playbook; sub != pbs[i+1] {
				t.Errorf("%s's sub-playbook is another load of %s than the one loaded itself", refs[i], refs[i+1])
			}
		}
		for i := 6; i < 8; i++ {
			if !strings.Contains(diags[i].Error(), "calls itself") {
				t.Errorf("%s: diagnostics %s do not name the cycle", refs[i], diags[i])
			}
		}
	}
}
