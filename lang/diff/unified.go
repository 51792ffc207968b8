package diff

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// Unified is a unified diff from text a to text b of file name, with
// git's a/ and b/ headers, so that patch -p1 or git apply can take it
// (apl fmt --diff prints one).
func Unified(name, a, b string) string {
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
