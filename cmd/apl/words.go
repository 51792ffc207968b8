package main

import (
	"fmt"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// splitCommand splits a command line (--agent-cmd) into argv words the
// way a shell does: blanks separate words, quotes and backslashes are
// removed, # starts a comment. apl runs the words without a shell, so
// what only a shell could do is refused rather than passed on as text:
// a parameter or command substitution, an arithmetic expansion, a
// redirection, a pipe or a second command.
func splitCommand(s string) ([]string, error) {
	var words []*syntax.Word
	for w, err := range syntax.NewParser().WordsSeq(strings.NewReader(s)) {
		if err != nil {
			return nil, fmt.Errorf("cannot split %q into words: %w", s, err)
		}
		if err := literalWord(w); err != nil {
			return nil, fmt.Errorf("cannot split %q into words: %w", s, err)
		}
		words = append(words, w)
	}
	// With no environment and no directory to read, expansion is only
	// quote removal (and brace expansion, as bash does it).
	out, err := expand.Fields(&expand.Config{Env: expand.ListEnviron()}, words...)
	if err != nil {
		return nil, fmt.Errorf("cannot split %q into words: %w", s, err)
	}
	return out, nil
}

// literalWord refuses a word whose value a shell would compute.
func literalWord(w *syntax.Word) error {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			continue
		case *syntax.SglQuoted:
			if !p.Dollar {
				continue
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				break
			}
			if err := literalWord(&syntax.Word{Parts: p.Parts}); err != nil {
				return err
			}
			continue
		}
		return fmt.Errorf("%s: %s is expanded by a shell, and apl runs the command without one; write its value, or run a shell: bash -c '...'", p.Pos(), wordText(p))
	}
	return nil
}

// wordText is a word part as written.
func wordText(p syntax.WordPart) string {
	var b strings.Builder
	syntax.NewPrinter().Print(&b, &syntax.Word{Parts: []syntax.WordPart{p}})
	return b.String()
}

// shellQuote quotes a word for a POSIX shell when it needs it, so that a
// command apl prints can be pasted back.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
