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

// Test file schemas. A test file holds test blocks, the mocks its tests
// share, and the other test files whose mocks they share too.
var testFileSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "include"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "test", LabelNames: []string{"name"}},
		{Type: "mock", LabelNames: []string{"step"}},
		{Type: "unreachable", LabelNames: []string{"branch"}},
	},
}

var testSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "mode"},
		{Name: "inputs"},
		{Name: "include"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "mock", LabelNames: []string{"step"}},
		{Type: "expect"},
	},
}

// TestFile is one decoded test file.
type TestFile struct {
	Filename string
	// Include are the test files, by name as LoadTestFiles was given
	// them, whose top-level mocks this file's tests share.
	Include []string
	// Mocks are the mocks every test of the file starts from, keyed by
	// step name: its included files' top-level mocks, then its own over
	// them. Each test of the file that does not mock the step itself
	// uses them (they are already merged into its Mocks).
	Mocks map[string]*Mock
	Tests []*Test
	// Unreachable are the branches the file says no test can take.
	Unreachable []*Unreachable
	// own are the file's own top-level mocks.
	own map[string]*Mock
	// includeRange is where include is written.
	includeRange hcl.Range
}

// Test is a test block: one run of the playbook with constant inputs and
// mocked step outputs, and what the run must end with.
type Test struct {
	Name   string
	Mode   string
	Inputs map[string]cty.Value
	// Include are the test files whose top-level mocks the test starts
	// from, over its file's (TestFile.Include).
	Include []string
	// Mocks are keyed by step name: the test's own, then those of the
	// files it includes, then its file's. A step without a mock runs for
	// real (shell and call steps) or fails (agent steps).
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
	byName := map[string]*TestFile{}
	d := &testDecoder{pb: pb, names: map[string]hcl.Range{}, files: files, byName: byName}
	names := slices.Sorted(maps.Keys(files))
	var diags hcl.Diagnostics
	var out []*TestFile
	bodies := map[*TestFile]*hcl.BodyContent{}
	parsed := parseFiles(files, names)
	for i, n := range names {
		f, fd := parsed[i].file, parsed[i].diags
		diags = append(diags, fd...)
		if f == nil || f.Body == nil {
			continue
		}
		content, cd := f.Body.Content(testFileSchema)
		diags = append(diags, cd...)
		tf := &TestFile{Filename: n, own: map[string]*Mock{}}
		shared := &Test{Mocks: tf.own}
		for _, b := range content.Blocks {
			switch b.Type {
			case "mock":
				diags = append(diags, d.decodeMock(shared, b)...)
			case "unreachable":
				u, ud := d.decodeUnreachable(b)
				diags = append(diags, ud...)
				if u != nil {
					tf.Unreachable = append(tf.Unreachable, u)
				}
			}
		}
		byName[n], bodies[tf] = tf, content
		out = append(out, tf)
	}
	// Includes are read once every file is known.
	for _, tf := range out {
		if a := bodies[tf].Attributes["include"]; a != nil {
			var id hcl.Diagnostics
			tf.Include, id = d.decodeInclude(tf.Filename, a)
			diags = append(diags, id...)
			tf.includeRange = a.Expr.Range()
		}
	}
	for _, tf := range out {
		diags = append(diags, d.fileMocks(tf, nil)...)
		for _, b := range bodies[tf].Blocks {
			if b.Type != "test" {
				continue
			}
			t, td := d.decodeTest(b, tf.Filename)
			diags = append(diags, td...)
			if t == nil {
				continue
			}
			base := maps.Clone(tf.Mocks)
			for _, name := range t.Include {
				inc := byName[name]
				diags = append(diags, d.fileMocks(inc, nil)...)
				maps.Copy(base, inc.Mocks)
			}
			for step, m := range base {
				if t.Mocks[step] == nil {
					t.Mocks[step] = m
				}
			}
			tf.Tests = append(tf.Tests, t)
		}
	}
	// A file of mocks that others include needs no tests of its own.
	included := map[string]bool{}
	for _, tf := range out {
		for _, inc := range tf.Include {
			included[inc] = true
		}
		for _, t := range tf.Tests {
			for _, inc := range t.Include {
				included[inc] = true
			}
		}
	}
	for _, tf := range out {
		if len(tf.Tests) == 0 && len(tf.Unreachable) == 0 && !included[tf.Filename] && !hasErrorsIn(diags, tf.Filename) {
			diags = append(diags, warnDiag("No tests in file",
				fmt.Sprintf("%s holds no test blocks; a test file declares tests like test \"name\" { expect { status = \"completed\" } }.", tf.Filename),
				hcl.Range{Filename: tf.Filename, Start: hcl.InitialPos, End: hcl.InitialPos}))
		}
	}
	return out, dedupe(diags)
}

// hasErrorsIn reports whether diags hold an error in the named file.
func hasErrorsIn(diags hcl.Diagnostics, name string) bool {
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Subject != nil && d.Subject.Filename == name {
			return true
		}
	}
	return false
}

// testDecoder decodes the test blocks of one playbook's test files.
type testDecoder struct {
	pb    *Playbook
	names map[string]hcl.Range // test names seen, for duplicates
	// files are the test files' sources, and byName those that parsed,
	// by name: what an include may name.
	files  map[string][]byte
	byName map[string]*TestFile
	// branches are the playbook's, by ID; unreachable, those a file
	// declared unreachable, for duplicates.
	branches    map[string]Branch
	unreachable map[string]hcl.Range
}

func (d *testDecoder) decodeTest(b *hcl.Block, file string) (*Test, hcl.Diagnostics) {
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
	if a := content.Attributes["include"]; a != nil {
		inc, incd := d.decodeInclude(file, a)
		diags = append(diags, incd...)
		t.Include = inc
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
