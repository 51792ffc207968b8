package lang

import (
	"fmt"
	ctyjson "github.com/zclconf/go-cty/cty/json"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// TestFileSuffix ends the name of a test file: the files beside a playbook
// that apl test runs and the loader leaves out of the playbook.
const TestFileSuffix = "_test.hcl"

// Test file schemas. A test file holds only test blocks.
var (
	testFileSchema = &hcl.BodySchema{
		Blocks: []hcl.BlockHeaderSchema{
			{Type: "test", LabelNames: []string{"name"}},
			{Type: "mock", LabelNames: []string{"step"}},
		},
	}
	testSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "mode"},
			{Name: "inputs"},
		},
		Blocks: []hcl.BlockHeaderSchema{
			{Type: "mock", LabelNames: []string{"step"}},
			{Type: "expect"},
		},
	}
	mockSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "output"},
			{Name: "outputs"},
			{Name: "exit_code"},
			{Name: "error"},
		},
	}
	expectSchema = &hcl.BodySchema{
		Attributes: []hcl.AttributeSchema{
			{Name: "status", Required: true},
			{Name: "recommendation"},
			{Name: "path"},
			{Name: "visits"},
			{Name: "output"},
		},
	}
)

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

// Mock stands in for a step's action.
type Mock struct {
	Step string
	// Outputs are the action's outputs, one per call in order; the last
	// repeats. Empty when the mock sets only Error or ExitCode.
	Outputs []cty.Value
	// ExitCode is a shell step's exit code; nil means 0. A non-zero code
	// fails the step, as a real command's would.
	ExitCode *int
	// Error, when set, fails the action with this message on every call.
	Error     string
	DeclRange hcl.Range
}

// Output returns the mock's answer to the step's call-th call (1-based),
// or cty.NilVal when the mock has no outputs.
func (m *Mock) Output(call int) cty.Value {
	if len(m.Outputs) == 0 {
		return cty.NilVal
	}
	return m.Outputs[max(min(call, len(m.Outputs)), 1)-1]
}

// Expect is what a test's run must end with. Fields left zero are not
// checked; Path is checked when it is non-nil, even empty.
type Expect struct {
	Status         string
	Recommendation string
	// Path is the exact ordered list of steps started.
	Path []string
	// Visits counts how many times each listed step started.
	Visits map[string]int
	// Output holds fields of the run's output object that must equal these.
	Output    map[string]cty.Value
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
	info, err := os.Stat(ref)
	if err != nil {
		return nil, err
	}
	var paths []string
	if info.IsDir() {
		entries, err := os.ReadDir(ref)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), TestFileSuffix) {
				paths = append(paths, filepath.Join(ref, e.Name()))
			}
		}
		tests, _ := os.ReadDir(filepath.Join(ref, "tests"))
		for _, e := range tests {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".hcl") {
				paths = append(paths, filepath.Join(ref, "tests", e.Name()))
			}
		}
	} else {
		p := strings.TrimSuffix(ref, ".hcl") + TestFileSuffix
		if _, err := os.Stat(p); err == nil {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
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
	for _, n := range names {
		_, f, fd := ParseConfig(files[n], n)
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

func (d *testDecoder) decodeMock(t *Test, b *hcl.Block) hcl.Diagnostics {
	name := b.Labels[0]
	s := d.pb.Step(name)
	if s == nil {
		return hcl.Diagnostics{errDiag("Reference to undeclared step",
			fmt.Sprintf("There is no step named %q to mock.%s", name, didYouMean(name, slices.Sorted(maps.Keys(d.pb.steps)))), b.LabelRanges[0])}
	}
	if prev := t.Mocks[name]; prev != nil {
		return hcl.Diagnostics{duplicate("mock", name, prev.DeclRange, b)}
	}
	m := &Mock{Step: name, DeclRange: b.DefRange}
	t.Mocks[name] = m
	content, diags := b.Body.Content(mockSchema)
	if diags.HasErrors() {
		return diags
	}
	if s.Action == nil {
		return append(diags, errDiag("Mock of a step without an action",
			fmt.Sprintf("Step %q has no action, only routing, so there is nothing to mock.", name), b.LabelRanges[0]))
	}
	_, isShell := s.Action.(*Shell)
	_, isAgent := s.Action.(*AgentCall)
	attrs := content.Attributes
	out, outs, code, errA := attrs["output"], attrs["outputs"], attrs["exit_code"], attrs["error"]
	if out != nil && outs != nil {
		return append(diags, errDiag("Conflicting mock attributes",
			"Set output (the same answer to every call) or outputs (one per call), not both.", outs.NameRange))
	}
	if errA != nil && (out != nil || outs != nil || code != nil) {
		return append(diags, errDiag("Conflicting mock attributes",
			"A mock with error fails the step's action on every call, so it has no output or exit_code.", errA.NameRange))
	}
	if out == nil && outs == nil && code == nil && errA == nil {
		what := "output, outputs or error"
		if isShell {
			what = "output, outputs, exit_code or error"
		}
		return append(diags, errDiag("Empty mock", fmt.Sprintf("A mock of step %q sets %s.", name, what), b.DefRange))
	}

	if errA != nil {
		v, ed := constString(errA)
		diags = append(diags, ed...)
		if !ed.HasErrors() && v == "" {
			diags = append(diags, errDiag("Empty mock error", "The error message may not be empty.", errA.Expr.Range()))
		}
		m.Error = v
		return diags
	}
	if code != nil {
		if !isShell {
			diags = append(diags, errDiag("Unsupported mock attribute",
				fmt.Sprintf("Step %q is not a shell step, so it has no exit_code; use error to fail it.", name), code.NameRange))
		} else if v, cd := constInt(code); cd.HasErrors() {
			diags = append(diags, cd...)
		} else {
			m.ExitCode = &v
		}
	}

	// Each output with the range a problem with it points at.
	var ranges []hcl.Range
	switch {
	case out != nil:
		v, od := constExpr(out.Expr, "a mock's output")
		diags = append(diags, od...)
		if !od.HasErrors() {
			m.Outputs, ranges = []cty.Value{v}, []hcl.Range{out.Expr.Range()}
		}
	case outs != nil:
		items, ld := hcl.ExprList(outs.Expr)
		if ld.HasErrors() || len(items) == 0 {
			return append(diags, errDiag("Invalid mock outputs",
				"outputs is a non-empty list of the step's outputs, one per call, e.g. outputs = [{ pass = false }, { pass = true }]; the last one repeats.", outs.Expr.Range()))
		}
		for _, it := range items {
			v, od := constExpr(it, "a mock's output")
			diags = append(diags, od...)
			if od.HasErrors() {
				continue
			}
			m.Outputs = append(m.Outputs, v)
			ranges = append(ranges, it.Range())
		}
	case isShell && (m.ExitCode == nil || *m.ExitCode == 0):
		// A shell mock without output prints nothing; that must fit
		// returns too.
		return append(diags, checkMockOutput(d.pb, s, cty.StringVal(""), false, b.DefRange)...)
	}
	for i, v := range m.Outputs {
		diags = append(diags, checkMockOutput(d.pb, s, v, isAgent, ranges[i])...)
	}
	return diags
}

// checkMockOutput checks that a mocked output is one the step could
// produce: for an agent step, what decoding its answer against returns
// accepts (or text, without returns), decoded by the runtime's own decoder
// (Loader.DecodeAnswer); for shell and call steps, a value that converts
// to returns.
func checkMockOutput(pb *Playbook, s *Step, v cty.Value, isAgent bool, rng hcl.Range) hcl.Diagnostics {
	if isAgent && s.Returns == cty.NilType {
		if v.Type() != cty.String || v.IsNull() {
			return hcl.Diagnostics{errDiag("Mock does not match the step",
				fmt.Sprintf("Step %q is an agent step without returns, so its output is the answer's text; mock it with a string, not %s.", s.Name, formatValue(v)), rng)}
		}
		return nil
	}
	if s.Returns == cty.NilType {
		return nil
	}
	var problem error
	switch {
	case isAgent && pb.decodeAnswer != nil:
		// A mock stands for the answer's JSON: what the agent would print.
		js, err := ctyjson.Marshal(v, v.Type())
		if err != nil {
			problem = err
		} else {
			problem = pb.decodeAnswer(js, s.Returns)
		}
	case isAgent:
		// No decoder was given: the check is left to the run.
	default:
		if _, err := convert.Convert(v, s.Returns); err != nil {
			problem = err
		}
	}
	if problem == nil {
		return nil
	}
	return hcl.Diagnostics{errDiag("Mock does not match returns",
		fmt.Sprintf("Step %q returns %s, but this output does not fit: %s.", s.Name, typeString(s.Returns), problem), rng)}
}

func (d *testDecoder) decodeExpect(b *hcl.Block) (*Expect, hcl.Diagnostics) {
	e := &Expect{DeclRange: b.DefRange}
	content, diags := b.Body.Content(expectSchema)
	if a := content.Attributes["status"]; a != nil {
		v, sd := constString(a)
		diags = append(diags, sd...)
		if !sd.HasErrors() && v == "" {
			diags = append(diags, errDiag("Empty status",
				`The expected status is the run's final status, e.g. "completed" or "failed".`, a.Expr.Range()))
		}
		e.Status = v
	}
	if a := content.Attributes["recommendation"]; a != nil {
		v, rd := constString(a)
		diags = append(diags, rd...)
		e.Recommendation = v
	}
	if a := content.Attributes["path"]; a != nil {
		items, ld := hcl.ExprList(a.Expr)
		if ld.HasErrors() {
			diags = append(diags, errDiag("Invalid expected path",
				`path is the list of steps the run starts, in order, e.g. path = ["plan", "check", "execute"].`, a.Expr.Range()))
		} else {
			e.Path = []string{}
			for _, it := range items {
				name, nd := d.stepName(it, "path", false)
				diags = append(diags, nd...)
				if !nd.HasErrors() {
					e.Path = append(e.Path, name)
				}
			}
		}
	}
	if a := content.Attributes["visits"]; a != nil {
		items, md := hcl.ExprMap(a.Expr)
		if md.HasErrors() {
			diags = append(diags, errDiag("Invalid expected visits",
				`visits maps steps to how many times they start, e.g. visits = { debug = 2 }.`, a.Expr.Range()))
		} else {
			e.Visits = map[string]int{}
			for _, it := range items {
				name, nd := d.stepName(it.Key, "visits", true)
				diags = append(diags, nd...)
				n, vd := constExpr(it.Value, "an expected visit count")
				diags = append(diags, vd...)
				if nd.HasErrors() || vd.HasErrors() {
					continue
				}
				if n.Type() != cty.Number || n.IsNull() || !n.AsBigFloat().IsInt() || n.AsBigFloat().Sign() < 0 {
					diags = append(diags, errDiag("Invalid expected visits",
						fmt.Sprintf("The visit count of %q must be a whole number, 0 or more.", name), it.Value.Range()))
					continue
				}
				c, _ := n.AsBigFloat().Int64()
				e.Visits[name] = int(c)
			}
		}
	}
	if a := content.Attributes["output"]; a != nil {
		diags = append(diags, d.decodeExpectOutput(e, a)...)
	}
	return e, diags
}

func (d *testDecoder) decodeExpectOutput(e *Expect, a *hcl.Attribute) hcl.Diagnostics {
	if d.pb.Output == nil {
		return hcl.Diagnostics{errDiag("Playbook has no output",
			"The playbook declares no output block, so there is no output to expect.", a.NameRange)}
	}
	items, md := hcl.ExprMap(a.Expr)
	if md.HasErrors() {
		return hcl.Diagnostics{errDiag("Invalid expected output",
			`output holds fields of the run's output that must match, e.g. output = { alignment_score = 9.2 }.`, a.Expr.Range())}
	}
	var fields []string
	for _, o := range d.pb.Output.Attrs {
		fields = append(fields, o.Name)
	}
	sort.Strings(fields)
	var diags hcl.Diagnostics
	e.Output = map[string]cty.Value{}
	for _, it := range items {
		key, ok := itemKey(it.Key, true)
		if !ok {
			diags = append(diags, errDiag("Invalid expected output", "Each key must be a field of the output block.", it.Key.Range()))
			continue
		}
		if i := sort.SearchStrings(fields, key); i == len(fields) || fields[i] != key {
			diags = append(diags, errDiag("Unknown output field",
				fmt.Sprintf("The output block has no field %q.%s", key, didYouMean(key, fields)), it.Key.Range()))
			continue
		}
		v, vd := constExpr(it.Value, "an expected output")
		diags = append(diags, vd...)
		if !vd.HasErrors() {
			e.Output[key] = v
		}
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
