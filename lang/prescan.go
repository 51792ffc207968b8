package lang

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// plain reports whether ParseConfig can hand src to HCL's parser as it is:
// no one-line block in it holds a nested block, and nothing in it nests
// deeper than MaxNesting. It reads the bytes once, without HCL's lexer
// (which costs as much as the parse itself), and answers false whenever
// it is not sure: then ParseConfig lexes the file and scans its tokens.
//
// It tracks what decides the structure the way HCL's lexer does
// (scan_tokens.rl): quoted strings and heredocs, their ${ } and %{ }
// sequences and $${ %%{ escapes, comments, and brackets. Anything it does
// not model gives up: an unclosed block comment, carriage returns, a byte order mark,
// bytes that are not UTF-8, non-ASCII outside strings and comments, a
// closer that does not match, a malformed heredoc, the end of the file
// with something open. Its nesting figure is an upper bound of
// splitScanner's: a level per open bracket, plus every ?, ! and - since
// the bracket opened (or since the last comma, or newline in braces), plus
// the open %{ if } and %{ for } directives of a template. FuzzPlain
// checks it against the token scan.
func plain(src []byte) bool {
	ok, _ := prescan(src)
	return ok
}

// prescan is plain, and the line comments of a plain file that
// ParseConfig may blank before HCL's lexer reads the file: each a span
// of src from its # or // up to the newline that ends it (which stays),
// ASCII throughout. Their text is a third of the bytes of a commented
// file, and HCL's lexer reads each byte of a token as a grapheme cluster.
func prescan(src []byte) (ok bool, comments []span) {
	if bytes.IndexByte(src, '\r') >= 0 ||
		bytes.HasPrefix(src, []byte("\xef\xbb\xbf")) || !utf8.Valid(src) {
		return false, nil
	}
	p := prescanner{src: src, stack: []pframe{{kind: '{', body: true}}}
	if !p.run() {
		return false, nil
	}
	return true, p.comments
}

// A span is the bytes [start, end) of a file.
type span struct{ start, end int }

// A pframe is an open bracket, string or template sequence. kind is the
// byte that opened it: one of { [ ( for brackets, " for a quoted string,
// < for a heredoc, $ for ${ and % for %{.
type pframe struct {
	kind   byte
	count  int    // ?, ! and - seen (directives, in a template)
	marker []byte // a heredoc's closing marker

	// Block bodies (and the file) only.
	body    bool
	state   itemState
	oneLine bool // the "{" is followed by more on its line
}

type prescanner struct {
	src   []byte
	i     int
	stack []pframe
	depth int // sum over open frames but the file's of 1 + count, plus the file's count

	comments []span // line comments that may be blanked (prescan)
}

func (p *prescanner) top() *pframe { return &p.stack[len(p.stack)-1] }

// push opens a frame; it reports false past MaxNesting.
func (p *prescanner) push(f pframe) bool {
	p.stack = append(p.stack, f)
	p.depth++
	return p.depth <= MaxNesting
}

// pop closes the top frame if it is of one of the given kinds.
func (p *prescanner) pop(kinds string) bool {
	if len(p.stack) == 1 || strings.IndexByte(kinds, p.top().kind) < 0 {
		return false
	}
	p.depth -= 1 + p.top().count
	p.stack = p.stack[:len(p.stack)-1]
	return true
}

func (p *prescanner) count(delta int) bool {
	t := p.top()
	n := max(t.count+delta, 0)
	p.depth += n - t.count
	t.count = n
	return p.depth <= MaxNesting
}

func (p *prescanner) run() bool {
	for p.i < len(p.src) {
		var ok bool
		switch p.top().kind {
		case '"':
			ok = p.quoted()
		case '<':
			ok = p.heredoc()
		default:
			ok = p.code()
		}
		if !ok {
			return false
		}
	}
	return len(p.stack) == 1
}

// code reads one token of code. In a block body it follows the item
// state as splitScanner does, to tell a nested block's "{" from an
// object's.
func (p *prescanner) code() bool {
	c, rest := p.src[p.i], p.src[p.i+1:]
	p.i++
	t := p.top()
	switch {
	case c == ' ' || c == '\t':
		return true
	case c >= utf8.RuneSelf:
		return false
	case c == '/' && len(rest) > 0 && rest[0] == '*':
		// A block comment: the parser drops it, newlines and all, and
		// so does the token scan.
		end := bytes.Index(rest[1:], []byte("*/"))
		if end < 0 {
			return false
		}
		p.i += 1 + end + 2
		return true
	case c == '\n' || c == '#' || c == '/' && len(rest) > 0 && rest[0] == '/':
		if c != '\n' {
			p.comment()
		}
		if t.kind == '{' {
			p.count(-t.count)
		}
		if t.body {
			t.state = itemStart
		}
		return true
	case c == ',':
		p.count(-t.count)
		return true
	case c == '!' || c == '-':
		if t.body && t.state != itemAttr {
			t.state = itemAttr
		}
		return p.count(1)
	case isIdentByte(c) && (c < '0' || c > '9'):
		for p.i < len(p.src) && (isIdentByte(p.src[p.i]) || p.src[p.i] == '-') {
			p.i++
		}
		if t.body && t.state != itemAttr {
			t.state = itemHeader
		}
		return true
	case c == '"':
		if t.body && t.state != itemHeader {
			t.state = itemAttr
		}
		return p.push(pframe{kind: '"'})
	case c == '{' && t.body && t.state == itemHeader:
		if t.oneLine {
			return false // a nested block in a one-line block: newlines go in
		}
		t.state = itemAttr
		return p.push(pframe{kind: '{', body: true, oneLine: !p.atLineEnd()})
	case c == '}' && t.body:
		if !p.pop("{") {
			return false
		}
		p.top().state = itemAttr
		return true
	}
	if t.body {
		t.state = itemAttr
	}
	switch {
	case c == '?':
		return p.count(1)
	case c == '{' || c == '[' || c == '(':
		return p.push(pframe{kind: c})
	case c == ']':
		return p.pop("[")
	case c == ')':
		return p.pop("(")
	case c == '}':
		return p.pop("{$%")
	case c == '~' && len(rest) > 0 && rest[0] == '}':
		p.i++
		return p.pop("$%")
	case c == '<' && len(rest) > 0 && rest[0] == '<':
		return p.openHeredoc()
	}
	return true
}

// atLineEnd reports whether only spaces, then a newline, a line comment or
// the end of the file follow.
func (p *prescanner) atLineEnd() bool {
	rest := bytes.TrimLeft(p.src[p.i:], " \t")
	return len(rest) == 0 || rest[0] == '\n' || rest[0] == '#' || bytes.HasPrefix(rest, []byte("//"))
}

// comment reads a line comment (p.i is after its # or first /) and notes
// it in p.comments when it ends with a newline, is ASCII and is not the
// file's first token: blanked, such a comment leaves the newline token
// that the parser reads in its place, and the columns of what follows on
// the line, of which there is none.
func (p *prescanner) comment() {
	start := p.i - 1
	p.skipLine()
	end := p.i - 1
	if end < start || p.src[end] != '\n' {
		return
	}
	if len(bytes.TrimLeft(p.src[:start], " \t\n")) == 0 {
		return // the file's first token, where its body's range starts
	}
	for _, c := range p.src[start:end] {
		if c >= utf8.RuneSelf {
			return
		}
	}
	p.comments = append(p.comments, span{start, end})
}

func (p *prescanner) skipLine() {
	if n := bytes.IndexByte(p.src[p.i:], '\n'); n >= 0 {
		p.i += n + 1
	} else {
		p.i = len(p.src)
	}
}

// openHeredoc reads <<MARKER or <<-MARKER and its newline (p.i is at the
// second <).
func (p *prescanner) openHeredoc() bool {
	rest := p.src[p.i+1:]
	rest = bytes.TrimPrefix(rest, []byte("-"))
	n := 0
	for n < len(rest) && (isIdentByte(rest[n]) || n > 0 && rest[n] == '-') {
		n++
	}
	if n == 0 || rest[0] >= '0' && rest[0] <= '9' || rest[0] == '-' || n == len(rest) || rest[n] != '\n' {
		return false
	}
	p.i = len(p.src) - len(rest) + n + 1
	return p.push(pframe{kind: '<', marker: rest[:n]})
}

func isIdentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// quoted reads a quoted string's text up to its end or a template
// sequence.
func (p *prescanner) quoted() bool {
	for p.i < len(p.src) {
		switch c := p.src[p.i]; c {
		case '"':
			p.i++
			return p.pop(`"`)
		case '\n':
			return false
		case '\\':
			if p.i+1 < len(p.src) && p.src[p.i+1] == '\n' {
				return false
			}
			p.i += 2
		case '$', '%':
			if ok, opened := p.sequence(); opened || !ok {
				return ok
			}
		default:
			p.i++
		}
	}
	return false
}

// heredoc reads a heredoc's text up to its closing marker or a template
// sequence. A line whose text, spaces trimmed, is the marker closes it,
// if the line starts in the text (not inside a sequence).
func (p *prescanner) heredoc() bool {
	lineStart := p.i == 0 || p.src[p.i-1] == '\n'
	for p.i < len(p.src) {
		if lineStart {
			end := bytes.IndexByte(p.src[p.i:], '\n')
			if end < 0 {
				return false // the marker needs its newline, so never closed
			}
			if bytes.Equal(bytes.TrimSpace(p.src[p.i:p.i+end]), p.top().marker) {
				// The newline after the marker is a token of its own,
				// which ends the item the heredoc is in: code reads it.
				p.i += end
				return p.pop("<")
			}
		}
		switch c := p.src[p.i]; c {
		case '\n':
			p.i++
			lineStart = true
			continue
		case '$', '%':
			if ok, opened := p.sequence(); opened || !ok {
				return ok
			}
		default:
			p.i++
		}
		lineStart = false
	}
	return false
}

// sequence reads what starts with the $ or % at p.i in a template: a ${
// or %{ sequence (opened), an escaped $${ or %%{, or a lone $ or %.
func (p *prescanner) sequence() (ok, opened bool) {
	c, rest := p.src[p.i], p.src[p.i+1:]
	switch {
	case len(rest) >= 2 && rest[0] == c && rest[1] == '{':
		p.i += 3
		return true, false
	case len(rest) >= 1 && rest[0] == '{':
		p.i += 2
		if c == '%' && !p.directive() {
			return false, true
		}
		return p.push(pframe{kind: c}), true
	}
	p.i++
	return true, false
}

// directive counts a %{ if } or %{ for } against the template it is in,
// and uncounts an endif or endfor, as splitScanner does (p.i is after
// the %{).
func (p *prescanner) directive() bool {
	rest := bytes.TrimPrefix(p.src[p.i:], []byte("~"))
	rest = bytes.TrimLeft(rest, " \t")
	n := 0
	for n < len(rest) && (isIdentByte(rest[n]) || rest[n] == '-') {
		n++
	}
	if n < len(rest) && rest[n] >= utf8.RuneSelf {
		return false
	}
	switch string(rest[:n]) {
	case "if", "for":
		return p.count(1)
	case "endif", "endfor":
		return p.count(-1)
	}
	return true
}
