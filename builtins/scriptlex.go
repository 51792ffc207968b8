package builtins

import (
	"errors"
	"fmt"
	"strings"
)

// lexContext is where in bash's lexical structure a value would land.
type lexContext int

const (
	ctxBare          lexContext = iota // top level, (...), $(...), <(...)
	ctxDouble                          // "..." and $"..."
	ctxSingle                          // '...'
	ctxANSI                            // $'...'
	ctxBacktick                        // `...`
	ctxParam                           // ${...}
	ctxArith                           // $((...)) and ((...))
	ctxComment                         // # to the end of the line
	ctxHeredoc                         // the body of <<EOF
	ctxHeredocQuoted                   // the body of <<'EOF', <<"EOF", <<\EOF
)

func (c lexContext) String() string {
	switch c {
	case ctxBare:
		return "in a bare word"
	case ctxDouble:
		return "inside double quotes"
	case ctxSingle:
		return "inside single quotes"
	case ctxANSI:
		return "inside $'...' quotes"
	case ctxBacktick:
		return "inside backticks"
	case ctxParam:
		return "inside a ${...} parameter expansion"
	case ctxArith:
		return "inside arithmetic ((...))"
	case ctxComment:
		return "in a comment"
	case ctxHeredoc:
		return "in a here-document"
	case ctxHeredocQuoted:
		return "in a quoted here-document"
	}
	return "in an unknown context"
}

// frame is one open construct. Bare frames other than the outermost are
// closed by ")"; depth counts nested parentheses or braces.
type frame struct {
	kind       lexContext
	closeParen bool
	inDouble   bool // a ${...} inside "...", where ' is literal
	depth      int
	doc        heredoc // for here-document bodies
}

type heredoc struct {
	delim  string
	quoted bool
	strip  bool // <<-: leading tabs are removed from every line
}

// delimWord is the here-document delimiter being read after << .
type delimWord struct {
	word    strings.Builder
	strip   bool
	quoted  bool
	started bool
	quote   byte
	esc     bool
}

// lexer follows the lexical context of a bash script fed to it in pieces.
// It knows just enough of bash's grammar to tell which quoting rules apply
// at the end of the text; it does not validate the script.
type lexer struct {
	stack   []frame
	held    string // a tail that needs more text to be read
	prev    byte   // the last byte read
	inName  bool   // the text ends in $NAME, which a letter would extend
	pending []heredoc
	delim   *delimWord
	line    strings.Builder // the current line, for here-document delimiters
	lineVal bool            // a value contributed to it
}

// more is returned by peek when the byte is not known yet; value stands
// for the first byte of a value about to be spliced in.
const (
	more  = -1
	value = -2
)

func (l *lexer) top() *frame {
	if len(l.stack) == 0 {
		l.stack = append(l.stack, frame{kind: ctxBare})
	}
	return &l.stack[len(l.stack)-1]
}

func (l *lexer) push(f frame) { l.top(); l.stack = append(l.stack, f) }

func (l *lexer) pop() {
	if len(l.stack) > 1 {
		l.stack = l.stack[:len(l.stack)-1]
	}
}

// feed reads text. fromValue marks text that quotes a value, so that a
// here-document line a value helped to form can be told apart.
func (l *lexer) feed(text string, fromValue bool) error {
	buf := l.held + text
	l.held = ""
	for i := 0; i < len(buf); {
		n, err := l.step(buf[i:], fromValue, false)
		if err != nil {
			return err
		}
		if n == 0 {
			l.held = buf[i:]
			return nil
		}
		if n > 0 {
			l.took(buf[i:i+n], fromValue)
			i += n
		}
	}
	return nil
}

// took notes bytes a step consumed.
func (l *lexer) took(seg string, fromValue bool) {
	l.prev = seg[len(seg)-1]
	if seg != "\n" {
		l.line.WriteString(seg)
		l.lineVal = l.lineVal || fromValue
	}
}

// valueContext settles any held tail as if a value followed it and
// returns the context the value lands in.
func (l *lexer) valueContext() (lexContext, error) {
	for l.held != "" {
		buf := l.held
		l.held = ""
		for i := 0; i < len(buf); {
			n, err := l.step(buf[i:], false, true)
			if err != nil {
				return 0, err
			}
			if n > 0 {
				l.took(buf[i:i+n], false)
				i += n
			}
		}
	}
	if l.delim != nil {
		return 0, fmt.Errorf("a value as a here-document delimiter: %w; write the delimiter literally", ErrUnsafeContext)
	}
	return l.top().kind, nil
}

// step reads the construct at the start of buf and returns how many bytes
// it took: 0 means it needs more text (never when force is set, where a
// missing byte is the start of a value), and -1 means it took none but
// changed state, so the same byte is read again.
func (l *lexer) step(buf string, fromValue, force bool) (int, error) {
	peek := func(k int) int {
		if k < len(buf) {
			return int(buf[k])
		}
		if force {
			return value
		}
		return more
	}
	c := buf[0]
	if l.inName {
		if isIdent(c) {
			return 1, nil
		}
		l.inName = false
	}
	if l.delim != nil {
		return l.stepDelim(c)
	}
	if c == '\n' {
		switch err := l.endLine(); err {
		case nil:
		case errHeredocEnded:
			return 1, nil
		default:
			return 0, err
		}
	}
	f := l.top()
	if f.kind == ctxComment {
		if c != '\n' {
			return 1, nil
		}
		l.pop() // the newline also ends the command line
		f = l.top()
	}
	// after reports a lookahead byte that is still unknown, and the value
	// cases that no quoting can make safe.
	after := func(p int, what string) (int, error) {
		if p == value {
			return 0, fmt.Errorf("a value right after %s: %w; put a space or a literal character between them", what, ErrUnsafeContext)
		}
		return 0, nil
	}
	switch f.kind {
	case ctxSingle:
		if c == '\'' {
			l.pop()
		}
		return 1, nil
	case ctxANSI, ctxBacktick:
		switch {
		case c == '\\':
			if p := peek(1); p < 0 {
				return after(p, "a backslash")
			}
			return 2, nil
		case c == '\'' && f.kind == ctxANSI, c == '`' && f.kind == ctxBacktick:
			l.pop()
		}
		return 1, nil
	case ctxHeredoc, ctxHeredocQuoted:
		return l.stepHeredoc(buf, fromValue, peek, after)
	}

	// Bare, double-quoted, ${...} and arithmetic text.
	switch c {
	case '\\':
		if p := peek(1); p < 0 {
			return after(p, "a backslash")
		}
		return 2, nil
	case '$':
		return l.stepDollar(peek, after)
	case '`':
		l.push(frame{kind: ctxBacktick})
		return 1, nil
	case '"':
		if f.kind == ctxDouble {
			l.pop()
		} else {
			l.push(frame{kind: ctxDouble})
		}
		return 1, nil
	}
	switch f.kind {
	case ctxDouble:
		return 1, nil
	case ctxParam:
		switch c {
		case '{':
			f.depth++
		case '}':
			if f.depth == 0 {
				l.pop()
			} else {
				f.depth--
			}
		case '\'':
			if !f.inDouble {
				l.push(frame{kind: ctxSingle})
			}
		}
		return 1, nil
	case ctxArith:
		switch c {
		case '(':
			f.depth++
		case ')':
			if f.depth > 0 {
				f.depth--
				return 1, nil
			}
			p := peek(1)
			if p == more {
				return 0, nil
			}
			l.pop()
			if p == ')' {
				return 2, nil
			}
		}
		return 1, nil
	}

	// Bare text.
	switch c {
	case '\'':
		l.push(frame{kind: ctxSingle})
	case '#':
		if strings.IndexByte(" \t\n;&|(<>", l.prev) >= 0 || l.prev == 0 {
			l.push(frame{kind: ctxComment})
		}
	case '(':
		p := peek(1)
		if p == more {
			return 0, nil
		}
		if p == '(' {
			l.push(frame{kind: ctxArith})
			return 2, nil
		}
		l.push(frame{kind: ctxBare, closeParen: true})
	case ')':
		if f.closeParen {
			l.pop()
		}
	case '<', '>':
		p := peek(1)
		if p == more {
			return 0, nil
		}
		if p == '(' {
			l.push(frame{kind: ctxBare, closeParen: true})
			return 2, nil
		}
		if c == '>' || p != '<' {
			return 1, nil
		}
		switch peek(2) {
		case more:
			return 0, nil
		case '<':
			return 3, nil // a here-string
		case '-':
			l.delim = &delimWord{strip: true}
			return 3, nil
		}
		l.delim = &delimWord{}
		return 2, nil
	case '\n':
		if len(l.pending) > 0 {
			l.startHeredoc()
		}
	}
	return 1, nil
}

// stepDollar reads what a $ starts.
func (l *lexer) stepDollar(peek func(int) int, after func(int, string) (int, error)) (int, error) {
	f := l.top()
	p := peek(1)
	switch {
	case p < 0:
		return after(p, "$")
	case p == '(':
		switch peek(2) {
		case more:
			return 0, nil
		case '(':
			l.push(frame{kind: ctxArith})
			return 3, nil
		}
		l.push(frame{kind: ctxBare, closeParen: true})
		return 2, nil
	case p == '{':
		l.push(frame{kind: ctxParam, inDouble: f.kind == ctxDouble || f.inDouble})
		return 2, nil
	case p == '\'' && f.kind != ctxDouble && f.kind != ctxHeredoc && !(f.kind == ctxParam && f.inDouble):
		l.push(frame{kind: ctxANSI})
		return 2, nil
	case p == '"' && f.kind != ctxDouble && f.kind != ctxHeredoc:
		l.push(frame{kind: ctxDouble})
		return 2, nil
	case isIdent(byte(p)) && !('0' <= p && p <= '9'):
		l.inName = true
		return 2, nil
	}
	return 1, nil
}

// stepDelim reads the word after << or <<- .
func (l *lexer) stepDelim(c byte) (int, error) {
	d := l.delim
	switch {
	case d.esc:
		d.esc = false
		d.word.WriteByte(c)
		return 1, nil
	case d.quote != 0:
		if c == d.quote {
			d.quote = 0
		} else {
			d.word.WriteByte(c)
		}
		return 1, nil
	}
	switch c {
	case '\'', '"':
		d.quote, d.quoted, d.started = c, true, true
		return 1, nil
	case '\\':
		d.esc, d.quoted, d.started = true, true, true
		return 1, nil
	case ' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')':
		if !d.started && (c == ' ' || c == '\t') {
			return 1, nil
		}
		l.pending = append(l.pending, heredoc{delim: d.word.String(), quoted: d.quoted, strip: d.strip})
		l.delim = nil
		return -1, nil // read c again as ordinary text
	}
	d.word.WriteByte(c)
	d.started = true
	return 1, nil
}

func (l *lexer) startHeredoc() {
	h := l.pending[0]
	l.pending = l.pending[1:]
	kind := ctxHeredoc
	if h.quoted {
		kind = ctxHeredocQuoted
	}
	l.push(frame{kind: kind, doc: h})
}

// endLine is called at every newline: when a here-document body is open,
// bash compares each raw line with its delimiter before it expands
// anything, so a matching line closes the body and whatever was left open
// inside it.
func (l *lexer) endLine() error {
	line, lineVal := l.line.String(), l.lineVal
	l.line.Reset()
	l.lineVal = false
	for i := len(l.stack) - 1; i > 0; i-- {
		f := l.stack[i]
		if f.kind != ctxHeredoc && f.kind != ctxHeredocQuoted {
			continue
		}
		if f.doc.strip {
			line = strings.TrimLeft(line, "\t")
		}
		if line != f.doc.delim {
			return nil
		}
		if lineVal {
			return fmt.Errorf("a value makes the line %q, which ends the here-document early: %w; pass the value another way (an environment variable, stdin or a file)", line, ErrUnsafeContext)
		}
		l.stack = l.stack[:i]
		if len(l.pending) > 0 {
			l.startHeredoc()
		}
		return errHeredocEnded
	}
	return nil
}

// errHeredocEnded tells step that endLine consumed the newline.
var errHeredocEnded = errors.New("here-document ended")

// stepHeredoc reads a here-document body. Only an unquoted body has
// expansions; bash reads it like double-quoted text in which " is
// ordinary.
func (l *lexer) stepHeredoc(buf string, fromValue bool, peek func(int) int, after func(int, string) (int, error)) (int, error) {
	f := l.top()
	c := buf[0]
	if fromValue && c == '\t' && f.doc.strip && strings.Trim(l.line.String(), "\t") == "" {
		return 0, fmt.Errorf("a value line that starts with a tab in a <<- here-document: %w; bash strips leading tabs there, use << instead", ErrUnsafeContext)
	}
	if f.kind == ctxHeredocQuoted {
		return 1, nil
	}
	switch c {
	case '\\':
		if p := peek(1); p < 0 {
			return after(p, "a backslash")
		}
		return 2, nil
	case '$':
		return l.stepDollar(peek, after)
	case '`':
		l.push(frame{kind: ctxBacktick})
	}
	return 1, nil
}

func isIdent(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
