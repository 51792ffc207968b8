package stdlib_test

import (
	"context"
	"io/fs"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp/playtest"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
)

func loader() *lang.Loader {
	return &lang.Loader{Stdlib: stdlib.FS(), Builtins: builtins.Funcs().Names(), DecodeAnswer: agent.CheckAnswer,
		CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}
}

// TestLoad loads every stdlib playbook as apl validate does: no errors and
// no warnings (STYLE 23).
func TestLoad(t *testing.T) {
	names := stdlib.Names()
	if len(names) == 0 {
		t.Fatal("no stdlib playbooks")
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			pb, diags := loader().Load(lang.StdlibPrefix + n)
			for _, d := range diags {
				t.Errorf("%s", d)
			}
			if pb != nil && pb.Description == "" {
				t.Errorf("stdlib:%s has no description for apl stdlib list", n)
			}
		})
	}
}

// TestTests runs each stdlib playbook's own tests, as apl test
// stdlib:NAME does: every playbook has some, they pass, and they take at
// least 95% of its branches, leaving out those its test files declare
// unreachable (apl test --cover).
func TestTests(t *testing.T) {
	for _, n := range stdlib.Names() {
		ref := lang.StdlibPrefix + n
		ld := loader()
		pb, diags := ld.Load(ref)
		if diags.HasErrors() {
			t.Fatalf("%s: %s", ref, diags)
		}
		files, err := ld.TestFiles(ref)
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Errorf("%s has no tests", ref)
			continue
		}
		tfs, diags := lang.LoadTestFiles(pb, files)
		if len(diags) > 0 {
			t.Fatalf("%s: %s", ref, diags)
		}
		var mu sync.Mutex
		covered := map[string]bool{}
		unreachable := map[string]bool{}
		t.Run(n, func(t *testing.T) {
			for _, f := range tfs {
				for _, u := range f.Unreachable {
					unreachable[u.Branch] = true
				}
				for _, tt := range f.Tests {
					t.Run(tt.Name, func(t *testing.T) {
						t.Parallel()
						res, err := playtest.Run(context.Background(), pb, ref, tt, playtest.Options{Workdir: t.TempDir()})
						if err != nil {
							t.Fatal(err)
						}
						for _, m := range res.Mismatches {
							t.Errorf("%s (reason: %s)", m, res.Reason)
						}
						mu.Lock()
						maps.Copy(covered, res.Branches)
						mu.Unlock()
					})
				}
			}
		})
		var all, took int
		var missed []string
		for _, b := range pb.Branches() {
			switch {
			case covered[b.ID]:
				all++
				took++
			case !unreachable[b.ID]:
				all++
				missed = append(missed, b.ID)
			}
		}
		if all > 0 && took*100 < all*95 {
			t.Errorf("%s: the tests take %d of %d branches, under 95%%; not taken: %s", ref, took, all, strings.Join(missed, ", "))
		}
	}
}

// TestFormatted checks that every stdlib .hcl file is as apl fmt writes
// it (apl fmt --check).
func TestFormatted(t *testing.T) {
	err := fs.WalkDir(stdlib.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".hcl") {
			return err
		}
		src, err := fs.ReadFile(stdlib.FS(), p)
		if err != nil {
			return err
		}
		out, diags := lang.Format(src, p)
		if diags.HasErrors() {
			t.Errorf("%s: %s", p, diags)
			return nil
		}
		if string(out) != string(src) {
			t.Errorf("%s is not formatted: run apl fmt stdlib/playbooks", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTestFilesShareMocks checks that the stdlib's test files share what
// they have in common (include) instead of copying it: no run of six
// lines repeats in two test files. Blank lines, comments and lines of
// brackets alone are left out, as they say nothing.
func TestTestFilesShareMocks(t *testing.T) {
	const run = 6
	seen := map[string]string{} // a run of lines: the first file holding it
	err := fs.WalkDir(stdlib.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, lang.TestFileSuffix) && !strings.Contains(p, "/tests/") {
			return err
		}
		src, err := fs.ReadFile(stdlib.FS(), p)
		if err != nil {
			return err
		}
		var lines []string
		for _, l := range strings.Split(string(src), "\n") {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "#") || strings.Trim(l, "{}[](), ") == "" {
				continue
			}
			lines = append(lines, l)
		}
		reported := map[string]bool{}
		for i := 0; i+run <= len(lines); i++ {
			key := strings.Join(lines[i:i+run], "\n")
			first, ok := seen[key]
			switch {
			case !ok:
				seen[key] = p
			case first != p && !reported[first]:
				reported[first] = true
				t.Errorf("%s repeats %d lines of %s; share them with include:\n%s", p, run, first, key)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
