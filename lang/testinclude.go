package lang

import (
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// includeSchema finds the includes of a test file and of its tests,
// before the file is decoded.
var includeSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "include"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "test", LabelNames: []string{"name"}}},
}

// ReadTestFile reads the test file at name (a file path, as apl run
// --dry-run --mocks gives it) and the test files it includes, and theirs,
// keyed by path, for LoadTestFiles. An include it cannot read is left
// out; LoadTestFiles reports it.
func (ld *Loader) ReadTestFile(name string) (map[string][]byte, error) {
	// The file is read where it is, as any file a flag names; what it
	// includes, inside its project, as a playbook's own files are.
	proj := FindProject(name, ld.Allow)
	out := map[string][]byte{}
	todo := []string{name}
	for len(todo) > 0 {
		n := todo[0]
		todo = todo[1:]
		if _, ok := out[n]; ok {
			continue
		}
		read := proj.ReadFile
		if n == name {
			read = os.ReadFile
		}
		b, err := read(n)
		if err != nil {
			if n == name {
				return nil, err
			}
			continue
		}
		out[n] = b
		_, f, _ := ParseConfig(b, n)
		if f == nil || f.Body == nil {
			continue
		}
		content, _, _ := f.Body.PartialContent(includeSchema)
		attrs := []*hcl.Attribute{content.Attributes["include"]}
		for _, b := range content.Blocks {
			tc, _, _ := b.Body.PartialContent(includeSchema)
			attrs = append(attrs, tc.Attributes["include"])
		}
		for _, a := range attrs {
			if a == nil {
				continue
			}
			rels, _ := constStrings(a)
			for _, rel := range rels {
				todo = append(todo, includePath(n, rel))
			}
		}
	}
	return out, nil
}

// decodeInclude reads the include of a test file named from, or of one
// of its tests: test files of the same playbook, named relative to its
// directory. It returns their names as LoadTestFiles was given them.
func (d *testDecoder) decodeInclude(from string, a *hcl.Attribute) ([]string, hcl.Diagnostics) {
	rels, diags := constStrings(a)
	if diags.HasErrors() {
		return nil, diags
	}
	var out []string
	for _, rel := range rels {
		name := includePath(from, rel)
		if _, ok := d.byName[name]; !ok || name == from {
			var known []string
			for n := range d.files {
				if n != from {
					known = append(known, includeRel(from, n))
				}
			}
			slices.Sort(known)
			what := "is not a test file of this playbook"
			if name == from {
				what = "is this file itself"
			}
			diags = append(diags, errDiag("Unknown included file",
				fmt.Sprintf("%q %s; include names other test files of the playbook (its *_test.hcl files and the .hcl files of its tests/ folder), relative to this file.%s",
					rel, what, didYouMean(rel, known)), a.Expr.Range()))
			continue
		}
		out = append(out, name)
	}
	return out, diags
}

// includePath is the name of the test file that a test file named from
// includes as rel: relative to its directory, with / in stdlib names.
func includePath(from, rel string) string {
	if strings.HasPrefix(from, StdlibPrefix) {
		return path.Join(path.Dir(from), rel)
	}
	return filepath.Join(filepath.Dir(from), filepath.FromSlash(rel))
}

// includeRel is name as a test file named from would include it.
func includeRel(from, name string) string {
	if strings.HasPrefix(from, StdlibPrefix) {
		if r, ok := strings.CutPrefix(name, path.Dir(from)+"/"); ok {
			return r
		}
		return name
	}
	if r, err := filepath.Rel(filepath.Dir(from), name); err == nil {
		return filepath.ToSlash(r)
	}
	return name
}

// fileMocks sets tf.Mocks once: the mocks of the files it includes, in
// order (each with its own includes), then its own over them. through
// are the files whose mocks are being gathered, to find a cycle.
func (d *testDecoder) fileMocks(tf *TestFile, through []*TestFile) hcl.Diagnostics {
	if tf.Mocks != nil {
		return nil
	}
	through = append(through, tf)
	var diags hcl.Diagnostics
	mocks := map[string]*Mock{}
	for _, name := range tf.Include {
		inc := d.byName[name]
		if i := slices.Index(through, inc); i >= 0 {
			var cycle []string
			for _, f := range append(through[i:], inc) {
				cycle = append(cycle, f.Filename)
			}
			diags = append(diags, errDiag("Include cycle",
				fmt.Sprintf("Test files include each other: %s.", strings.Join(cycle, " includes ")), tf.includeRange))
			continue
		}
		diags = append(diags, d.fileMocks(inc, through)...)
		maps.Copy(mocks, inc.Mocks)
	}
	maps.Copy(mocks, tf.own)
	tf.Mocks = mocks
	return diags
}
