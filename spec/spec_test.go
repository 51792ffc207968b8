package spec_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp/playtest"
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

// testFileMark starts an hcl block that is a test file, not a playbook:
// it is loaded with lang.LoadTests against the playbook of the block before
// it, and its tests must pass.
const testFileMark = "# test file"

func isTestFile(b block) bool { return bytes.HasPrefix(b.src, []byte(testFileMark)) }

// fileMark starts an hcl block that is a playbook saved as a file: the
// block "# file: lint.hcl" is written as lint.hcl into the directory every
// block of the same .md file is loaded from, so that a playbook step can
// name it as its source. It is loaded as a playbook itself too.
const fileMark = "# file: "

// blockDir writes the file blocks of one .md file into a fresh directory
// and returns it; playbooks of that .md file load relative to it.
func blockDir(t *testing.T, blocks []block) string {
	t.Helper()
	dir := t.TempDir()
	for _, b := range blocks {
		if !bytes.HasPrefix(b.src, []byte(fileMark)) {
			continue
		}
		first, _, _ := bytes.Cut(b.src, []byte("\n"))
		name := strings.TrimSpace(string(first[len(fileMark):]))
		if name == "" || filepath.Base(name) != name {
			t.Errorf("%s:%d: %q is not a plain file name", b.file, b.line, name)
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestExamplesLoad loads every ```hcl block of every spec/*.md file as a
// complete playbook: the reference promises that each one loads without
// errors (warnings are allowed). A block that starts with "# test file" is
// a test file of the playbook before it instead (see TestExampleTests).
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
		blocks := hclBlocks(t, md, data)
		dir := blockDir(t, blocks)
		for _, b := range blocks {
			if isTestFile(b) {
				continue
			}
			total++
			name := fmt.Sprintf("spec/%s#%d.hcl", b.file, b.n)
			t.Run(fmt.Sprintf("%s:%d", b.file, b.line), func(t *testing.T) {
				_, diags := (&lang.Loader{Drivers: agent.DriverSchema{}}).LoadSources(map[string][]byte{name: b.src}, dir)
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

// TestExampleTests loads every test-file block of spec/*.md against the
// playbook block before it and runs its tests: each must pass. The
// test-file blocks after one playbook block are its test files together,
// so that one may include another by the name its first line gives it
// ("# test file: NAME").
func TestExampleTests(t *testing.T) {
	mds, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, md := range mds {
		data, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		blocks := hclBlocks(t, md, data)
		dir := blockDir(t, blocks)
		for i := 0; i < len(blocks); i++ {
			if !isTestFile(blocks[i]) {
				continue
			}
			var group []block
			for ; i < len(blocks) && isTestFile(blocks[i]); i++ {
				group = append(group, blocks[i])
			}
			found += len(group)
			first := group[0]
			if i-len(group) == 0 {
				t.Errorf("%s:%d: a test file block with no playbook block before it", md, first.line)
				continue
			}
			prev := blocks[i-len(group)-1]
			pbName := fmt.Sprintf("spec/%s#%d.hcl", prev.file, prev.n)
			pb, diags := (&lang.Loader{Drivers: agent.DriverSchema{}}).LoadSources(map[string][]byte{pbName: prev.src}, dir)
			if diags.HasErrors() {
				t.Errorf("%s:%d: the playbook before the test file does not load: %s", md, prev.line, diags)
				continue
			}
			srcs := map[string][]byte{}
			byName := map[string]block{}
			for _, b := range group {
				name := testFileName(b)
				srcs[name], byName[name] = b.src, b
			}
			tests, diags := lang.LoadTests(pb, srcs)
			for _, d := range diags {
				b := first
				if d.Subject != nil {
					if x, ok := byName[d.Subject.Filename]; ok {
						b = x
					}
				}
				t.Errorf("%s:%d: the test file block does not load:\n%s", md, b.line, describe(d, b.line))
			}
			if len(tests) == 0 {
				t.Errorf("%s:%d: the test file blocks hold no tests", md, first.line)
			}
			for _, tt := range tests {
				b := byName[tt.DeclRange.Filename]
				t.Run(fmt.Sprintf("%s:%d/%s", md, b.line, tt.Name), func(t *testing.T) {
					res, err := playtest.Run(context.Background(), pb, pbName, tt, playtest.Options{Workdir: t.TempDir()})
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range res.Mismatches {
						t.Errorf("%s:%d: test %q: %s", md, b.line, tt.Name, m)
					}
				})
			}
		}
	}
	if found == 0 {
		t.Error("no test file blocks in spec/*.md; the Testing playbooks section has one")
	}
}

// testFileName is the file name a test-file block is loaded under:
// spec/NAME when its first line names it ("# test file: NAME"), else one
// made from its place.
func testFileName(b block) string {
	first, _, _ := bytes.Cut(b.src, []byte("\n"))
	if name, ok := strings.CutPrefix(string(first), testFileMark+": "); ok && strings.TrimSpace(name) != "" {
		return "spec/" + strings.TrimSpace(name)
	}
	return fmt.Sprintf("spec/%s#%d_test.hcl", b.file, b.n)
}
