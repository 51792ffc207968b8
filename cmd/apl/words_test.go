package main

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"bash agent.sh", []string{"bash", "agent.sh"}},
		{"  a\tb\nc  ", []string{"a", "b", "c"}},
		{`a 'b c' "d \"e\" \$f" g\ h`, []string{"a", "b c", `d "e" $f`, "g h"}},
		{`"a\\b" 'c\d' ''`, []string{`a\b`, `c\d`, ""}},
		{`claude -p --model 'opus' # the default agent`, []string{"claude", "-p", "--model", "opus"}},
		{`say '$HOME' "~" ~`, []string{"say", "$HOME", "~", "~"}},
	} {
		got, err := splitCommand(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("splitCommand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

// TestSplitCommandRefuses checks that what only a shell could do is an
// error that says where, not a word passed on as text.
func TestSplitCommandRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`bash 'agent.sh`, "1:6: reached EOF without closing quote `'`"},
		{`bash "agent.sh`, "1:6: reached EOF without closing quote `\"`"},
		{`agent $HOME/x`, "1:7: $HOME is expanded by a shell"},
		{`agent "at $(date)"`, "1:11: $(date) is expanded by a shell"},
		{`agent $((1+2))`, "1:7: $((1 + 2)) is expanded by a shell"},
		{`agent | tee log`, "1:7: `|` is not a valid word"},
		{`agent > log`, "1:7: `>` is not a valid word"},
		{`agent; rm x`, "1:6: `;` is not a valid word"},
	} {
		_, err := splitCommand(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("splitCommand(%q): error %v, want one saying %q", tc.in, err, tc.want)
		}
	}
}
