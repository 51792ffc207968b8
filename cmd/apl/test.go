package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/draw"
	"github.com/apl-lang/apl/interp/playtest"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
)

type testCmd struct {
	Paths  []string `arg:"" optional:"" name:"path" help:"Playbook files, directories (searched at any depth for *_test.hcl files), or stdlib:NAME. Default: the current directory."`
	Filter string   `name:"run" placeholder:"REGEXP" help:"Run only the tests whose name matches REGEXP."`
	JSON   bool     `name:"json" help:"Print the results as one JSON object instead of lines."`
	NoExec bool     `name:"no-exec" help:"Run no program: a shell step or git.* call without a mock fails its test, naming the step. For playbooks nobody has reviewed, such as a pull request's in CI."`
	Cover  bool     `name:"cover" help:"Report which branches of each playbook the tests went through: gate rules and otherwise blocks, on_exhausted outcomes, on_failure and finally steps, for_each items completed and failed; the uncovered ones by file:line."`
	Graph  string   `name:"graph" placeholder:"FILE" help:"With --cover: draw the playbook's graph with every test's way through it into FILE, as apl graph --path draws a run: .svg or .png (drawn by Graphviz's dot), .dot, .mmd (Mermaid), else text. One playbook only."`
}

// testReport is what apl test --json prints.
type testReport struct {
	Passed     int          `json:"passed"`
	Failed     int          `json:"failed"`
	LoadErrors []string     `json:"load_errors,omitempty"`
	Tests      []testResult `json:"tests"`
	// Coverage is each playbook's, with --cover.
	Coverage []coverage `json:"coverage,omitempty"`
}

// coverage is what one playbook's tests went through (lang.Branch).
type coverage struct {
	Playbook string `json:"playbook"`
	// Branches counts the playbook's branches but those its test files
	// declare unreachable (and no test took); Covered, those of them the
	// tests took; Percent is the one of the other.
	Branches  int      `json:"branches"`
	Covered   int      `json:"covered"`
	Percent   float64  `json:"percent"`
	Uncovered []branch `json:"uncovered"`
	// Unreachable are the branches the test files declare no test can
	// take, with their reasons.
	Unreachable []branch `json:"unreachable,omitempty"`
	// Reached are branches declared unreachable that a test took: the
	// declaration is wrong (they count as covered).
	Reached []branch `json:"reached,omitempty"`
}

type branch struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`
	// At is FILE:LINE.
	At string `json:"at"`
	// Reason is why a branch is unreachable, as its declaration says.
	Reason string `json:"reason,omitempty"`
}

// coverageOf counts pb's branches that the runs went through, leaving out
// those declared unreachable that none did.
func coverageOf(ref string, pb *lang.Playbook, covered map[string]bool, unreachable []*lang.Unreachable) coverage {
	why := map[string]string{}
	for _, u := range unreachable {
		why[u.Branch] = u.Reason
	}
	c := coverage{Playbook: ref, Uncovered: []branch{}}
	for _, b := range pb.Branches() {
		br := branch{ID: b.ID, Kind: b.Kind, At: fmt.Sprintf("%s:%d", b.Range.Filename, b.Range.Start.Line)}
		reason, declared := why[b.ID]
		switch {
		case declared && !covered[b.ID]:
			br.Reason = reason
			c.Unreachable = append(c.Unreachable, br)
			continue
		case declared:
			c.Reached = append(c.Reached, br)
		}
		c.Branches++
		if covered[b.ID] {
			c.Covered++
			continue
		}
		c.Uncovered = append(c.Uncovered, br)
	}
	c.Percent = 100
	if c.Branches > 0 {
		c.Percent = math.Round(1000*float64(c.Covered)/float64(c.Branches)) / 10
	}
	return c
}

// writeCoverGraph draws pb's graph into file with the tests' paths over
// it: each test's frames are kept apart, so that one test's last step
// does not seem to lead to the next test's first.
func writeCoverGraph(file string, pb *lang.Playbook, paths []*interp.Path) error {
	all := &interp.Path{Frames: map[string][]*interp.Visit{}}
	for i, p := range paths {
		for _, f := range p.FrameOrder {
			key := fmt.Sprintf("test %d/%s", i+1, f)
			all.FrameOrder = append(all.FrameOrder, key)
			all.Frames[key] = p.Frames[f]
		}
		all.Ends = append(all.Ends, p.Ends...)
	}
	g := draw.New(pb)
	g.Overlay(&draw.Run{ID: fmt.Sprintf("(%d tests)", len(paths)), Status: "their paths together", Path: all})
	var out strings.Builder
	switch ext := strings.ToLower(filepath.Ext(file)); ext {
	case ".svg", ".png":
		var dot strings.Builder
		g.WriteDot(&dot)
		img, err := draw.Render(dot.String(), ext[1:])
		if err != nil {
			return err
		}
		out.Write(img)
	case ".dot", ".gv":
		g.WriteDot(&out)
	case ".mmd", ".mermaid":
		g.WriteMermaid(&out)
	default:
		g.WriteText(&out)
	}
	return os.WriteFile(file, []byte(out.String()), 0o644)
}

func writeCoverage(w io.Writer, c coverage) {
	fmt.Fprintf(w, "coverage: %d of %d branches (%.1f%%)", c.Covered, c.Branches, c.Percent)
	if n := len(c.Unreachable); n > 0 {
		fmt.Fprintf(w, ", %d declared unreachable", n)
	}
	fmt.Fprintln(w)
	for _, b := range c.Uncovered {
		fmt.Fprintf(w, "  not covered: %s: %s (%s)\n", b.At, b.ID, b.Kind)
	}
	for _, b := range c.Unreachable {
		fmt.Fprintf(w, "  unreachable: %s: %s (%s): %s\n", b.At, b.ID, b.Kind, b.Reason)
	}
	for _, b := range c.Reached {
		fmt.Fprintf(w, "  warning: %s: %s is declared unreachable, but a test took it\n", b.At, b.ID)
	}
}

type testResult struct {
	Playbook       string   `json:"playbook"`
	Name           string   `json:"name"`
	Passed         bool     `json:"passed"`
	DurationS      float64  `json:"duration_s"`
	Status         string   `json:"status"`
	Recommendation string   `json:"recommendation,omitempty"`
	Reason         string   `json:"reason,omitempty"`
	Path           []string `json:"path"`
	Mismatches     []string `json:"mismatches,omitempty"`
	// EmptyValues are the values the test's prompts rendered empty.
	EmptyValues []emptyValueJSON `json:"empty_values,omitempty"`
}

func (c *testCmd) Run(e *env) error {
	var filter *regexp.Regexp
	if c.Filter != "" {
		re, err := regexp.Compile(c.Filter)
		if err != nil {
			return exitWith(exitUsage, fmt.Errorf("--run: %w", err))
		}
		filter = re
	}
	paths := c.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	var refs []string
	for _, p := range paths {
		found, err := testRefs(p)
		if err != nil {
			return exitWith(exitUsage, err)
		}
		refs = append(refs, found...)
	}
	switch {
	case c.Graph != "" && !c.Cover:
		return exitWith(exitUsage, errors.New("--graph draws the coverage: give it with --cover"))
	case c.Graph != "" && len(refs) != 1:
		return exitWith(exitUsage, fmt.Errorf("--graph draws one playbook's coverage, and %d have tests here: name one", len(refs)))
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep := testReport{Tests: []testResult{}}
	for _, ref := range refs {
		if ctx.Err() != nil {
			break
		}
		pb, tests, unreachable, err := e.loadTests(ref)
		if err != nil {
			rep.LoadErrors = append(rep.LoadErrors, err.Error())
			fmt.Fprintf(e.stderr, "apl: %v\n", err)
			continue
		}
		if len(tests) == 0 {
			fmt.Fprintf(e.stderr, "%s: no test files\n", ref)
			continue
		}
		header := len(refs) > 1 && !c.JSON
		var tally emptyTally
		covered := map[string]bool{}
		var paths []*interp.Path
		for _, t := range tests {
			if filter != nil && !filter.MatchString(t.Name) {
				continue
			}
			if header {
				fmt.Fprintf(e.stdout, "# %s\n", ref)
				header = false
			}
			res, err := playtest.Run(ctx, pb, ref, t, playtest.Options{NoExec: c.NoExec})
			if err != nil {
				return exitWith(exitInternal, err)
			}
			tr := testResult{Playbook: ref, Name: t.Name, Passed: res.Passed(), DurationS: res.Duration.Seconds(),
				Status: res.Status, Recommendation: res.Recommendation, Reason: res.Reason, Path: res.Path, Mismatches: res.Mismatches,
				EmptyValues: emptyValuesJSON(res.EmptyValues)}
			rep.Tests = append(rep.Tests, tr)
			for id := range res.Branches {
				covered[id] = true
			}
			paths = append(paths, res.Steps)
			if tr.Passed {
				rep.Passed++
			} else {
				rep.Failed++
			}
			if !c.JSON {
				writeTestResult(e.stdout, tr)
			}
			tally.add(tr)
		}
		if !c.JSON {
			tally.write(e.stdout)
		}
		if c.Cover {
			cov := coverageOf(ref, pb, covered, unreachable)
			rep.Coverage = append(rep.Coverage, cov)
			if !c.JSON {
				writeCoverage(e.stdout, cov)
			}
			if c.Graph != "" {
				if err := writeCoverGraph(c.Graph, pb, paths); err != nil {
					return exitWith(exitInternal, err)
				}
			}
		}
	}
	if c.JSON {
		b, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
	} else {
		fmt.Fprintf(e.stdout, "%d passed, %d failed\n", rep.Passed, rep.Failed)
	}
	switch {
	case len(rep.LoadErrors) > 0:
		return exitWith(exitUsage, nil)
	case rep.Failed > 0:
		return exitWith(exitFailed, nil)
	}
	return nil
}

func writeTestResult(w io.Writer, tr testResult) {
	if tr.Passed {
		fmt.Fprintf(w, "ok   %s (%.2fs)\n", tr.Name, tr.DurationS)
	} else {
		fmt.Fprintf(w, "FAIL %s (%.2fs)\n", tr.Name, tr.DurationS)
	}
	for _, m := range tr.Mismatches {
		fmt.Fprintf(w, "    %s\n", m)
	}
}

// emptyTally counts, for one playbook's tests, the tests whose prompts
// rendered each empty value, so that apl test warns of each place once.
type emptyTally struct {
	order []string
	tests map[string][]string
}

func (t *emptyTally) add(tr testResult) {
	if t.tests == nil {
		t.tests = map[string][]string{}
	}
	for _, ev := range tr.EmptyValues {
		if _, ok := t.tests[ev.Text]; !ok {
			t.order = append(t.order, ev.Text)
		}
		t.tests[ev.Text] = append(t.tests[ev.Text], tr.Name)
	}
}

// write warns of each empty value, with the tests that rendered it.
func (t *emptyTally) write(w io.Writer) {
	for _, text := range t.order {
		names := t.tests[text]
		in := fmt.Sprintf("in test %q", names[0])
		if len(names) > 1 {
			in = fmt.Sprintf("in %d tests, first %q", len(names), names[0])
		}
		fmt.Fprintf(w, "warning: %s (%s)\n", text, in)
	}
	if len(t.order) > 0 {
		fmt.Fprintf(w, "An agent knows only its prompt: give these values, or list the ones that may be empty in the prompt's optional attribute.\n")
	}
}

// loadTests loads the playbook at ref and its tests. Diagnostics are
// printed, with snippets from the playbook's and the test files' sources;
// errors make the returned error.
func (e *env) loadTests(ref string) (*lang.Playbook, []*lang.Test, []*lang.Unreachable, error) {
	pb, diags := e.loader.Load(ref)
	if diags.HasErrors() {
		writeDiags(e.stderr, pb, diags)
		return nil, nil, nil, fmt.Errorf("%s: %s", ref, countDiags(diags))
	}
	files, err := e.loader.TestFiles(ref)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", ref, err)
	}
	if len(files) == 0 {
		return pb, nil, nil, nil
	}
	tfs, diags := lang.LoadTestFiles(pb, files)
	var tests []*lang.Test
	var unreachable []*lang.Unreachable
	for _, f := range tfs {
		tests = append(tests, f.Tests...)
		unreachable = append(unreachable, f.Unreachable...)
	}
	if len(diags) > 0 {
		all := pb.Files()
		for name, src := range files {
			all[name] = &hcl.File{Bytes: src}
		}
		color := false
		if f, ok := e.stderr.(*os.File); ok && isTerminal(f) {
			color = os.Getenv("NO_COLOR") == ""
		}
		hcl.NewDiagnosticTextWriter(e.stderr, all, 100, color).WriteDiagnostics(diags)
	}
	if diags.HasErrors() {
		return nil, nil, nil, fmt.Errorf("%s: test files: %s", ref, countDiags(diags))
	}
	return pb, tests, unreachable, nil
}

// testRefs turns a path argument into the playbooks to test: stdlib:NAME
// and files as they are (a test file stands for its playbook), and for a
// directory every directory under it, itself included, that holds test
// files. Hidden directories and testdata are not searched below the root.
func testRefs(p string) ([]string, error) {
	if strings.HasPrefix(p, lang.StdlibPrefix) {
		return []string{p}, nil
	}
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("%s: no such file or directory", p)
	}
	if !info.IsDir() {
		if base, ok := strings.CutSuffix(p, lang.TestFileSuffix); ok {
			if _, err := os.Stat(base + ".hcl"); err == nil {
				return []string{base + ".hcl"}, nil
			}
			return []string{filepath.Dir(p)}, nil
		}
		return []string{p}, nil
	}
	var refs []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "tests") {
			return filepath.SkipDir // tests/ belongs to the playbook above it
		}
		matches, _ := filepath.Glob(filepath.Join(path, "*"+lang.TestFileSuffix))
		inTests, _ := filepath.Glob(filepath.Join(path, "tests", "*.hcl"))
		if len(matches) > 0 || len(inTests) > 0 {
			refs = append(refs, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(refs) == 0 {
		// Let loading say what is wrong: not a playbook, or no tests.
		refs = []string{p}
	}
	sort.Strings(refs)
	return refs, nil
}
