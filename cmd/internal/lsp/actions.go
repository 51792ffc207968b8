package lsp

import (
	"regexp"
	"strings"
)

// didYouMean finds a diagnostic's suggestion: the name lang offers, and
// the names the message quotes, one of which is the misspelling.
var (
	didYouMean = regexp.MustCompile(`Did you mean "([^"]+)"\?`)
	quotedWord = regexp.MustCompile(`"([^"]+)"`)
)

// codeActions offers, for each diagnostic of the request that says "Did
// you mean", the edit that makes the change: the misspelled name, quoted
// in the message and written in the diagnostic's range, replaced by the
// suggestion.
func (s *Server) codeActions(uri string, diags []Diagnostic) any {
	d := s.docs[uri]
	out := []any{}
	if d == nil {
		return out
	}
	for _, diag := range diags {
		m := didYouMean.FindStringSubmatch(diag.Message)
		if m == nil {
			continue
		}
		want := m[1]
		start, end := offset(d.text, diag.Range.Start), offset(d.text, diag.Range.End)
		if end < start || end > len(d.text) {
			continue
		}
		text := string(d.text[start:end])
		for _, q := range quotedWord.FindAllStringSubmatch(diag.Message[:strings.Index(diag.Message, m[0])], -1) {
			name := q[1]
			i := wordIndex(text, name)
			if name == want || i < 0 {
				continue
			}
			from := start + i
			edit := TextEdit{Range: Range{Start: position(d.text, from), End: position(d.text, from+len(name))}, NewText: want}
			out = append(out, map[string]any{
				"title":       "Change " + name + " to " + want,
				"kind":        "quickfix",
				"diagnostics": []Diagnostic{diag},
				"isPreferred": true,
				"edit":        map[string]any{"changes": map[string][]TextEdit{uri: {edit}}},
			})
			break
		}
	}
	return out
}

// wordIndex is the index of name in text as a whole word, -1 if none.
func wordIndex(text, name string) int {
	for i := 0; ; {
		j := strings.Index(text[i:], name)
		if j < 0 {
			return -1
		}
		j += i
		before := j == 0 || !isNameByte(text[j-1])
		after := j+len(name) == len(text) || !isNameByte(text[j+len(name)])
		if before && after {
			return j
		}
		i = j + 1
	}
}
