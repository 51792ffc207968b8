package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// ErrNoJSON is returned when an agent's answer holds no JSON at all.
var ErrNoJSON = errors.New("no JSON found in agent response")

// ErrTruncated is returned when an agent's JSON starts but never closes, or a
// backend reports that it stopped at its token limit. Truncated output is
// never repaired: the caller may retry the call, nothing else.
var ErrTruncated = errors.New("agent response is truncated")

// ExtractFromResponse returns the JSON answer of r: the backend's native
// structured answer when it has one, else whatever ExtractJSON finds in the
// text.
func ExtractFromResponse(r Response) (json.RawMessage, error) {
	s := bytes.TrimSpace(r.Structured)
	if len(s) > 0 && !bytes.Equal(s, []byte("null")) && json.Valid(s) {
		return json.RawMessage(s), nil
	}
	return ExtractJSON(r.Text)
}

// ExtractJSON finds the JSON answer in an agent's text. It tries, in order:
//
//  1. the whole text, trimmed, when it is valid JSON;
//  2. the last fenced code block tagged json (```json or ~~~json) whose
//     content parses, or an untagged fence whose content is a JSON object;
//  3. the last balanced top-level {...} that parses, scanning with string
//     and escape awareness so braces inside strings do not count.
//
// If an object opens after the chosen JSON (or anywhere, when none was
// found) and never closes, the answer was cut off and ExtractJSON returns
// ErrTruncated rather than an earlier object or a repaired guess: the agent's
// real answer is the one that was cut. Only an opening that looks like JSON
// ('{' followed by '"' or '}') counts, so a stray brace in prose does not.
// With nothing found it returns ErrNoJSON.
func ExtractJSON(text string) (json.RawMessage, error) {
	trimmed := strings.TrimSpace(text)
	if trimmed != "" && json.Valid([]byte(trimmed)) {
		return json.RawMessage(trimmed), nil
	}
	if raw, end, ok := lastFencedJSON(text); ok {
		if unclosedObjectAfter(text, end) {
			return nil, ErrTruncated
		}
		return raw, nil
	}
	raw, end, ok := lastBalancedObject(text)
	if ok {
		if unclosedObjectAfter(text, end) {
			return nil, ErrTruncated
		}
		return raw, nil
	}
	if unclosedObjectAfter(text, 0) {
		return nil, ErrTruncated
	}
	return nil, ErrNoJSON
}

// fence is one fenced code block: its info word, its content and where the
// block ends in the text.
type fence struct {
	lang    string
	content string
	end     int
}

// fences returns the closed fenced code blocks of text in order. A fence
// opened and never closed is not returned; the brace scan reports it as
// truncated if it held JSON.
func fences(text string) []fence {
	var out []fence
	var (
		open    bool
		marker  string // the opening run of backticks or tildes
		lang    string
		content strings.Builder
	)
	pos := 0
	for pos < len(text) {
		nl := strings.IndexByte(text[pos:], '\n')
		lineEnd := len(text)
		next := len(text)
		if nl >= 0 {
			lineEnd = pos + nl
			next = lineEnd + 1
		}
		line := strings.TrimRight(text[pos:lineEnd], "\r")
		indented := strings.TrimLeft(line, " ")
		if len(line)-len(indented) <= 3 {
			if !open {
				if m := fenceMarker(indented); m != "" {
					open, marker = true, m
					lang = strings.ToLower(firstWord(indented[len(m):]))
					content.Reset()
					pos = next
					continue
				}
			} else if m := fenceMarker(indented); m != "" && m[0] == marker[0] &&
				len(m) >= len(marker) && strings.TrimSpace(indented[len(m):]) == "" {
				out = append(out, fence{lang: lang, content: content.String(), end: lineEnd})
				open = false
				pos = next
				continue
			}
		}
		if open {
			content.WriteString(text[pos:next])
		}
		pos = next
	}
	return out
}

// fenceMarker returns the run of three or more backticks or tildes that
// starts line, or "".
func fenceMarker(line string) string {
	if len(line) < 3 || (line[0] != '`' && line[0] != '~') {
		return ""
	}
	n := 0
	for n < len(line) && line[n] == line[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return line[:n]
}

func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// lastFencedJSON returns the content of the last fence that is tagged json
// and parses, or is untagged and holds a JSON object.
func lastFencedJSON(text string) (json.RawMessage, int, bool) {
	fs := fences(text)
	for i := len(fs) - 1; i >= 0; i-- {
		f := fs[i]
		c := strings.TrimSpace(f.content)
		switch {
		case f.lang == "json" && c != "" && json.Valid([]byte(c)):
			return json.RawMessage(c), f.end, true
		case f.lang == "" && strings.HasPrefix(c, "{") && json.Valid([]byte(c)):
			return json.RawMessage(c), f.end, true
		}
	}
	return nil, 0, false
}

// lastBalancedObject returns the last top-level {...} in text that parses,
// and the offset just past it.
func lastBalancedObject(text string) (json.RawMessage, int, bool) {
	var (
		found json.RawMessage
		end   int
		ok    bool
	)
	pos, unclosed := 0, 0
	for pos < len(text) && unclosed < maxUnclosed {
		i := strings.IndexByte(text[pos:], '{')
		if i < 0 {
			break
		}
		start := pos + i
		close := matchBrace(text, start)
		if close < 0 {
			// Unclosed from here: a stray brace in prose, or a truncated
			// object. Look for complete objects after it either way.
			unclosed++
			pos = start + 1
			continue
		}
		cand := text[start : close+1]
		if json.Valid([]byte(cand)) {
			found, end, ok = json.RawMessage(cand), close+1, true
		}
		pos = close + 1
	}
	return found, end, ok
}

// maxUnclosed bounds the unclosed openings a scan steps past. Each costs a
// scan to the end of the text, so without a bound a text of n stray braces
// costs n²; an agent's answer never nests this deep before its JSON.
const maxUnclosed = 100

// matchBrace returns the index of the '}' that closes the '{' at start,
// or -1 when the text ends first. Braces inside JSON strings do not count.
func matchBrace(text string, start int) int {
	depth := 0
	inString, escaped := false, false
	for i := start; i < len(text); i++ {
		c := text[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// unclosedObjectAfter reports whether an object that looks like JSON opens
// at or after from and never closes.
func unclosedObjectAfter(text string, from int) bool {
	pos, unclosed := from, 0
	for pos < len(text) && unclosed < maxUnclosed {
		i := strings.IndexByte(text[pos:], '{')
		if i < 0 {
			return false
		}
		start := pos + i
		if close := matchBrace(text, start); close >= 0 {
			pos = close + 1 // braces inside a closed object are its own
			continue
		}
		rest := strings.TrimLeft(text[start+1:], " \t\r\n")
		if rest == "" || rest[0] == '"' || rest[0] == '}' {
			return true
		}
		unclosed++
		pos = start + 1
	}
	return false
}
