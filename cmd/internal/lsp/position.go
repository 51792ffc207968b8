package lsp

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// Position is an LSP position: a 0-based line and a character offset in
// UTF-16 code units.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is an LSP range; End is exclusive.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// position converts byte offset off of src into an LSP position. HCL
// counts columns in characters and lines from 1; LSP counts UTF-16 units
// and lines from 0, so the offset, not the column, is the ground truth.
func position(src []byte, off int) Position {
	off = min(max(off, 0), len(src))
	line, start := 0, 0
	for i := 0; i < off; i++ {
		if src[i] == '\n' {
			line++
			start = i + 1
		}
	}
	return Position{Line: line, Character: utf16Len(src[start:off])}
}

// utf16Len is the length of b in UTF-16 code units.
func utf16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		n += utf16.RuneLen(r) // an invalid byte decodes as U+FFFD: one unit
	}
	return n
}

// offset converts an LSP position into a byte offset of src, clamped to
// the line's end (and to the file's) as the protocol asks.
func offset(src []byte, p Position) int {
	i := 0
	for line := 0; line < p.Line; line++ {
		for i < len(src) && src[i] != '\n' {
			i++
		}
		if i == len(src) {
			return i
		}
		i++
	}
	for units := 0; i < len(src) && src[i] != '\n' && units < p.Character; {
		r, size := utf8.DecodeRune(src[i:])
		units += utf16.RuneLen(r)
		i += size
	}
	return i
}

// toRange converts an HCL range of src. Without the source (a file the
// server has not read), it falls back to HCL's lines and columns.
func toRange(src []byte, r hcl.Range) Range {
	if src == nil || r.End.Byte > len(src) {
		return Range{
			Start: Position{max(r.Start.Line-1, 0), max(r.Start.Column-1, 0)},
			End:   Position{max(r.End.Line-1, 0), max(r.End.Column-1, 0)},
		}
	}
	return Range{Start: position(src, r.Start.Byte), End: position(src, r.End.Byte)}
}
