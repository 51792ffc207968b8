package lang

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// plainCases are files plain must pass (true) or leave to the token scan
// (false): the first because a parse of every playbook depends on it being
// fast, the second because the scan has work to do there (or plain cannot
// tell).
var plainCases = []struct {
	name string
	src  string
	want bool
}{
	{"empty", "", true},
	{"blocks", "playbook \"x\" {\n  description = \"d\"\n}\nstep \"s\" {\n  shell {\n    command = [\"true\"]\n  }\n}\n", true},
	{"objects on one line", "x = { a = { b = 1 }, c = [{ d = 2 }] }\n", true},
	{"one-line block without nested block", "step \"s\" { next = \"t\" }\n", true},
	{"one-line block with nested block", "step \"s\" { shell { command = [\"true\"] } }\n", false},
	{"nested block after an argument on the line", "step \"s\" { x = 1\n  shell {\n  }\n}\n", false},
	{"block type with a dash", "a-b \"x\" { c {\n} }\n", false},
	{"templates", "x = \"${a ? \"}\" : b} %{ if c }{%{ endif } $${d} %%{e}\"\n", true},
	{"heredoc", "x = <<-EOT\n  { ${a} }\n  %{ for v in b }${v}%{ endfor }\n  EOT\ny = 1\n", true},
	{"heredoc marker in a sequence", "x = <<EOT\n${ \"EOT\" }\nEOT\n", true},
	{"unclosed heredoc", "x = <<EOT\nEOT", false},
	{"heredoc then a nested block in a one-line block", "a { x = <<EOT\nEOT\nb {\n} }\n", false},
	{"comments", "# {\n// {\nx = 1 # }\n", true},
	{"block comment", "/* { */\nx = 1\n", true},
	{"block comment across lines in a one-line block", "a { /* x\n */ b {\n} }\n", false},
	{"unclosed block comment", "x = 1 /* {\n", false},
	{"glob in a string", "x = \"a/*.go\" # b/*\n", true},
	{"carriage return", "x = 1\r\n", false},
	{"stray closer", "x = 1 }\n", false},
	{"mismatched closer", "x = [ ( ] )\n", false},
	{"newline in a string", "x = \"a\nb\"\n", false},
	{"non-ASCII in a string", "x = \"étoile ✓\"\n", true},
	{"non-ASCII name", "é = 1\n", false},
	{"as deep as allowed", "x = " + strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting) + "\n", true},
	{"too deep", "x = " + strings.Repeat("[", MaxNesting+1) + strings.Repeat("]", MaxNesting+1) + "\n", false},
	{"many negations on many lines", strings.Repeat("x = -1\n", 2*MaxNesting), true},
	{"many negations in one list", "x = [" + strings.Repeat("-1,\n", 2*MaxNesting) + "]\n", true},
	{"too many negations", "x = " + strings.Repeat("-", MaxNesting+1) + "1\n", false},
	{"directives closed", "x = \"" + strings.Repeat("%{ if a }%{ endif }", 2*MaxNesting) + "\"\n", true},
	{"directives open", "x = \"" + strings.Repeat("%{ if a }", MaxNesting+1) + strings.Repeat("%{ endif }", MaxNesting+1) + "\"\n", false},
}

func TestPlain(t *testing.T) {
	for _, tt := range plainCases {
		t.Run(tt.name, func(t *testing.T) {
			if got := plain([]byte(tt.src)); got != tt.want {
				t.Errorf("plain = %v, want %v", got, tt.want)
			}
			checkPlain(t, []byte(tt.src))
		})
	}
}

// Every stdlib file takes the fast path: validating the stdlib is what CI
// and pre-commit hooks do most. (Glob patterns in strings, "/*", made
// three of phase-runner's files take the slow one.)
func TestPlainStdlib(t *testing.T) {
	files, err := filepath.Glob("../stdlib/playbooks/*/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	tests, err := filepath.Glob("../stdlib/playbooks/*/tests/*.hcl")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 || len(tests) == 0 {
		t.Fatal("no stdlib files found")
	}
	for _, name := range append(files, tests...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !plain(b) {
			t.Errorf("%s does not pass plain: each load lexes it twice", name)
		}
		checkPlain(t, b)
	}
}

// checkPlain fails if plain passes src but the token scan would insert
// newlines or refuse it as too deep.
func checkPlain(t *testing.T, src []byte) {
	t.Helper()
	if !plain(src) {
		return
	}
	tokens, _ := hclsyntax.LexConfig(src, "plain.hcl", hcl.Pos{Line: 1, Column: 1})
	sc := &splitScanner{tokens: tokens}
	if d := sc.scan(); d != nil {
		t.Fatalf("plain passes a file the scan refuses: %s\n%s", d, src)
	}
	if len(sc.inserts) > 0 {
		t.Fatalf("plain passes a file the scan splits at %v:\n%s", sc.inserts, src)
	}
	// ParseConfig parses a plain file with its line comments blanked:
	// the tree and diagnostics must be HCL's own of the file.
	_, got, gotDiags := ParseConfig(src, "plain.hcl")
	want, wantDiags := hclsyntax.ParseConfig(src, "plain.hcl", hcl.Pos{Line: 1, Column: 1})
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotDiags, wantDiags) {
		t.Fatalf("ParseConfig's tree or diagnostics differ from HCL's for a plain file (diagnostics %v, want %v):\n%s", gotDiags, wantDiags, src)
	}
}

// FuzzPlain checks plain against the token scan on arbitrary files.
func FuzzPlain(f *testing.F) {
	for _, b := range seedFiles(f) {
		f.Add(b)
	}
	stdlib, err := filepath.Glob("../stdlib/playbooks/*/*.hcl")
	if err != nil {
		f.Fatal(err)
	}
	tests, err := filepath.Glob("../stdlib/playbooks/*/tests/*.hcl")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range append(stdlib, tests...) {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, tt := range plainCases {
		f.Add([]byte(tt.src))
	}
	f.Fuzz(func(t *testing.T, src []byte) { checkPlain(t, src) })
}

// TestPrescanComments checks which line comments ParseConfig blanks:
// those whose blank leaves HCL's tree as it is (checkPlain compares the
// trees), and no text that is not a comment.
func TestPrescanComments(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      []string // the blanked comments' text
	}{
		{"after code", "x = 1 # one\ny = 2 // two\n", []string{"# one", "// two"}},
		{"on their own lines", "x = 1\n  # one\n# two\ny = 2\n", []string{"# one", "# two"}},
		{"the file's first token stays", "\n  # header\n# more\nx = 1\n", []string{"# more"}},
		{"no newline at the end of the file", "x = 1\n# last", nil},
		{"not ASCII", "x = 1 # étoile\ny = 2 # ok\n", []string{"# ok"}},
		{"in strings and heredocs", "x = \"# a // b\"\ny = <<EOT\n# c\nEOT\n", nil},
		{"in an interpolation", "x = \"${a # c\n}\"\n", []string{"# c"}},
		{"block comments stay", "x = 1 /* a */\ny = 2\n", nil},
		{"not plain", "step \"s\" { shell { x = 1 } } # c\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, spans := prescan([]byte(tt.src))
			var got []string
			for _, s := range spans {
				got = append(got, tt.src[s.start:s.end])
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("blanked %q, want %q", got, tt.want)
			}
			checkPlain(t, []byte(tt.src))
		})
	}
}
