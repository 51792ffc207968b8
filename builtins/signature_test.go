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

// TestSignaturesMatchFuncs keeps the signature table in step with the
// builtins: the same names, the same parameters in the same order.
func TestSignaturesMatchFuncs(t *testing.T) {
	defs := funcDefs(gitFuncs{git: ExecGit{}})
	for name, d := range defs {
		s, ok := signatures[name]
		if !ok {
			t.Errorf("builtin %q has no signature", name)
			continue
		}
		var names []string
		for _, p := range s.Params {
			names = append(names, p.Name)
		}
		if !slices.Equal(names, d.params) {
			t.Errorf("%s: signature params %q, builtin params %q", name, names, d.params)
		}
	}
	for name := range signatures {
		if _, ok := defs[name]; !ok {
			t.Errorf("signature for %q, which is not a builtin", name)
		}
	}
}

// TestSignatureResults runs the file builtins and checks that each output
// has the type its signature declares.
func TestSignatureResults(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte(`{"x": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := Env{Workdir: dir}
	r := Funcs()
	calls := map[string]map[string]cty.Value{
		"file.sha256":  {"path": cty.StringVal("a.json")},
		"file.read":    {"path": cty.StringVal("a.json")},
		"file.write":   {"path": cty.StringVal("b.txt"), "content": cty.StringVal("hi")},
		"file.append":  {"path": cty.StringVal("b.txt"), "content": cty.StringVal("hi")},
		"file.symlink": {"path": cty.StringVal("latest"), "target": cty.StringVal("a.json")},
		"jsonl.append": {"path": cty.StringVal("c.jsonl"), "record": cty.ObjectVal(map[string]cty.Value{"a": cty.True})},
		"json.read":    {"path": cty.StringVal("a.json")},
		"glob":         {"pattern": cty.StringVal("*.json")},
	}
	for name, args := range calls {
		out, err := r.Call(context.Background(), name, env, cty.ObjectVal(args))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s, _ := r.Signature(name)
		if _, err := convert.Convert(out, s.Result); err != nil || !s.Result.HasDynamicTypes() && !out.Type().Equals(s.Result) {
			t.Errorf("%s returned %s, its signature says %s (%v)", name, out.Type().FriendlyName(), s.Result.FriendlyName(), err)
		}
	}
}
