package builtins

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// quoteCases are values a playbook could interpolate into a script.
var quoteCases = []string{
	"",
	"plain",
	"two words",
	"$(touch pwned)",
	"`touch pwned`",
	"a'b; rm -rf ~",
	"'",
	"''",
	`"double"`,
	`back\slash\`,
	"new\nline\n",
	"tab\there",
	"ünïcödé ✓ 日本",
	"$HOME ${HOME} $1 $@ $$",
	"*",
	"~",
	"-n",
	"!event",
	"a=b",
	"%1",
	"if",
	"{a,b}",
	"[abc]",
	"x > y < z | w & v ; u",
	"#comment",
	"\x01\x7f\xff",
}

// echoArg runs bash with the quoted word as the argument of printf and
// returns what bash passed on, with side effects confined to a temp dir.
func echoArg(t testing.TB, dir, s string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", "printf %s "+ShellQuote(s))
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash failed for %q (quoted %s): %v", s, ShellQuote(s), err)
	}
	return string(out)
}

func TestShellQuoteRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, s := range quoteCases {
		t.Run(s, func(t *testing.T) {
			if got := echoArg(t, dir, s); got != s {
				t.Errorf("bash saw %q, want %q (quoted as %s)", got, s, ShellQuote(s))
			}
		})
	}
	// printf concatenates its arguments, so a value split into several
	// words would still print the same; count the words as well.
	t.Run("one word each", func(t *testing.T) {
		words := make([]string, 0, len(quoteCases))
		for _, s := range quoteCases {
			words = append(words, ShellQuote(s))
		}
		cmd := exec.Command("bash", "-c", "set -- "+strings.Join(words, " ")+"; echo $#")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != strconv.Itoa(len(quoteCases)) {
			t.Errorf("bash saw %s words, want %d", got, len(quoteCases))
		}
	})
}

func TestShellQuoteCommandPosition(t *testing.T) {
	t.Parallel()
	// An assignment-looking or reserved value must stay a command name.
	for _, s := range []string{"FOO=bar", "if", "done"} {
		t.Run(s, func(t *testing.T) {
			cmd := exec.Command("bash", "-c", ShellQuote(s)+" 2>/dev/null; echo $?")
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSpace(string(out)); got != "127" {
				t.Errorf("%s ran as %s: exit %s, want 127 (command not found)", s, ShellQuote(s), got)
			}
		})
	}
}

func TestShellQuoteLeavesSafeWordsBare(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"src/main.go": "src/main.go",
		"v1.2+3":      "v1.2+3",
		"a b":         "'a b'",
		"a=b":         "'a=b'",
		"it's":        `'it'\''s'`,
		"":            "''",
		"done":        "'done'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func FuzzShellQuote(f *testing.F) {
	for _, s := range quoteCases {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, s string) {
		if strings.ContainsRune(s, 0) {
			t.Skip("NUL cannot pass through argv")
		}
		if got := echoArg(t, dir, s); got != s {
			t.Errorf("bash saw %q, want %q (quoted as %s)", got, s, ShellQuote(s))
		}
	})
}
