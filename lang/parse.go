package lang

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// MaxNesting is how deep brackets, braces, blocks, templates, chained
// conditionals and runs of unary operators may nest in a file. HCL's parser
// recurses once per level and Go cannot recover from a stack overflow, so
// deeper files are refused before they are parsed.
const MaxNesting = 256

// ParseConfig parses a playbook or test file. HCL's native syntax forbids
// a nested block inside a one-line block, but playbooks rely on the
// one-line form step "s" { shell { command = ["/bin/true"] } }. So the file
// is lexed first, and a newline is inserted after the "{" and before the
// "}" of every one-line block body that holds a nested block (and after
// such a nested block when another item follows it on the line). The
// result is parsed once; every range of the tree and of the diagnostics is
// then mapped back to the file as written.
//
// The same pass over the tokens refuses files nested deeper than
// MaxNesting, with a diagnostic and no file. Most files need neither
// newlines nor that diagnostic, which plain tells from the bytes alone;
// those skip the lexing, half the cost of a parse, and HCL parses them
// with their line comments blanked (parseBlanked), to the same tree.
//
// It returns the text it parsed (src, or src with such blocks split over
// lines, which apl fmt formats), the file (whose Bytes are src), and the
// diagnostics.
func ParseConfig(src []byte, filename string) ([]byte, *hcl.File, hcl.Diagnostics) {
	if ok, comments := prescan(src); ok {
		if f, diags, ok := parseBlanked(src, filename, comments); ok {
			return src, f, diags
		}
		f, diags := hclsyntax.ParseConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
		return src, f, diags
	}
	tokens, lexDiags := hclsyntax.LexConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
	sc := &splitScanner{tokens: tokens}
	if d := sc.scan(); d != nil {
		return src, nil, append(hcl.Diagnostics{d}, lexDiags...)
	}
	if len(sc.inserts) == 0 {
		f, diags := hclsyntax.ParseConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
		return src, f, diags
	}
	m := newInsertMap(sc.inserts)
	text := m.apply(src)
	f, diags := hclsyntax.ParseConfig(text, filename, hcl.Pos{Line: 1, Column: 1})
	m.remap(f, diags)
	if f != nil {
		f.Bytes = src
	}
	return text, f, diags
}

// parseBlanked parses a plain file with its line comments (prescan)
// blanked, which HCL's parser drops, and reports whether it did: the file
// has such comments and parses without diagnostics, so that its tree is
// the one HCL makes of src (FuzzPlain compares the two). A file with
// diagnostics is parsed as it is, for their ranges.
func parseBlanked(src []byte, filename string, comments []span) (*hcl.File, hcl.Diagnostics, bool) {
	if len(comments) == 0 {
		return nil, nil, false
	}
	b := slices.Clone(src)
	for _, c := range comments {
		for i := c.start; i < c.end; i++ {
			b[i] = ' '
		}
	}
	f, diags := hclsyntax.ParseConfig(b, filename, hcl.Pos{Line: 1, Column: 1})
	if len(diags) > 0 || f == nil {
		return nil, nil, false
	}
	f.Bytes = src
	return f, diags, true
}

// A parsedFile is ParseConfig's result for one file.
type parsedFile struct {
	file  *hcl.File
	diags hcl.Diagnostics
}

// A frame is one open bracket of the token stream: a block body (of a
// block, or the file's) or a bracket of an expression.
type frame struct {
	close hclsyntax.TokenType // the token that closes it
	body  bool                // a block body, where items start on new lines

	// Block bodies only.
	state      itemState
	oneLine    bool      // the first token after "{" is on its line
	open       hcl.Range // the "{"
	hasNested  bool      // it holds a nested block
	parentLine bool      // its parent body is one-line, so it is split

	// For MaxNesting: the depth of the frame's parent, plus chained
	// conditionals, unary operators in a row and template directives
	// (%{ if } and %{ for }) open in this frame, each of which the parser
	// recurses on.
	base       int
	questions  int
	unary      int
	directives int
}

func (f *frame) depth() int { return f.base + 1 + f.questions + f.unary + f.directives }

// itemState is where a body is in its current item.
type itemState int

const (
	itemStart  itemState = iota // expecting a name, a newline or "}"
	itemHeader                  // after a block type or label
	itemAttr                    // in an argument's expression (or an error)
)

// splitScanner walks the tokens once: it finds where newlines must go and
// measures nesting.
type splitScanner struct {
	tokens  hclsyntax.Tokens
	stack   []*frame
	inserts []insertion
}

// scan fills sc.inserts, or returns a diagnostic if the file nests deeper
// than MaxNesting.
func (sc *splitScanner) scan() *hcl.Diagnostic {
	sc.stack = []*frame{{close: hclsyntax.TokenEOF, body: true, base: -1}}
	for i, tok := range sc.tokens {
		top := sc.stack[len(sc.stack)-1]
		switch tok.Type {
		case hclsyntax.TokenComment:
			if isLineComment(tok) {
				sc.separator(top)
			}
			continue
		case hclsyntax.TokenNewline:
			sc.separator(top)
			continue
		case hclsyntax.TokenComma:
			top.questions, top.unary = 0, 0
			continue
		case hclsyntax.TokenQuestion:
			top.questions++
			if d := sc.checkDepth(top, tok); d != nil {
				return d
			}
		case hclsyntax.TokenTemplateControl:
			switch string(sc.nextToken(i).Bytes) {
			case "if", "for":
				top.directives++
				if d := sc.checkDepth(top, tok); d != nil {
					return d
				}
			case "endif", "endfor":
				top.directives = max(top.directives-1, 0)
			}
		case hclsyntax.TokenBang, hclsyntax.TokenMinus:
			top.unary++
			if d := sc.checkDepth(top, tok); d != nil {
				return d
			}
			if top.body && top.state != itemAttr {
				top.state = itemAttr
			}
			continue
		}
		top.unary = 0
		if top.body {
			switch {
			case tok.Type == hclsyntax.TokenIdent && top.state != itemAttr:
				top.state = itemHeader
				continue
			case tok.Type == hclsyntax.TokenOQuote && top.state == itemHeader:
				// A quoted label: its frame closes at the quote.
			case tok.Type == hclsyntax.TokenEqual && top.state == itemHeader:
				top.state = itemAttr
				continue
			case tok.Type == hclsyntax.TokenOBrace && top.state == itemHeader:
				if d := sc.openBody(top, i); d != nil {
					return d
				}
				continue
			case tok.Type == hclsyntax.TokenCBrace && len(sc.stack) > 1:
				sc.closeBody(i)
				continue
			default:
				top.state = itemAttr
			}
		}
		if c, ok := closerOf(tok.Type); ok {
			f := &frame{close: c, base: top.depth()}
			sc.stack = append(sc.stack, f)
			if d := sc.checkDepth(f, tok); d != nil {
				return d
			}
			continue
		}
		if isCloser(tok.Type) {
			sc.close(i)
		}
	}
	return nil
}

// separator handles a newline: it ends an item in a body or an object,
// and is ignored inside other brackets.
func (sc *splitScanner) separator(top *frame) {
	if top.body || top.close == hclsyntax.TokenCBrace {
		top.questions, top.unary = 0, 0
	}
	if top.body {
		top.state = itemStart
	}
}

// openBody starts the body of a block whose "{" is tokens[i], nested in
// the body parent.
func (sc *splitScanner) openBody(parent *frame, i int) *hcl.Diagnostic {
	tok := sc.tokens[i]
	parent.state = itemAttr // whatever follows the block on its line is an error
	f := &frame{close: hclsyntax.TokenCBrace, body: true, open: tok.Range, parentLine: parent.oneLine, base: parent.depth()}
	f.oneLine = !startsLine(sc.nextToken(i))
	sc.stack = append(sc.stack, f)
	if d := sc.checkDepth(f, tok); d != nil {
		return d
	}
	if parent.oneLine && !parent.hasNested {
		sc.insert(parent.open.End)
	}
	parent.hasNested = true
	return nil
}

// closeBody ends the block body on top of the stack at its "}", tokens[i].
func (sc *splitScanner) closeBody(i int) {
	tok := sc.tokens[i]
	f := sc.stack[len(sc.stack)-1]
	sc.stack = sc.stack[:len(sc.stack)-1]
	parent := sc.stack[len(sc.stack)-1]
	parent.state = itemAttr
	if f.oneLine && f.hasNested && !endsLine(sc.prevToken(i)) {
		sc.insert(tok.Range.Start)
	}
	if f.parentLine {
		// A nested block of a body being split ends its line, unless the
		// body's own "}" follows (it gets its own newline).
		parent.state = itemStart
		if next := sc.nextToken(i); !startsLine(next) && next.Type != hclsyntax.TokenCBrace {
			sc.insert(tok.Range.End)
		}
	}
}

// close handles a closing bracket, tokens[i]: it closes the innermost
// frame it matches and every frame opened inside that one. A closer that
// matches nothing open is left to the parser to report.
func (sc *splitScanner) close(i int) {
	t := sc.tokens[i].Type
	for j := len(sc.stack) - 1; j > 0; j-- {
		f := sc.stack[j]
		if f.close != t {
			continue
		}
		if f.body {
			sc.stack = sc.stack[:j+1]
			sc.closeBody(i)
			return
		}
		sc.stack = sc.stack[:j]
		return
	}
}

func (sc *splitScanner) checkDepth(top *frame, tok hclsyntax.Token) *hcl.Diagnostic {
	if top.depth() <= MaxNesting {
		return nil
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Nesting too deep",
		Detail: fmt.Sprintf("Brackets, blocks, templates, conditionals and unary operators nest more than %d levels deep here. "+
			"The file is not parsed: flatten the expression or split it with locals.", MaxNesting),
		Subject: tok.Range.Ptr(),
	}
}

func (sc *splitScanner) insert(p hcl.Pos) {
	sc.inserts = append(sc.inserts, insertion{orig: p.Byte, line: p.Line, col: p.Column})
}

// nextToken returns the token after tokens[i], skipping block comments
// (the parser skips them too).
func (sc *splitScanner) nextToken(i int) hclsyntax.Token {
	for j := i + 1; j < len(sc.tokens); j++ {
		if t := sc.tokens[j]; t.Type != hclsyntax.TokenComment || isLineComment(t) {
			return t
		}
	}
	return hclsyntax.Token{Type: hclsyntax.TokenEOF}
}

// prevToken returns the token before tokens[i], skipping block comments.
func (sc *splitScanner) prevToken(i int) hclsyntax.Token {
	for j := i - 1; j >= 0; j-- {
		if t := sc.tokens[j]; t.Type != hclsyntax.TokenComment || isLineComment(t) {
			return t
		}
	}
	return hclsyntax.Token{Type: hclsyntax.TokenNewline}
}

// startsLine reports whether a token ends the line it follows: a newline,
// a line comment (which holds its newline) or the end of the file.
func startsLine(t hclsyntax.Token) bool {
	return t.Type == hclsyntax.TokenNewline || t.Type == hclsyntax.TokenEOF || isLineComment(t)
}

// endsLine reports whether what follows a token starts a new line.
func endsLine(t hclsyntax.Token) bool {
	return t.Type == hclsyntax.TokenNewline || isLineComment(t)
}

func isLineComment(t hclsyntax.Token) bool {
	return t.Type == hclsyntax.TokenComment && len(t.Bytes) > 0 && t.Bytes[len(t.Bytes)-1] == '\n'
}

// closerOf returns the token that closes an expression bracket.
func closerOf(t hclsyntax.TokenType) (hclsyntax.TokenType, bool) {
	switch t {
	case hclsyntax.TokenOBrace:
		return hclsyntax.TokenCBrace, true
	case hclsyntax.TokenOBrack:
		return hclsyntax.TokenCBrack, true
	case hclsyntax.TokenOParen:
		return hclsyntax.TokenCParen, true
	case hclsyntax.TokenOQuote:
		return hclsyntax.TokenCQuote, true
	case hclsyntax.TokenOHeredoc:
		return hclsyntax.TokenCHeredoc, true
	case hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
		return hclsyntax.TokenTemplateSeqEnd, true
	}
	return 0, false
}

func isCloser(t hclsyntax.TokenType) bool {
	switch t {
	case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
		hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
		return true
	}
	return false
}

// sortInserts orders insertions by offset and drops repeats.
func sortInserts(ins []insertion) []insertion {
	slices.SortFunc(ins, func(a, b insertion) int { return a.orig - b.orig })
	return slices.CompactFunc(ins, func(a, b insertion) bool { return a.orig == b.orig })
}
