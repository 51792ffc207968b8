package lang

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestVisitExprsAsVisitAll walks every expression of every stdlib,
// example and fixture file with visitExprs and with hclsyntax.VisitAll:
// both must visit the same expressions in the same order (VisitAll's
// ChildScope wrappers aside), so that the checks built on visitExprs
// find what they found with VisitAll, in the same order; and for each
// expression, exprVariables must give what its Variables method gives.
func TestVisitExprsAsVisitAll(t *testing.T) {
	var files []string
	for _, g := range []string{"../stdlib/playbooks/*/*.hcl", "../stdlib/playbooks/*/tests/*.hcl", "../examples/*/*.hcl", "testdata/*/*.hcl", "testdata/valid/*/*.hcl"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	exprs := 0
	same := func(name string, e hclsyntax.Expression) {
		t.Helper()
		var want, got []hclsyntax.Expression
		hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
			if _, scope := n.(hclsyntax.ChildScope); !scope {
				want = append(want, n.(hclsyntax.Expression))
			}
			return nil
		})
		visitExprs(e, func(x hclsyntax.Expression) { got = append(got, x) })
		if len(got) != len(want) {
			t.Fatalf("%s: %s: visitExprs visits %d expressions, VisitAll %d", name, e.Range(), len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: %s: expression %d is %T at %s, VisitAll's is %T at %s", name, e.Range(), i, got[i], got[i].Range(), want[i], want[i].Range())
			}
		}
		for _, x := range want {
			if got, want := exprVariables(x), x.Variables(); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %s: exprVariables gives %d traversals, Variables %d:\n%#v\n%#v", name, x.Range(), len(got), len(want), got, want)
			}
		}
	}
	// Every kind of expression at once.
	every := `x = { (a.b) = {for k, v in m : k => upper(v)... if v != null}, b = a[*].c, c = -x, d = !y ? 1 : 2, e = "${a}%{ for x in y }${x}%{ endfor }", f = f(a...)[0].g, h = (1), "i" = try(steps.s.output, null), j = {for k in l : k => k}, k = <<-EOT
    ${join(",", [for x in xs : x])}
  EOT
}
`
	if f, diags := hclsyntax.ParseConfig([]byte(every), "every.hcl", hcl.InitialPos); diags.HasErrors() {
		t.Fatal(diags)
	} else {
		for _, a := range f.Body.(*hclsyntax.Body).Attributes {
			same("every.hcl", a.Expr)
		}
	}
	prompts, _ := filepath.Glob("../stdlib/playbooks/*/prompts/*.md")
	for _, name := range prompts {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if tmpl, _ := hclsyntax.ParseTemplate(src, name, hcl.InitialPos); tmpl != nil {
			exprs++
			same(name, tmpl)
		}
	}
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		_, f, _ := ParseConfig(src, name)
		if f == nil {
			continue
		}
		var body func(*hclsyntax.Body)
		body = func(b *hclsyntax.Body) {
			for _, a := range b.Attributes {
				exprs++
				same(name, a.Expr)
			}
			for _, blk := range b.Blocks {
				body(blk.Body)
			}
		}
		if b, ok := f.Body.(*hclsyntax.Body); ok {
			body(b)
		}
	}
	if exprs < 2000 {
		t.Fatalf("walked only %d expressions", exprs)
	}
}
