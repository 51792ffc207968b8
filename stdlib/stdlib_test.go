package stdlib_test

import (
	"context"
	"io/fs"
	"strings"
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
// stdlib:NAME does: every playbook has some, and they pass.
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
		tests, diags := lang.LoadTests(pb, files)
		if len(diags) > 0 {
			t.Fatalf("%s: %s", ref, diags)
		}
		for _, tt := range tests {
			t.Run(n+"/"+tt.Name, func(t *testing.T) {
				t.Parallel()
				res, err := playtest.Run(context.Background(), pb, ref, tt, playtest.Options{Workdir: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range res.Mismatches {
					t.Errorf("%s (reason: %s)", m, res.Reason)
				}
			})
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
