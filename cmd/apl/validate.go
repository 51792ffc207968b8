package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
)

type validateCmd struct {
	Paths  []string `arg:"" name:"path" help:"Playbook files, directories of .hcl files, stdlib:NAME, or DIR/... for every playbook below DIR (./... for all)."`
	JSON   bool     `name:"json" help:"Print the results as one JSON document (for editors and CI)."`
	Format string   `enum:"text,json,sarif" default:"text" help:"Output format: text (FILE:LINE:COL and a source snippet per problem), json (the same as --json) or sarif (SARIF 2.1.0, for code scanning)."`
	Strict bool     `help:"Fail (exit 1) on warnings too, not only on errors."`
}

// jsonDiag is a diagnostic as validate --json prints it.
type jsonDiag struct {
	Severity string     `json:"severity"`
	Summary  string     `json:"summary"`
	Detail   string     `json:"detail,omitempty"`
	Range    *jsonRange `json:"range,omitempty"`
}

type jsonRange struct {
	Filename string  `json:"filename"`
	Start    jsonPos `json:"start"`
	End      jsonPos `json:"end"`
}

type jsonPos struct {
	Line   int `json:"line"`
	Column int `json:"column"`
	Byte   int `json:"byte"`
}

type jsonResult struct {
	Path         string     `json:"path"`
	Playbook     string     `json:"playbook,omitempty"`
	Valid        bool       `json:"valid"`
	ErrorCount   int        `json:"error_count"`
	WarningCount int        `json:"warning_count"`
	Diagnostics  []jsonDiag `json:"diagnostics"`
}

func (c *validateCmd) Run(e *env) error {
	asJSON := c.JSON || c.Format == "json"
	asSARIF := c.Format == "sarif" && !c.JSON
	paths, err := expandPaths(c.Paths, e.loader.Allow)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	var results []jsonResult
	sarif := newSARIF()
	failed := false
	for i, checked := range checkPlaybooks(*e.loader, paths) {
		p, pb, tests := paths[i], checked.pb, checked.tests
		diags := slices.Concat(checked.diags, checked.testDiags)
		res := jsonResult{Path: p, Playbook: pb.Name, Valid: !diags.HasErrors(), Diagnostics: []jsonDiag{}}
		for _, d := range diags {
			jd := jsonDiag{Severity: "warning", Summary: d.Summary, Detail: d.Detail}
			if d.Severity == hcl.DiagError {
				jd.Severity = "error"
				res.ErrorCount++
			} else {
				res.WarningCount++
			}
			if r := d.Subject; r != nil {
				jd.Range = &jsonRange{Filename: r.Filename,
					Start: jsonPos{r.Start.Line, r.Start.Column, r.Start.Byte},
					End:   jsonPos{r.End.Line, r.End.Column, r.End.Byte}}
			}
			res.Diagnostics = append(res.Diagnostics, jd)
		}
		if diags.HasErrors() || c.Strict && len(diags) > 0 {
			failed = true
		}
		results = append(results, res)
		sarif.add(p, diags)
		if !asJSON && !asSARIF {
			writeDiags(e.stdout, pb, diags, tests)
			fmt.Fprintf(e.stdout, "%s: %s\n", p, summaryLine(pb, diags))
		}
	}
	switch {
	case asJSON:
		b, _ := json.MarshalIndent(results, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
	case asSARIF:
		b, _ := json.MarshalIndent(sarif.log(), "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", b)
	}
	if failed {
		return exitWith(exitFailed, nil)
	}
	return nil
}

// A checkedPlaybook is what validate found in one playbook.
type checkedPlaybook struct {
	pb        *lang.Playbook
	diags     hcl.Diagnostics
	tests     map[string][]byte // its test files, if it loads and has any
	testDiags hcl.Diagnostics
}

// validateParseBytes bounds the source of the files validate keeps
// parsed between the loads that read them (a parsed tree takes some
// fifteen times its source).
const validateParseBytes = 4 << 20

// checkPlaybooks loads each playbook, then checks its test files (which
// are part of what CI should check). One cache serves every load: a
// playbook that others run as a sub-playbook is loaded once. Each
// playbook's test files are read and parsed while it loads, on another
// goroutine, so that only their check waits for the load.
func checkPlaybooks(ld lang.Loader, paths []string) []checkedPlaybook {
	ld.Cache = lang.NewCache()
	if ld.Parses == nil {
		ld.Parses = lang.NewParseCache(validateParseBytes)
	}
	out := make([]checkedPlaybook, len(paths))
	// The playbooks load at once, a few more than there are CPUs: one that
	// runs another as a sub-playbook waits while that one loads.
	slots := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range paths {
		c := &out[i]
		slots <- struct{}{}
		tests := make(chan map[string][]byte, 1)
		wg.Go(func() {
			files, err := ld.TestFiles(p)
			if err != nil {
				files = nil
			}
			ld.Parses.Prefetch(files)
			tests <- files
		})
		wg.Go(func() {
			defer func() { <-slots }()
			c.pb, c.diags = ld.Load(p)
			files := <-tests
			if c.diags.HasErrors() {
				return
			}
			if len(files) > 0 {
				c.tests = files
				_, c.testDiags = lang.LoadTests(c.pb, files)
			}
		})
	}
	wg.Wait()
	return out
}

func summaryLine(pb *lang.Playbook, diags hcl.Diagnostics) string {
	if diags.HasErrors() {
		return "invalid: " + countDiags(diags)
	}
	s := fmt.Sprintf("ok: playbook %q, %s", pb.Name, plural(len(pb.Steps), "step"))
	if len(diags) > 0 {
		s += ", " + countDiags(diags)
	}
	return s
}
