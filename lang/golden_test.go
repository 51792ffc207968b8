package lang

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite golden files")

// goldenName is the archive section that holds the compiled graph.
const goldenName = "graph.golden"

// TestGolden loads the playbook held by each testdata/golden/*.txtar (every
// section but graph.golden is a file of the playbook's directory) and
// compares Playbook.String with the graph.golden section. With -update it
// rewrites that section instead.
func TestGolden(t *testing.T) {
	archives, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(archives) == 0 {
		t.Fatal("no golden archives in testdata/golden")
	}
	for _, path := range archives {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var golden *txtar.File
			for i := range ar.Files {
				f := &ar.Files[i]
				if f.Name == goldenName {
					golden = f
					continue
				}
				p := filepath.Join(dir, filepath.FromSlash(f.Name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, f.Data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			pb, diags := Load(dir)
			for _, d := range diags {
				t.Errorf("%s", d)
			}
			got := pb.String()
			if *update {
				if golden == nil {
					ar.Files = append(ar.Files, txtar.File{Name: goldenName})
					golden = &ar.Files[len(ar.Files)-1]
				}
				golden.Data = []byte(got)
				if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if golden == nil {
				t.Fatalf("%s has no %s section; run go test ./lang -run TestGolden -update", path, goldenName)
			}
			if diff := cmp.Diff(string(golden.Data), got); diff != "" {
				t.Errorf("%s: the graph differs from %s (-want +got):\n%s", path, goldenName, diff)
			}
		})
	}
}

// TestGoldenPhaseGates compares the graph of examples/phase-gates (a fork
// of stdlib:phase-runner, read from ../stdlib/playbooks), loaded where it
// lives, with testdata/golden/phase-gates.golden.
func TestGoldenPhaseGates(t *testing.T) {
	const path = "testdata/golden/phase-gates.golden"
	pb, diags := (&Loader{Stdlib: os.DirFS("../stdlib/playbooks")}).Load(filepath.Join("..", "examples", "phase-gates"))
	for _, d := range diags {
		t.Errorf("%s", d)
	}
	got := pb.String()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v; run go test ./lang -run TestGolden -update", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("the graph of examples/phase-gates differs from %s (-want +got):\n%s", path, diff)
	}
}
