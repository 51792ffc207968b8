package lang

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/rogpeppe/go-internal/txtar"
)

// subjectless are the only diagnostics without a Subject that loading
// sources may return: they are about the playbook as a whole, not a place
// in it. ("Cannot read playbook" has none either, but only Load returns it,
// before any source is read.)
var subjectless = map[string]bool{
	"Missing playbook block": true,
}

// checkDiagnostics reports diagnostics without a usable Subject: every one
// must point at a line of a file the load read, with byte offsets inside
// that file, so that it can be shown with a snippet.
func checkDiagnostics(t *testing.T, pb *Playbook, diags hcl.Diagnostics) {
	t.Helper()
	for _, d := range diags {
		s := d.Subject
		if s == nil {
			if !subjectless[d.Summary] {
				t.Errorf("diagnostic without a Subject: %s", d)
			}
			continue
		}
		src, ok := pb.Sources[s.Filename]
		switch {
		case !ok:
			t.Errorf("diagnostic %q points into %q, which is not a source of the load", d.Summary, s.Filename)
		case s.Start.Line <= 0 || s.Start.Line > strings.Count(string(src), "\n")+1:
			t.Errorf("diagnostic %q points at line %d of a %d-line file: %s", d.Summary, s.Start.Line, strings.Count(string(src), "\n")+1, d)
		case s.Start.Byte < 0 || s.Start.Byte > s.End.Byte || s.End.Byte > len(src):
			t.Errorf("diagnostic %q has byte offsets %d-%d in a %d-byte file: %s", d.Summary, s.Start.Byte, s.End.Byte, len(src), d)
		}
	}
}

// seedFiles returns the playbook files of every fixture and example.
func seedFiles(tb testing.TB) [][]byte {
	tb.Helper()
	var out [][]byte
	for _, pattern := range []string{
		"testdata/valid/*.hcl",
		"testdata/valid/prompts/*",
		"testdata/errors/*.hcl",
		"../examples/*/*.hcl",
	} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			out = append(out, b)
		}
	}
	archives, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil {
		tb.Fatal(err)
	}
	for _, a := range archives {
		ar, err := txtar.ParseFile(a)
		if err != nil {
			tb.Fatal(err)
		}
		for _, f := range ar.Files {
			if strings.HasSuffix(f.Name, ".hcl") {
				out = append(out, f.Data)
			}
		}
	}
	if len(out) == 0 {
		tb.Fatal("no seed files")
	}
	return out
}

// FuzzLoad loads arbitrary bytes as a playbook file: the loader must never
// panic, and every diagnostic must point into the source. file() paths
// resolve in testdata/valid, so seeds that read prompt files still do.
func FuzzLoad(f *testing.F) {
	for _, b := range seedFiles(f) {
		f.Add(b)
	}
	f.Add([]byte(""))
	f.Add([]byte("playbook"))
	f.Add([]byte(`playbook "x" {}` + "\nstep \"s\" { next = \"s\" }\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		pb, diags := (&Loader{}).LoadSources(map[string][]byte{"fuzz.hcl": src}, "testdata/valid")
		if pb == nil {
			t.Fatal("LoadSources returned a nil Playbook")
		}
		checkDiagnostics(t, pb, diags)
		_ = pb.String()
		for _, s := range pb.Steps {
			for _, e := range s.Edges {
				if e.From != s || e.To == nil {
					t.Errorf("step %s has a broken edge %+v", s.Name, e)
				}
			}
		}
	})
}

// condTemplate is a playbook whose gate rule's when is filled in by
// FuzzCondition; %s is an HCL expression (a quoted string or a heredoc).
const condTemplate = `playbook "fuzz" {
  description = "A fuzzed gate condition."
}

input "threshold" {
  type    = number
  default = 7
}

step "rate" {
  returns = object({
    score  = number
    ok     = bool
    tags   = list(string)
    checks = list(object({ name = string, pass = bool }))
  })
  shell {
    command = ["rate", tostring(inputs.threshold)]
    parse   = "json"
  }
  gate {
    rule "r" {
      when   = %s
      finish = "completed"
    }
    otherwise {
      fail = "halt"
    }
  }
}
`

// hclQuote writes s as an HCL quoted string whose value is s: escapes for
// quotes, backslashes and control characters, and $${ and %%{ so that
// template sequences stay literal.
func hclQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, r)
		case (r == '$' || r == '%') && strings.HasPrefix(s[i+1:], "{"):
			b.WriteRune(r)
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// hclHeredoc writes s as a heredoc whose value is s plus a newline, or
// reports false when s cannot be one (it holds the marker or a carriage
// return).
func hclHeredoc(s string) (string, bool) {
	if strings.Contains(s, "EXPR") || strings.ContainsAny(s, "\r") {
		return "", false
	}
	s = strings.ReplaceAll(s, "${", "$${")
	s = strings.ReplaceAll(s, "%{", "%%{")
	return "<<EXPR\n" + s + "\nEXPR", true
}

// FuzzCondition compiles arbitrary text as a gate rule's condition: the
// compiler must never panic, every diagnostic must point into the file,
// and a condition that compiles must keep its text as Source.
func FuzzCondition(f *testing.F) {
	for _, s := range []string{
		"",
		" ",
		"true",
		"steps.rate.output.ok",
		"steps.rate.output.score >= inputs.threshold",
		"steps.rate.output.scor > 7",
		"steps.rate.output.score == 'high'",
		"steps.rate.status == 'ok' && steps.rate.attempts < 3",
		"all(steps.rate.output.checks, .pass) && len(steps.rate.output.tags) > 0",
		"any(steps.rate.output.tags, # == 'x')",
		"run.mode in ['lenient', 'quality']",
		"inputs.threshold >",
		"(((",
		`"quoted" == 'single'`,
		`a\b`,
		"${inputs.threshold}",
		"%{ if true }x%{ endif }",
		"$${",
		"steps.rate.output.score >\n  'x'",
		"\n\n)",
		"étoile > 1",
		"steps['rate'].output['score'] > 1",
		"let x = 1; x > 0",
		"1..3 | len() > 2",
		"// a comment\ntrue",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, cond string) {
		cond = strings.ToValidUTF8(cond, "\uFFFD")
		exprs := []struct {
			hcl  string
			want string
		}{{hclQuote(cond), cond}}
		if h, ok := hclHeredoc(cond); ok {
			exprs = append(exprs, struct{ hcl, want string }{h, cond + "\n"})
		}
		for _, e := range exprs {
			src := fmt.Sprintf(condTemplate, e.hcl)
			pb, diags := (&Loader{}).LoadSources(map[string][]byte{"cond.hcl": []byte(src)}, t.TempDir())
			checkDiagnostics(t, pb, diags)
			for _, d := range diags {
				if d.Subject != nil && d.Severity == hcl.DiagError && d.Summary != "Invalid condition" && d.Summary != "Empty condition" {
					t.Errorf("the condition %q caused a diagnostic other than Invalid or Empty condition: %s\n%s", cond, d, src)
				}
			}
			s := pb.Step("rate")
			if s == nil || s.Gate == nil || len(s.Gate.Rules) != 1 {
				t.Fatalf("the template did not load: %s\n%s", diags, src)
			}
			c := s.Gate.Rules[0].When
			if diags.HasErrors() {
				continue
			}
			if c == nil || c.Program == nil {
				t.Fatalf("no diagnostics, but the condition %q was not compiled", cond)
			}
			// HCL normalises string literals to NFC, so only ASCII text is
			// sure to come back byte for byte.
			if isASCII(cond) && c.Source != e.want {
				t.Errorf("Source = %q, want %q (HCL: %s)", c.Source, e.want, e.hcl)
			}
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
