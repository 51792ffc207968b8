package builtins

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostileValues are values an agent, an input or a for_each key could
// hand a script, aimed at every context's escape characters.
var hostileValues = []string{
	"", "plain", "two words",
	"$(touch PWNED)", "`touch PWNED`", `"; touch PWNED; "`, `'; touch PWNED; '`,
	`\$(touch PWNED)`, `'$(touch PWNED)'`, `"$(touch PWNED)"`,
	"'", `"`, "`", `\`, `\\`, "$", "$$", "${HOME}", "$HOME", "!x", "*", "~", "-n", "%s",
	"a\nb", "\n", "trailing\n\n", "a\\\nb", "tab\tx", "\tlead",
	"EOF", "x\nEOF\ntouch PWNED", "EOF\n", " EOF",
	")", "))", "}", "(", "# not a comment", "a=b", "if", "ünï ✓",
}

// scriptTemplates put one value (@V@) in each lexical context that has a
// safe quoting. want is what bash must print; refuse reports the values
// that may be, and must be, refused.
var scriptTemplates = []struct {
	name, tmpl string
	want       func(v string) string
	refuse     func(v string) bool
}{
	{name: "bare", tmpl: `printf %s @V@`},
	{name: "double", tmpl: `printf %s "@V@"`},
	{name: "single", tmpl: `printf %s '@V@'`},
	{name: "title", tmpl: `echo "Title: @V@"`, want: func(v string) string { return "Title: " + v + "\n" }},
	{name: "assign", tmpl: `X=@V@; printf %s "$X"`},
	{name: "assign double", tmpl: `X="@V@"; printf %s "$X"`},
	{name: "single in cmdsubst in double", tmpl: `printf %s "$(printf %s. '@V@')"`, want: dot},
	{name: "double in cmdsubst in double", tmpl: `printf %s "$(printf %s. "@V@")"`, want: dot},
	{name: "bare in cmdsubst in double", tmpl: `printf %s "$(printf %s. @V@)"`, want: dot},
	{name: "mixed word", tmpl: `printf %s "a"@V@'b'`, want: func(v string) string { return "a" + v + "b" }},
	{name: "after a variable", tmpl: `Y=y; printf %s $Y@V@`, want: func(v string) string { return "y" + v }},
	{name: "after a variable in double", tmpl: `Y=y; printf %s "$Y@V@"`, want: func(v string) string { return "y" + v }},
	{name: "after tilde", tmpl: `printf %s ~@V@`, want: func(v string) string { return "~" + v }},
	{name: "for loop", tmpl: `for x in @V@; do printf %s "$x"; done`},
	{name: "comment", tmpl: "# it's @V@ here\nprintf %s ok", want: func(string) string { return "ok" }},
	{name: "heredoc", tmpl: "cat <<EOF\n@V@\nEOF\n", want: newline, refuse: hasLine("EOF")},
	{name: "heredoc mid-line", tmpl: "cat <<EOF\nv: @V@ end\nEOF\n", want: func(v string) string { return "v: " + v + " end\n" }, refuse: func(v string) bool {
		lines := strings.Split(v, "\n")
		return len(lines) > 2 && hasLine("EOF")(strings.Join(lines[1:len(lines)-1], "\n"))
	}},
	{name: "heredoc quoted", tmpl: "cat <<'EOF'\n@V@\nEOF\n", want: newline, refuse: hasLine("EOF")},
	{name: "heredoc double-quoted", tmpl: "cat <<\"EOF\"\n@V@\nEOF\n", want: newline, refuse: hasLine("EOF")},
	{name: "heredoc backslash", tmpl: "cat <<\\EOF\n@V@\nEOF\n", want: newline, refuse: hasLine("EOF")},
	{name: "heredoc strip tabs", tmpl: "cat <<-EOF\n\t@V@\n\tEOF\n", want: newline, refuse: func(v string) bool {
		return hasLine("EOF")(v) || strings.HasPrefix(v, "\t") || strings.Contains(v, "\n\t")
	}},
	{name: "heredoc in cmdsubst", tmpl: "printf %s \"$(cat <<EOF\n@V@\nEOF\n).\"", want: func(v string) string {
		return strings.TrimRight(v, "\n") + "."
	}, refuse: hasLine("EOF")},
	{name: "two heredocs", tmpl: "cat <<A; cat <<'B'\nA\n@V@\nB\n", want: newline, refuse: hasLine("B")},
	{name: "after quoted heredoc", tmpl: "cat <<'EOF'\n'\"`\nEOF\nprintf %s \"@V@\"", want: func(v string) string { return "'\"`\n" + v }},
	{name: "after heredoc", tmpl: "cat <<EOF\n'\"\nEOF\nprintf %s \"@V@\"", want: func(v string) string { return "'\"\n" + v }},
	{name: "here-string", tmpl: `cat <<<@V@`, want: newline},
	{name: "process substitution", tmpl: `cat <(printf %s @V@)`},
	{name: "subshell", tmpl: `(printf %s "@V@")`},
	{name: "arith literal then value", tmpl: `echo $((1+2)) >/dev/null; printf %s "@V@"`},
}

func dot(v string) string     { return v + "." }
func newline(v string) string { return v + "\n" }

func hasLine(delim string) func(string) bool {
	return func(v string) bool {
		for _, l := range strings.Split(v, "\n") {
			if l == delim {
				return true
			}
		}
		return false
	}
}

// buildScript renders tmpl with v at each @V@.
func buildScript(tmpl, v string) (string, error) {
	var s Script
	parts := strings.Split(tmpl, "@V@")
	for i, p := range parts {
		if i > 0 {
			if err := s.Value(v); err != nil {
				return "", err
			}
		}
		if err := s.Literal(p); err != nil {
			return "", err
		}
	}
	return s.String(), nil
}

// runBash runs script in dir and returns its stdout; the test fails if
// bash fails or anything was created in dir.
func runBash(t testing.TB, dir, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bash failed: %v\nscript:\n%s", err, script)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Fatalf("the script created %s\nscript:\n%s", ents[0].Name(), script)
	}
	return string(out)
}

func checkTemplate(t testing.TB, dir string, i int, v string) {
	tt := scriptTemplates[i]
	script, err := buildScript(tt.tmpl, v)
	refuse := tt.refuse != nil && tt.refuse(v)
	if err != nil {
		if !refuse || !errors.Is(err, ErrUnsafeContext) {
			t.Fatalf("%s: value %q refused: %v", tt.name, v, err)
		}
		return
	}
	if refuse {
		t.Fatalf("%s: value %q was not refused:\n%s", tt.name, v, script)
	}
	want := v
	if tt.want != nil {
		want = tt.want(v)
	}
	if got := runBash(t, dir, script); got != want {
		t.Errorf("%s: bash printed %q, want %q\nscript:\n%s", tt.name, got, want, script)
	}
}

func TestScriptQuotesByContext(t *testing.T) {
	t.Parallel()
	for i, tt := range scriptTemplates {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if batchOK(t, dir, i, hostileValues) {
				return
			}
			for _, v := range hostileValues {
				checkTemplate(t, dir, i, v)
			}
		})
	}
}

// batchOK runs every value's script in one bash, each in a subshell
// followed by a NUL, which is a hundred times faster than one bash each.
// It reports false if anything differs; checkTemplate then tells which.
func batchOK(t *testing.T, dir string, i int, values []string) bool {
	tt := scriptTemplates[i]
	var all strings.Builder
	var want []string
	for _, v := range values {
		script, err := buildScript(tt.tmpl, v)
		if err != nil || (tt.refuse != nil && tt.refuse(v)) {
			if err == nil || !errors.Is(err, ErrUnsafeContext) {
				return false
			}
			continue
		}
		all.WriteString("(\n" + script + "\n)\nprintf '\\0'\n")
		if tt.want != nil {
			v = tt.want(v)
		}
		want = append(want, v)
	}
	cmd := exec.Command("bash", "-c", all.String())
	cmd.Dir = dir
	out, err := cmd.Output()
	if ents, _ := os.ReadDir(dir); err != nil || len(ents) > 0 {
		return false
	}
	got := strings.Split(string(out), "\x00")
	return len(got) == len(want)+1 && strings.Join(got[:len(want)], "\x00") == strings.Join(want, "\x00")
}

// TestScriptInterpolationInsideQuotesRunsNothing is the regression test for
// issue 9: ShellQuote's single quotes are literal inside "...", so a value
// spliced into `echo "Title: ${v}"` used to run its command.
func TestScriptInterpolationInsideQuotesRunsNothing(t *testing.T) {
	t.Parallel()
	for _, tmpl := range []string{`echo "Title: @V@"`, `echo '@V@'`, "cat <<EOF\n@V@\nEOF", `X="@V@"`} {
		dir := t.TempDir()
		script, err := buildScript(tmpl, "$(touch PWNED)`touch PWNED2`'; touch PWNED3; '")
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", script, err, out)
		}
		for _, f := range []string{"PWNED", "PWNED2", "PWNED3"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
				t.Errorf("%s ran a command", script)
			}
		}
	}
}

func TestScriptRefusesUnsafeContexts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tmpl, v, want string
	}{
		{"echo `echo @V@`", "$(touch PWNED)", "inside backticks"},
		{"echo $((1 + @V@))", "a[$(touch PWNED)]", "inside arithmetic"},
		{"((x = @V@))", "y", "inside arithmetic"},
		{"echo $'@V@'", "a b", "inside $'...' quotes"},
		{"echo ${X:-@V@}", "a b", "parameter expansion"},
		{`echo "${X:-@V@}"`, "a b", "parameter expansion"},
		{"echo $@V@", "HOME", "right after $"},
		{`echo \@V@`, "'a b'", "right after a backslash"},
		{`echo "\@V@"`, "$(x)", "right after a backslash"},
		{"cat <<@V@\nx\n", "EOF", "here-document delimiter"},
		{"cat << @V@\nx\n", "EOF", "here-document delimiter"},
		{"cat <<EOF\n@V@OF\nEOF\n", "x\nE", "ends the here-document early"},
		{"Y=1; cat <<EOF\n$Y@V@\nEOF\n", "a", "extend the variable name"},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			script, err := buildScript(tt.tmpl, tt.v)
			if !errors.Is(err, ErrUnsafeContext) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %q, %v; want an ErrUnsafeContext naming %q", script, err, tt.want)
			}
		})
	}
	// A word made of characters no context treats specially is safe even
	// where nothing else is.
	for _, tmpl := range []string{"echo `echo @V@`", "echo $((1 + @V@))", "echo ${X:-@V@}", "echo $'@V@'"} {
		v := "42"
		if _, err := buildScript(tmpl, v); err != nil {
			t.Errorf("%s with %q: %v", tmpl, v, err)
		}
	}
}

func TestScriptValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	list := []string{"a b", "$(touch PWNED)", ""}
	for _, tt := range []struct{ before, after, want string }{
		{`printf '<%s>' `, ``, "<a b><$(touch PWNED)><>"},
		{`printf '<%s>' "`, `"`, "<a b $(touch PWNED) >"},
		{`printf '<%s>' '`, `'`, "<a b $(touch PWNED) >"},
	} {
		var s Script
		s.Literal(tt.before)
		if err := s.Values(list); err != nil {
			t.Fatal(err)
		}
		s.Literal(tt.after)
		if got := runBash(t, dir, s.String()); got != tt.want {
			t.Errorf("%s: got %q, want %q", s.String(), got, tt.want)
		}
	}
}

func TestScriptSpoiltAfterError(t *testing.T) {
	t.Parallel()
	var s Script
	s.Literal("echo `")
	first := s.Value("$(x)")
	if first == nil || s.Literal("`") != first || s.Value("ok") != first || s.Err() != first {
		t.Errorf("later calls did not return the first error %v", first)
	}
}

func FuzzScript(f *testing.F) {
	for _, v := range hostileValues {
		f.Add(v, uint8(0))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, v string, which uint8) {
		if strings.ContainsRune(v, 0) {
			t.Skip("NUL cannot pass through a bash script")
		}
		i := int(which) % len(scriptTemplates)
		checkTemplate(t, dir, i, v)
	})
}
