package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/sergi/go-diff/diffmatchpatch"
)

type fmtCmd struct {
	Paths []string `arg:"" name:"path" help:"Files or directories of .hcl files."`
	Check bool     `help:"Change nothing; list the files that need formatting and exit 1 if any."`
	Diff  bool     `help:"Change nothing; print the changes formatting would make."`
}

func (c *fmtCmd) Run(e *env) error {
	files, err := hclFiles(c.Paths)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	// A file that does not parse is reported and left alone; the others
	// are still formatted, so one run shows every file to fix.
	changed := 0
	var broken []string
	unread := false
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintf(e.stderr, "apl: %v\n", err)
			unread = true
			continue
		}
		// lang.ParseConfig accepts apl's one-line blocks that hold a nested
		// block; formatting the text it parsed puts the nested block on its
		// own lines, the canonical form.
		text, _, diags := lang.ParseConfig(src, f)
		if diags.HasErrors() {
			writeDiagsSrc(e, f, src, diags)
			broken = append(broken, f)
			continue
		}
		out := hclwrite.Format(text)
		if string(out) == string(src) {
			continue
		}
		changed++
		switch {
		case c.Diff:
			fmt.Fprint(e.stdout, unifiedDiff(f, string(src), string(out)))
		case c.Check:
			fmt.Fprintln(e.stdout, f)
		default:
			if err := builtins.WriteFileAtomic(f, out, 0o644); err != nil {
				return exitWith(exitInternal, err)
			}
			fmt.Fprintln(e.stdout, f)
		}
	}
	switch {
	case len(broken) == 1:
		return exitWith(exitUsage, fmt.Errorf("%s does not parse; fix it before formatting", broken[0]))
	case len(broken) > 1:
		return exitWith(exitUsage, fmt.Errorf("%d files do not parse: %s; fix them before formatting", len(broken), strings.Join(broken, ", ")))
	case unread:
		return exitWith(exitUsage, nil)
	}
	if changed > 0 && (c.Check || c.Diff) {
		return exitWith(exitFailed, nil)
	}
	return nil
}

func writeDiagsSrc(e *env, name string, src []byte, diags hcl.Diagnostics) {
	dw := hcl.NewDiagnosticTextWriter(e.stderr, map[string]*hcl.File{name: {Bytes: src}}, 100, false)
	dw.WriteDiagnostics(diags)
}

func hclFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != p {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".hcl") {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(out)
	return out, nil
}

// unifiedDiff renders a line diff of a file before and after formatting.
func unifiedDiff(name, a, b string) string {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s (formatted)\n", name, name)
	for _, d := range diffs {
		prefix := " "
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			prefix = "+"
		case diffmatchpatch.DiffDelete:
			prefix = "-"
		default:
			continue
		}
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l == "" {
				continue
			}
			sb.WriteString(prefix + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	return sb.String()
}
