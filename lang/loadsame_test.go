package lang

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadsAgree loads every stdlib playbook, every example and every
// error fixture three ways: with nothing cached, the type checks on one
// goroutine and each prompt file read as its block is decoded; with parse
// and sub-playbook caches, the type checks shared between goroutines and
// the prompt files read ahead on several; again with the caches warm; and
// with the sub-playbook loads kept from the loads before (Loader.Subs).
// Each way must report the same diagnostics, in the same order, and the
// same graph: the caches and the parallel work only save time.
func TestLoadsAgree(t *testing.T) {
	var refs []string
	dirs, _ := filepath.Glob("../stdlib/playbooks/*")
	examples, _ := filepath.Glob("../examples/*")
	errs, _ := filepath.Glob("testdata/errors/*.hcl")
	valid, _ := filepath.Glob("testdata/valid/*")
	for _, d := range append(append(dirs, examples...), valid...) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			refs = append(refs, d)
		}
	}
	refs = append(refs, errs...)
	if len(refs) < 50 {
		t.Fatalf("found only %d playbooks", len(refs))
	}
	stdlib := os.DirFS("../stdlib/playbooks")
	load := func(ld *Loader, ref string) string {
		pb, diags := ld.Load(ref)
		var b strings.Builder
		for _, d := range diags {
			b.WriteString(d.Error() + "\n")
		}
		if pb != nil {
			b.WriteString(pb.String())
		}
		return b.String()
	}
	defer func(n, m int) { minParallelTypeChecks, minPrefetchTemplates = n, m }(minParallelTypeChecks, minPrefetchTemplates)
	parses, subs, kept := NewParseCache(64<<20), NewCache(), NewCache()
	for _, ref := range refs {
		minParallelTypeChecks, minPrefetchTemplates = 1<<30, 1<<30
		want := load(&Loader{Stdlib: stdlib}, ref)
		minParallelTypeChecks, minPrefetchTemplates = 2, 2
		for _, round := range []string{"cold", "warm"} {
			if got := load(&Loader{Stdlib: stdlib, Parses: parses, Cache: subs}, ref); got != want {
				t.Errorf("%s, caches %s, checks in parallel: the load reports\n%s\nwithout caches, on one goroutine\n%s", ref, round, got, want)
			}
		}
		if got := load(&Loader{Stdlib: stdlib, Parses: parses, Subs: kept}, ref); got != want {
			t.Errorf("%s, sub-playbook loads kept from earlier loads: the load reports\n%s\nwithout caches, on one goroutine\n%s", ref, got, want)
		}
	}
}
