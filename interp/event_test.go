package interp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/apl-lang/apl/lang"
	"github.com/google/go-cmp/cmp"
)

// TestEventsAreReserved checks that every Event* constant of event.go is
// in lang.AplEvents and the other way round, so that a gate's event can
// never be mistaken for one of apl's.
func TestEventsAreReserved(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "event.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Event") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Fatalf("%s is not a string literal", name.Name)
				}
				v, _ := strconv.Unquote(lit.Value)
				got = append(got, v)
			}
		}
	}
	if len(got) == 0 {
		t.Fatal("no Event* constants in event.go")
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(lang.AplEvents))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event.go's Event* constants differ from lang.AplEvents (-lang +interp):\n%s", diff)
	}
}

// TestShellStepEventsSayItsExitCode: the event that ends a shell step
// says its command's exit status (apl show of a Temporal run, which has
// only the events, shows it from there).
func TestShellStepEventsSayItsExitCode(t *testing.T) {
	pb := load(t, `
playbook "p" {}
step "ok" {
  shell { command = ["true"] }
}
step "bad" {
  shell { script = "exit 3" }
}
`)
	res, rec := startWith(t, pb, Options{})
	if res.Status != StatusFailed {
		t.Fatalf("status %s", res.Status)
	}
	want := map[string]int{"ok": 0, "bad": 3}
	for _, e := range rec.events {
		if e.Type != EventStepCompleted && e.Type != EventStepFailed {
			continue
		}
		if code, ok := e.Details[DetailExitCode].(int); !ok || code != want[e.Step] {
			t.Errorf("%s %s: exit_code %v, want %d", e.Type, e.Step, e.Details[DetailExitCode], want[e.Step])
		}
		delete(want, e.Step)
	}
	if len(want) > 0 {
		t.Errorf("no end event for %v", want)
	}
}
