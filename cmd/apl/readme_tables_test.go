package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMarkdownTablesRender checks every table of the README, the stdlib's
// and the examples' READMEs and spec/: a row is part of a table that has a
// header and a delimiter row (a paragraph in between ends the table, and
// GitHub shows the rows after it as text), and has as many cells as the
// header (an unescaped | inside `code` still splits a cell).
func TestMarkdownTablesRender(t *testing.T) {
	root := filepath.Join("..", "..")
	var files []string
	for _, pat := range []string{"*.md", "spec/*.md", "stdlib/playbooks/*/README.md", "stdlib/playbooks/README.md", "examples/*/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 5 {
		t.Fatalf("found only %d markdown files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, p := range tableProblems(string(b)) {
			t.Errorf("%s:%s", rel, p)
		}
	}
}

var tableDelimiter = regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$`)

// tableProblems lists the rows of md's tables that do not render as rows.
func tableProblems(md string) []string {
	var out []string
	lines := strings.Split(md, "\n")
	inTable, fence, cells := false, false, 0
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(l, "|") {
			inTable = false
			continue
		}
		switch {
		case inTable:
			if n := tableCells(l); n != cells {
				out = append(out, lineProblem(i, "a row of %d cells in a table of %d", n, cells))
			}
		case i+1 < len(lines) && tableDelimiter.MatchString(lines[i+1]):
			inTable, cells = true, tableCells(l)
			if n := tableCells(lines[i+1]); n != cells {
				out = append(out, lineProblem(i, "a header of %d cells over a delimiter of %d", cells, n))
			}
		case tableDelimiter.MatchString(l) && i > 0 && strings.HasPrefix(lines[i-1], "|"):
			// The delimiter row of the header just above.
		default:
			out = append(out, lineProblem(i, "a table row outside a table (no header and delimiter row above it): %.60s", l))
		}
	}
	return out
}

func lineProblem(i int, format string, args ...any) string {
	return fmt.Sprintf("%d: ", i+1) + fmt.Sprintf(format, args...)
}

// tableCells counts a row's cells as GitHub splits them: at every | not
// escaped with a backslash, without the outer ones.
func tableCells(row string) int {
	row = strings.TrimSpace(row)
	row = strings.TrimPrefix(row, "|")
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		row = row[:len(row)-1]
	}
	n := 1
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}
