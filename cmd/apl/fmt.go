package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/apl-lang/apl/builtins"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
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
		text, diags := parseForFmt(src, f)
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

// parseForFmt parses a file for formatting and returns the text to format.
// apl extends HCL with one-line blocks that hold a nested block
// (step "s" { shell { command = ["true"] } }), which plain HCL rejects with
// "Argument definition required". As lang does (parseFile), such a block is
// split: the space after its "{" and the one before its "}" become
// newlines, and the file is parsed again; formatting the split text puts
// the nested block on its own lines, the canonical form. Splitting keeps
// every byte offset, so the diagnostics of a file that still does not
// parse are placed on the file as written.
func parseForFmt(src []byte, name string) ([]byte, hcl.Diagnostics) {
	text, split := src, false
	for range 1000 {
		_, diags := hclsyntax.ParseConfig(text, name, hcl.Pos{Line: 1, Column: 1})
		next, ok := []byte(nil), false
		for _, d := range diags {
			if d.Summary == "Argument definition required" && d.Subject != nil {
				next, ok = splitOneLineBlock(text, d.Subject.Start.Byte)
				break
			}
		}
		if !ok {
			if split {
				rebase(diags, src)
			}
			return text, diags
		}
		text, split = next, true
	}
	_, diags := hclsyntax.ParseConfig(src, name, hcl.Pos{Line: 1, Column: 1})
	return src, diags
}

// splitOneLineBlock turns the one-line block whose body starts with a
// nested block at offset at into a multi-line one, byte for byte. It
// mirrors lang's splitOneLineBlock, which lang does not export.
func splitOneLineBlock(src []byte, at int) ([]byte, bool) {
	open := at - 1
	for open >= 0 && (src[open] == ' ' || src[open] == '\t') {
		open--
	}
	if open < 0 || src[open] != '{' || open+1 >= at {
		return nil, false
	}
	tokens, _ := hclsyntax.LexConfig(src[open:], "", hcl.Pos{Byte: open, Line: 1, Column: 1})
	depth, closeAt := 0, -1
	for _, t := range tokens {
		switch t.Type {
		case hclsyntax.TokenOBrace:
			depth++
		case hclsyntax.TokenCBrace:
			depth--
			if depth == 0 {
				closeAt = t.Range.Start.Byte
			}
		}
		if closeAt >= 0 {
			break
		}
	}
	if closeAt <= 0 || src[closeAt-1] != ' ' && src[closeAt-1] != '\t' {
		return nil, false
	}
	out := append([]byte(nil), src...)
	out[open+1] = '\n'
	out[closeAt-1] = '\n'
	return out, true
}

// rebase recomputes the lines and columns of diagnostics, found in a split
// text, from their byte offsets in src, the file as written.
func rebase(diags hcl.Diagnostics, src []byte) {
	starts := []int{0}
	for i, c := range src {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	pos := func(p *hcl.Pos) {
		off := min(max(p.Byte, 0), len(src))
		line := sort.SearchInts(starts, off+1) - 1
		*p = hcl.Pos{Line: line + 1, Column: utf8.RuneCount(src[starts[line]:off]) + 1, Byte: off}
	}
	for _, d := range diags {
		for _, r := range []*hcl.Range{d.Subject, d.Context} {
			if r != nil {
				pos(&r.Start)
				pos(&r.End)
			}
		}
	}
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
