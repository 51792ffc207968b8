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
	"github.com/sergi/go-diff/diffmatchpatch"
)

type fmtCmd struct {
	Paths []string `arg:"" name:"path" help:"Files or directories of .hcl files."`
	Check bool     `help:"Change nothing; list the files that need formatting and exit 1 if any."`
	Diff  bool     `help:"Change nothing; print the changes formatting would make, as a unified diff (git apply takes it)."`
}

func (c *fmtCmd) Run(e *env) error {
	files, err := hclFiles(c.Paths, e.loader.Allow)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	// A file that does not parse is reported and left alone; the others
	// are still formatted, so one run shows every file to fix.
	changed := 0
	var broken []string
	unread := false
	for _, hf := range files {
		f := hf.path
		src, err := hf.proj.ReadFile(f)
		if err != nil {
			fmt.Fprintf(e.stderr, "apl: %v\n", err)
			unread = true
			continue
		}
		// lang.ParseConfig accepts apl's one-line blocks that hold a nested
		// block; formatting the text it parsed puts the nested block on its
		// own lines, the canonical form.
		out, diags := lang.Format(src, f)
		if diags.HasErrors() {
			writeDiagsSrc(e, f, src, diags)
			broken = append(broken, f)
			continue
		}
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
	writeFileDiags(e.stderr, map[string]*hcl.File{name: {Bytes: src}}, diags)
}

// hclFile is a file apl fmt formats, and the project it may be read in:
// that of the path it was found under, so that a .hcl symlink planted in a
// repository is not followed out of it.
type hclFile struct {
	path string
	proj *lang.Project
}

// hclFiles lists the .hcl files of paths, files or directories searched
// at any depth (hidden directories aside). allow are the directories
// outside a path's project that may be read.
func hclFiles(paths []string, allow []string) ([]hclFile, error) {
	var out []hclFile
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		proj := lang.FindProject(p, allow)
		if !st.IsDir() {
			out = append(out, hclFile{p, proj})
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
				out = append(out, hclFile{path, proj})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}

// unifiedDiff renders the change formatting makes to a file as a unified
// diff, with git's a/ and b/ headers, so that patch -p1 or git apply can
// take it.
func unifiedDiff(name, a, b string) string {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToChars(a, b)
	var ops []diffLine
	for _, d := range dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines) {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			op = '+'
		case diffmatchpatch.DiffDelete:
			op = '-'
		}
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				ops = append(ops, diffLine{op, l})
			}
		}
	}
	var sb strings.Builder
	name = filepath.ToSlash(name)
	fmt.Fprintf(&sb, "--- a/%s\n+++ b/%s\n", name, name)
	for _, h := range hunks(ops, 3) {
		writeHunk(&sb, ops, h)
	}
	return sb.String()
}

// diffLine is a line of a diff: op is ' ', '-' or '+'; text ends in a
// newline unless it is a file's unterminated last line.
type diffLine struct {
	op   byte
	text string
}

// hunk is a range of diff lines, [start, end), and where it starts in the
// old and new files (0-based).
type hunk struct{ start, end, oldLine, newLine int }

// hunks groups the changes into hunks with up to context unchanged lines
// around them; changes closer than twice that share a hunk.
func hunks(ops []diffLine, context int) []hunk {
	var out []hunk
	oldLine, newLine := 0, 0
	oldAt := make([]int, len(ops)+1)
	newAt := make([]int, len(ops)+1)
	for i, l := range ops {
		oldAt[i], newAt[i] = oldLine, newLine
		if l.op != '+' {
			oldLine++
		}
		if l.op != '-' {
			newLine++
		}
	}
	oldAt[len(ops)], newAt[len(ops)] = oldLine, newLine
	for i := 0; i < len(ops); i++ {
		if ops[i].op == ' ' {
			continue
		}
		start := max(0, i-context)
		end := i + 1
		// Extend over changes whose context would touch this hunk's.
		for j := end; j < len(ops) && j <= end+2*context; j++ {
			if ops[j].op != ' ' {
				end = j + 1
			}
		}
		end = min(len(ops), end+context)
		if n := len(out); n > 0 && out[n-1].end >= start {
			out[n-1].end = end
		} else {
			out = append(out, hunk{start, end, oldAt[start], newAt[start]})
		}
		i = end - 1
	}
	return out
}

// writeHunk writes a hunk: its @@ header with line ranges (1-based; a
// count of 0 names the line before), then its lines.
func writeHunk(sb *strings.Builder, ops []diffLine, h hunk) {
	oldN, newN := 0, 0
	for _, l := range ops[h.start:h.end] {
		if l.op != '+' {
			oldN++
		}
		if l.op != '-' {
			newN++
		}
	}
	oldStart, newStart := h.oldLine+1, h.newLine+1
	if oldN == 0 {
		oldStart--
	}
	if newN == 0 {
		newStart--
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(oldStart, oldN), hunkRange(newStart, newN))
	for _, l := range ops[h.start:h.end] {
		sb.WriteByte(l.op)
		sb.WriteString(l.text)
		if !strings.HasSuffix(l.text, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange is a hunk header's range: START,COUNT, or START when the count
// is 1, as diff -u writes it.
func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
