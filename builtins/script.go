package builtins

import (
	"errors"
	"fmt"
	"strings"
)

// Script builds a bash script from a template's literal text and the values
// interpolated into it, quoting each value for the place it lands in.
//
// ShellQuote alone is right only where a bare word may stand: its single
// quotes are literal characters inside "...", so `echo "T: ${v}"` with
// v = `$(touch x)` would run the command. Script follows bash's lexical
// context through the literal text (bare words, '...', "...", $(...)
// nested in double quotes, backticks, $'...', ${...}, arithmetic, comments
// and here-documents) and quotes every value so that bash reads exactly the
// value there. Where no quoting is safe it returns an error that names the
// context and the safe form, instead of guessing.
//
// Feed the template in order: Literal for template text, Value or Values
// for each interpolation. The zero Script is ready to use. After the first
// error the Script is spoilt and every later call returns that error.
type Script struct {
	b   strings.Builder
	lex lexer
	err error
}

// Literal appends template text as it is written. It returns an error only
// when the text completes a here-document line that an earlier value
// started, so that the value would have ended the here-document early.
func (s *Script) Literal(text string) error {
	if s.err != nil {
		return s.err
	}
	s.b.WriteString(text)
	s.err = s.lex.feed(text, false)
	return s.err
}

// Value appends v quoted for the context the literal text so far leaves
// bash in, so that bash reads exactly v as (part of) one word. The error
// names the context when no quoting is safe there.
func (s *Script) Value(v string) error {
	if s.err != nil {
		return s.err
	}
	ctx, err := s.lex.valueContext()
	if err == nil {
		var q string
		if q, err = quoteFor(ctx, &s.lex, v); err == nil {
			s.b.WriteString(q)
			err = s.lex.feed(q, true)
		}
	}
	s.err = err
	return err
}

// Values appends a list. Where a bare word may stand each element becomes
// its own word, separated by spaces; inside quotes, a here-document or a
// comment the elements are joined with single spaces into one value. An
// empty list adds nothing in a bare position and an empty value elsewhere.
func (s *Script) Values(list []string) error {
	if s.err != nil {
		return s.err
	}
	ctx, err := s.lex.valueContext()
	if err != nil {
		s.err = err
		return err
	}
	if ctx != ctxBare {
		return s.Value(strings.Join(list, " "))
	}
	for i, v := range list {
		if i > 0 {
			if err := s.Literal(" "); err != nil {
				return err
			}
		}
		if err := s.Value(v); err != nil {
			return err
		}
	}
	return nil
}

// String returns the script built so far.
func (s *Script) String() string { return s.b.String() }

// Err returns the first error a Literal, Value or Values call returned.
func (s *Script) Err() error { return s.err }

// quoteFor quotes v for ctx. The cases follow bash(1), QUOTING and
// Here Documents.
func quoteFor(ctx lexContext, lex *lexer, v string) (string, error) {
	switch ctx {
	case ctxBare:
		if (lex.prev == '~' || lex.inName) && v != "" {
			// A bare word after ~ would be read as a user name, and
			// after $NAME as more of the name.
			return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'", nil
		}
		return ShellQuote(v), nil
	case ctxDouble:
		// Inside "..." a backslash quotes exactly these four; newlines
		// may stand as they are. After "$NAME an empty "" ends the name.
		q := escapeBytes(v, "$`\"\\")
		if lex.inName && q != "" && isIdent(q[0]) {
			q = `""` + q
		}
		return q, nil
	case ctxSingle:
		// Close the quotes, add an escaped quote, reopen.
		return strings.ReplaceAll(v, "'", `'\''`), nil
	case ctxHeredoc:
		if lex.inName && v != "" && isIdent(v[0]) {
			return "", contextError(ctx, v, "it would extend the variable name before it")
		}
		// The delimiter is checked as the lexer reads the value's lines.
		return escapeBytes(v, "$`\\"), nil
	case ctxHeredocQuoted:
		return v, nil
	case ctxComment:
		// Only a newline ends a comment. The value is quoted anyway, so
		// that text the lexer took for a comment by mistake is still
		// one harmless word.
		return ShellQuote(strings.ReplaceAll(v, "\n", " ")), nil
	case ctxArith:
		if isInteger(v) {
			return v, nil
		}
		return "", contextError(ctx, v, "only an integer may stand there, because bash evaluates names and subscripts in arithmetic, running any $(...) they hold")
	}
	if isShellSafe(v) && v != "" && !bashReserved[v] && !lex.inName {
		// Letters, digits and _-./,:@+ mean themselves everywhere.
		return v, nil
	}
	return "", contextError(ctx, v, "")
}

// ErrUnsafeContext is wrapped by the errors Script returns for a value in
// a place where no quoting is safe.
var ErrUnsafeContext = errors.New("no safe way to quote a value here")

func contextError(ctx lexContext, v, why string) error {
	safe := map[lexContext]string{
		ctxBacktick: "use $(...) instead of backticks",
		ctxANSI:     "write the value outside $'...'",
		ctxParam:    `assign it to a variable first (X=${v}) and use "${X}" in the expansion`,
		ctxArith:    `assign it to a variable first (X=${v}) and use $X, or check it is a number`,
	}[ctx]
	msg := fmt.Errorf("a value (%q) %s: %w", head(v, 40), ctx, ErrUnsafeContext)
	if why != "" {
		msg = fmt.Errorf("%w; %s", msg, why)
	}
	if safe == "" {
		safe = "put the value in a bare position, e.g. X=${v}, and use \"$X\""
	}
	return fmt.Errorf("%w; %s", msg, safe)
}

func escapeBytes(v, special string) string {
	if !strings.ContainsAny(v, special) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if strings.IndexByte(special, v[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" || len(s) > 18 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// scriptProbe stands for a value when a template is checked before it
// runs: a value no context can take as a plain word.
const scriptProbe = "$(probe) `probe`"

// CheckScriptTemplate checks a script template before any value is known:
// literals are the template's text around its interpolations, in order
// (one more literal than interpolations). It returns the index of the
// first interpolation that lands where no quoting is safe, and why; -1 and
// nil when every one can be quoted. lang.Loader.CheckScript takes it, so
// that apl validate reports what would fail at run time.
func CheckScriptTemplate(literals []string) (int, error) {
	var s Script
	for i, lit := range literals {
		if err := s.Literal(lit); err != nil {
			return max(i-1, 0), err
		}
		if i == len(literals)-1 {
			break
		}
		if err := s.Value(scriptProbe); err != nil {
			// The message is about where the value lands, not the probe.
			msg := strings.Replace(err.Error(), fmt.Sprintf(" (%q)", head(scriptProbe, 40)), "", 1)
			return i, fmt.Errorf("%s", msg)
		}
	}
	return -1, nil
}
