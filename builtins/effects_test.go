package builtins

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// TestDeclaredComplete checks that every builtin declares itself, and that
// what the file builtins return fits the declared result type.
func TestDeclaredComplete(t *testing.T) {
	names := Funcs().Names()
	for _, n := range names {
		if _, ok := signatures[n]; !ok {
			t.Errorf("builtin %q has no declaration", n)
		}
	}
	for n := range signatures {
		if !slices.Contains(names, n) {
			t.Errorf("declaration of %q, which is no builtin", n)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"x": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := Env{Workdir: dir, Step: "s"}
	calls := []struct {
		name string
		args map[string]cty.Value
	}{
		{"file.sha256", map[string]cty.Value{"path": cty.StringVal("a.json")}},
		{"file.read", map[string]cty.Value{"path": cty.StringVal("a.json")}},
		{"file.write", map[string]cty.Value{"path": cty.StringVal("b.txt"), "content": cty.StringVal("x")}},
		{"file.append", map[string]cty.Value{"path": cty.StringVal("b.txt"), "content": cty.StringVal("y")}},
		{"file.symlink", map[string]cty.Value{"path": cty.StringVal("latest"), "target": cty.StringVal("b.txt")}},
		{"jsonl.append", map[string]cty.Value{"path": cty.StringVal("c.jsonl"), "record": cty.EmptyObjectVal}},
		{"json.read", map[string]cty.Value{"path": cty.StringVal("a.json")}},
		{"glob", map[string]cty.Value{"pattern": cty.StringVal("*.json")}},
	}
	for _, c := range calls {
		out, err := Funcs().Call(context.Background(), c.name, env, cty.ObjectVal(c.args))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if _, err := convert.Convert(out, Declaration(c.name).Result); err != nil {
			t.Errorf("%s returned %s, which does not fit its declared result: %v", c.name, out.GoString(), err)
		}
	}
	if d := Declaration("no.such"); d.Reads {
		t.Errorf("an unknown builtin is taken to read only")
	}
}
