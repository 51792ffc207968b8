package main

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/apl-lang/apl/cmd/apl/internal/shortlived"
)

// TestParseShortAgrees checks that the parser of one short-lived command
// reads its command line as apl's whole parser does, flags of apl itself
// included, and that help, --version and errors are left to the whole
// parser, which prints them.
func TestParseShortAgrees(t *testing.T) {
	for _, line := range []string{
		"validate a.hcl stdlib:conductor",
		"validate --format sarif --strict ./...",
		"validate --json --allow-path /tmp/x --allow-path /tmp/y a.hcl",
		"fmt --check a.hcl dir",
		"fmt --diff a.hcl",
		"plan stdlib:conductor --items 3 --var phase=6.3 --input x=1 --json",
		"graph --format mermaid -o out.md --dry-run a.hcl",
		"graph --path latest --runs-dir runs a.hcl",
		"explain --contract stdlib:conductor step.rate",
		"diff --json a.hcl stdlib:conductor",
	} {
		args := strings.Fields(line)
		var c cli
		parser, err := newParser(&c, io.Discard, io.Discard, func(int) { t.Fatalf("%s: the whole parser exited", line) })
		if err != nil {
			t.Fatal(err)
		}
		want, err := parser.Parse(args)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		got, g := parseShort(args)
		if got == nil {
			t.Errorf("%s: not parsed alone", line)
			continue
		}
		if got.Command() != want.Command() {
			t.Errorf("%s: command %q, want %q", line, got.Command(), want.Command())
		}
		if a, b := got.Selected().Target.Interface(), want.Selected().Target.Interface(); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: parsed alone\n%+v\nwant\n%+v", line, a, b)
		}
		if !reflect.DeepEqual(*g, c.globals) {
			t.Errorf("%s: apl's flags parsed alone %+v, want %+v", line, *g, c.globals)
		}
	}
	for cmd := range shortlived.Commands {
		if shortModels[cmd] == nil {
			t.Errorf("short-lived command %s has no parser of its own", cmd)
		}
	}
	for _, line := range []string{"validate --help", "validate -h", "fmt --version", "validate --bogus a.hcl", "plan", "graph --format jpeg a.hcl", "run x.hcl", "help validate"} {
		if got, _ := parseShort(strings.Fields(line)); got != nil {
			t.Errorf("%s: parsed alone, want it left to the whole parser", line)
		}
	}
}
