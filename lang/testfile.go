package lang

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// TestFileSuffix ends the name of a test file: the files beside a playbook
// that apl test runs and the loader leaves out of the playbook.
const TestFileSuffix = "_test.hcl"

// Test file schemas. A test file holds only test blocks.
var testFileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "test", LabelNames: []string{"name"}},
		{Type: "mock", LabelNames: []string{"step"}},
	},
}

var testSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "mode"},
		{Name: "inputs"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "mock", LabelNames: []string{"step"}},
		{Type: "expect"},
	},
}

// TestFile is one decoded test file.
type TestFile struct {
	Filename string
	// Mocks are the file's top-level mocks, keyed by step name: each test
	// of the file that does not mock the step itself uses them (they are
	// already merged into its Mocks).
	Mocks map[string]*Mock
	Tests []*Test
}

// Test is a test block: one run of the playbook with constant inputs and
// mocked step outputs, and what the run must end with.
type Test struct {
	Name   string
	Mode   string
	Inputs map[string]cty.Value
	// Mocks are keyed by step name. A step without a mock runs for real
	// (shell and call steps) or fails (agent steps).
	Mocks     map[string]*Mock
	Expect    *Expect
	DeclRange hcl.Range
}

// TestFiles reads the test files of the playbook at ref: every
// *_test.hcl file of a playbook directory or of stdlib:NAME, and every
// .hcl file in its tests/ folder; or X_test.hcl beside a playbook file
// X.hcl. It returns an empty map when there are none.
func (ld *Loader) TestFiles(ref string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if name, ok := strings.CutPrefix(ref, StdlibPrefix); ok {
		if ld.Stdlib == nil {
			return nil, fmt.Errorf("no stdlib is available to read %q", ref)
		}
		entries, err := fs.ReadDir(ld.Stdlib, name)
		if err != nil {
			return nil, fmt.Errorf("there is no stdlib playbook %q", name)
		}
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), TestFileSuffix) {
				continue
			}
			b, err := fs.ReadFile(ld.Stdlib, path.Join(name, e.Name()))
			if err != nil {
				return nil, err
			}
			out[ref+"/"+e.Name()] = b
		}
		tests, _ := fs.ReadDir(ld.Stdlib, path.Join(name, "tests"))
		for _, e := range tests {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".hcl") {
				continue
			}
			b, err := fs.ReadFile(ld.Stdlib, path.Join(name, "tests", e.Name()))
			if err != nil {
				return nil, err
			}
			out[ref+"/tests/"+e.Name()] = b
		}
		return out, nil
	}
	// Test files are read in the playbook's project, as its own files are:
	// a test file may be a planted symlink too.
	proj := ld.projectOf(ref)
	info, err := proj.Stat(ref)
	if err != nil {
		return nil, err
	}
	var paths []string
	if info.IsDir() {
		entries, err := proj.ReadDir(ref)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), TestFileSuffix) {
				paths = append(paths, filepath.Join(ref, e.Name()))
			}
		}
		tests, _ := proj.ReadDir(filepath.Join(ref, "tests"))
		for _, e := range tests {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".hcl") {
				paths = append(paths, filepath.Join(ref, "tests", e.Name()))
			}
		}
	} else {
		p := strings.TrimSuffix(ref, ".hcl") + TestFileSuffix
		if _, err := os.Lstat(p); err == nil {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		b, err := proj.ReadFile(p)
		if err != nil {
			return nil, err
		}
		out[p] = b
	}
	return out, nil
}

// LoadTests decodes test files, keyed by file name, against the playbook
// they test. It returns every test it could decode, in file-name and then
// declaration order, with all diagnostics.
func LoadTests(pb *Playbook, files map[string][]byte) ([]*Test, hcl.Diagnostics) {
	tfs, diags := LoadTestFiles(pb, files)
	var tests []*Test
	for _, f := range tfs {
		tests = append(tests, f.Tests...)
	}
	return tests, diags
}

// LoadTestFiles is LoadTests, with the tests grouped by file.
func LoadTestFiles(pb *Playbook, files map[string][]byte) ([]*TestFile, hcl.Diagnostics) {
	d := &testDecoder{pb: pb, names: map[string]hcl.Range{}}
	names := slices.Sorted(maps.Keys(files))
	var diags hcl.Diagnostics
	var out []*TestFile
	parsed := pb.parseCache().parseFiles(files, names)
	for i, n := range names {
		f, fd := parsed[i].file, parsed[i].diags
		diags = append(diags, fd...)
		if f == nil || f.Body == nil {
			continue
		}
		content, cd := f.Body.Content(testFileSchema)
		diags = append(diags, cd...)
		tf := &TestFile{Filename: n, Mocks: map[string]*Mock{}}
		shared := &Test{Mocks: tf.Mocks}
		for _, b := range content.Blocks {
			if b.Type == "mock" {
				diags = append(diags, d.decodeMock(shared, b)...)
			}
		}
		for _, b := range content.Blocks {
			if b.Type != "test" {
				continue
			}
			t, td := d.decodeTest(b)
			diags = append(diags, td...)
			if t == nil {
				continue
			}
			for step, m := range tf.Mocks {
				if t.Mocks[step] == nil {
					t.Mocks[step] = m
				}
			}
			tf.Tests = append(tf.Tests, t)
		}
		if len(tf.Tests) == 0 && !fd.HasErrors() {
			diags = append(diags, warnDiag("No tests in file",
				fmt.Sprintf("%s holds no test blocks; a test file declares tests like test \"name\" { expect { status = \"completed\" } }.", n),
				hcl.Range{Filename: n, Start: hcl.InitialPos, End: hcl.InitialPos}))
		}
		out = append(out, tf)
	}
	return out, dedupe(diags)
}

// testDecoder decodes the test blocks of one playbook's test files.
type testDecoder struct {
	pb    *Playbook
	names map[string]hcl.Range // test names seen, for duplicates
}

func (d *testDecoder) decodeTest(b *hcl.Block) (*Test, hcl.Diagnostics) {
	name := b.Labels[0]
	var diags hcl.Diagnostics
	if strings.TrimSpace(name) == "" {
		diags = append(diags, errDiag("Invalid test name", "A test's name may not be empty.", b.LabelRanges[0]))
	}
	if prev, ok := d.names[name]; ok {
		return nil, append(diags, duplicate("test", name, prev, b))
	}
	d.names[name] = b.DefRange
	t := &Test{Name: name, Inputs: map[string]cty.Value{}, Mocks: map[string]*Mock{}, DeclRange: b.DefRange}
	content, cd := b.Body.Content(testSchema)
	diags = append(diags, cd...)

	var mode *Mode
	if a := content.Attributes["mode"]; a != nil {
		v, md := constString(a)
		diags = append(diags, md...)
		if !md.HasErrors() {
			t.Mode = v
			if mode = d.pb.Modes[v]; mode == nil {
				diags = append(diags, errDiag("Unknown mode",
					fmt.Sprintf("The playbook has no mode named %q.%s", v, didYouMean(v, slices.Sorted(maps.Keys(d.pb.Modes)))), a.Expr.Range()))
			}
		}
	}
	var id hcl.Diagnostics
	if a := content.Attributes["inputs"]; a != nil {
		id = d.decodeInputs(t, a)
		diags = append(diags, id...)
	}
	for _, in := range d.pb.Inputs {
		if id.HasErrors() {
			break // an input that did not decode is not missing
		}
		if !in.Required() || t.Inputs[in.Name] != cty.NilVal || mode != nil && mode.Inputs[in.Name] != cty.NilVal {
			continue
		}
		diags = append(diags, errDiag("Missing input",
			fmt.Sprintf("Test %q does not set the required input %q; add it to inputs = { %s = ... }.", name, in.Name, in.Name), b.DefRange))
	}

	var expects []*hcl.Block
	for _, mb := range content.Blocks {
		switch mb.Type {
		case "mock":
			diags = append(diags, d.decodeMock(t, mb)...)
		case "expect":
			expects = append(expects, mb)
		}
	}
	switch {
	case len(expects) == 0:
		diags = append(diags, errDiag("Missing expect block",
			fmt.Sprintf("Test %q says nothing about how the run ends; add expect { status = \"completed\" }.", name), b.DefRange))
		t.Expect = &Expect{DeclRange: b.DefRange}
	default:
		for _, eb := range expects[1:] {
			diags = append(diags, errDiag("Duplicate expect block",
				fmt.Sprintf("Test %q already has an expect block at %s; put every expectation in one.", name, expects[0].DefRange), eb.DefRange))
		}
		e, ed := d.decodeExpect(expects[0])
		diags = append(diags, ed...)
		t.Expect = e
	}
	return t, diags
}

// decodeInputs reads a test's inputs item by item, so that each problem
// points at its own line.
func (d *testDecoder) decodeInputs(t *Test, a *hcl.Attribute) hcl.Diagnostics {
	items, md := hcl.ExprMap(a.Expr)
	if md.HasErrors() {
		return hcl.Diagnostics{errDiag("Invalid test inputs",
			`A test's inputs is an object of input values, e.g. inputs = { phase_id = "6.3" }.`, a.Expr.Range())}
	}
	var diags hcl.Diagnostics
	for _, it := range items {
		key, ok := itemKey(it.Key, true)
		if !ok {
			diags = append(diags, errDiag("Invalid test inputs", "Each key must be an input name.", it.Key.Range()))
			continue
		}
		in := d.pb.Input(key)
		if in == nil {
			diags = append(diags, errDiag("Test sets an undeclared input",
				fmt.Sprintf("Test %q sets %q, but there is no input named %q.%s", t.Name, key, key, didYouMean(key, slices.Sorted(maps.Keys(d.pb.inputs)))), it.Key.Range()))
			continue
		}
		v, vd := constExpr(it.Value, "a test input")
		diags = append(diags, vd...)
		if vd.HasErrors() {
			continue
		}
		cv, err := in.Convert(v)
		if err != nil {
			diags = append(diags, errDiag("Wrong type for a test input",
				fmt.Sprintf("Test %q sets %q to %s, but %s.", t.Name, key, formatValue(v), err), it.Value.Range()))
			continue
		}
		t.Inputs[key] = cv
	}
	return diags
}

// stepName reads a step name: a string, or a bare word where bare says
// one is allowed (object keys).
func (d *testDecoder) stepName(expr hcl.Expression, what string, bare bool) (string, hcl.Diagnostics) {
	name, ok := itemKey(expr, bare)
	if !ok {
		return "", hcl.Diagnostics{errDiag("Invalid step name",
			fmt.Sprintf("Each entry of %s names a step.", what), expr.Range())}
	}
	if d.pb.Step(name) == nil {
		return "", hcl.Diagnostics{errDiag("Reference to undeclared step",
			fmt.Sprintf("There is no step named %q.%s", name, didYouMean(name, slices.Sorted(maps.Keys(d.pb.steps)))), expr.Range())}
	}
	return name, nil
}

// itemKey reads an object key or list item that names something: a
// constant string, or a bare word when bare is set.
func itemKey(expr hcl.Expression, bare bool) (string, bool) {
	if k := hcl.ExprAsKeyword(expr); bare && k != "" {
		return k, true
	}
	if len(expr.Variables()) > 0 {
		return "", false
	}
	v, diags := expr.Value(nil)
	if diags.HasErrors() || v.IsNull() || v.Type() != cty.String {
		return "", false
	}
	return v.AsString(), true
}

// constExpr evaluates an expression that must be a constant.
func constExpr(expr hcl.Expression, what string) (cty.Value, hcl.Diagnostics) {
	if vars := expr.Variables(); len(vars) > 0 {
		return cty.NilVal, hcl.Diagnostics{errDiag("Constant required",
			fmt.Sprintf("%s is read when the tests load, so it cannot refer to %q.", upperFirst(what), traversalString(vars[0])),
			vars[0].SourceRange())}
	}
	v, diags := expr.Value(&hcl.EvalContext{Functions: Functions()})
	if !diags.HasErrors() && !v.IsWhollyKnown() {
		diags = append(diags, errDiag("Constant required", fmt.Sprintf("%s must be known when the tests load.", upperFirst(what)), expr.Range()))
	}
	return v, diags
}
