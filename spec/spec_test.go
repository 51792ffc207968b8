package spec_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
)

// block is one ```hcl fenced block of a Markdown file.
type block struct {
	file string // the .md file's base name
	n    int    // 1-based index among the file's hcl blocks
	line int    // line of the opening fence in the .md file
	src  []byte
}

// hclBlocks returns the ```hcl fenced blocks of a Markdown document. Other
// fences (```text, ```sh, ...) are skipped, and so is anything inside them.
func hclBlocks(t *testing.T, name string, md []byte) []block {
	t.Helper()
	var (
		out   []block
		cur   *block
		fence string // the opening marker of the fence we are in, "" outside
		buf   bytes.Buffer
	)
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 1024*1024), 1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		trimmed := strings.TrimLeft(text, " ")
		if fence == "" {
			if !strings.HasPrefix(trimmed, "```") && !strings.HasPrefix(trimmed, "~~~") {
				continue
			}
			marker := trimmed[:3]
			for len(marker) < len(trimmed) && trimmed[len(marker)] == marker[0] {
				marker += marker[:1]
			}
			fence = marker
			info := strings.TrimSpace(trimmed[len(marker):])
			if lang, _, _ := strings.Cut(info, " "); lang == "hcl" {
				cur = &block{file: name, n: len(out) + 1, line: line}
				buf.Reset()
			}
			continue
		}
		if strings.HasPrefix(trimmed, fence) && strings.TrimSpace(strings.TrimLeft(trimmed, fence[:1])) == "" {
			if cur != nil {
				cur.src = append([]byte(nil), buf.Bytes()...)
				out = append(out, *cur)
				cur = nil
			}
			fence = ""
			continue
		}
		if cur != nil {
			buf.WriteString(text)
			buf.WriteByte('\n')
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if fence != "" {
		t.Errorf("%s: a fenced block opened with %s is never closed", name, fence)
	}
	return out
}

// TestExamplesLoad loads every ```hcl block of every spec/*.md file as a
// complete playbook: the reference promises that each one loads without
// errors (warnings are allowed).
func TestExamplesLoad(t *testing.T) {
	mds, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(mds) == 0 {
		t.Fatal("no .md files in spec/")
	}
	total := 0
	for _, md := range mds {
		data, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range hclBlocks(t, md, data) {
			total++
			name := fmt.Sprintf("spec/%s#%d.hcl", b.file, b.n)
			t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) {
				_, diags := (&lang.Loader{}).LoadSources(map[string][]byte{name: b.src}, ".")
				var errs []string
				for _, d := range diags {
					if d.Severity == hcl.DiagError {
						errs = append(errs, describe(d, b.line))
					}
				}
				if len(errs) > 0 {
					t.Errorf("%s:%d: the hcl block starting here does not load:\n%s",
						b.file, b.line, strings.Join(errs, "\n"))
				}
			})
		}
	}
	if total < 10 {
		t.Errorf("found %d hcl blocks in spec/*.md; want at least 10", total)
	}
}

// describe formats a diagnostic with its position in the .md file: the
// block's line 1 is the line after the opening fence.
func describe(d *hcl.Diagnostic, fenceLine int) string {
	pos := ""
	if d.Subject != nil {
		pos = fmt.Sprintf(" (md line %d, block %s)", fenceLine+d.Subject.Start.Line, d.Subject)
	}
	return fmt.Sprintf("\t%s: %s%s", d.Summary, d.Detail, pos)
}
