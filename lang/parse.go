package lang

import (
	"reflect"
	"sort"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// ParseConfig parses a playbook or test file. HCL's native syntax forbids
// a nested block inside a one-line block, but playbooks rely on the
// one-line form step "s" { shell { command = ["/bin/true"] } }. So when
// the parser rejects exactly that, the text is parsed again with the space
// after the outer "{" and the one before its "}" turned into newlines.
// That keeps every byte offset, so every range of the tree and of the
// diagnostics is then recomputed against the file as written.
//
// It returns the text it parsed (src, or src with such blocks split over
// lines, which apl fmt formats), the file (whose Bytes are src), and the
// diagnostics.
func ParseConfig(src []byte, filename string) ([]byte, *hcl.File, hcl.Diagnostics) {
	text, split := src, false
	for range 1000 {
		f, diags := hclsyntax.ParseConfig(text, filename, hcl.Pos{Line: 1, Column: 1})
		next, ok := []byte(nil), false
		for _, d := range diags {
			if d.Summary == "Argument definition required" && d.Subject != nil {
				next, ok = splitOneLineBlock(text, d.Subject.Start.Byte)
				break
			}
		}
		if ok {
			text, split = next, true
			continue
		}
		if split {
			li := newLineIndex(src)
			if f != nil {
				fixTree(reflect.ValueOf(f.Body), li, map[uintptr]bool{})
			}
			for _, d := range diags {
				fixRange(d.Subject, li)
				fixRange(d.Context, li)
			}
		}
		if f != nil {
			f.Bytes = src
		}
		return text, f, diags
	}
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.Pos{Line: 1, Column: 1})
	return src, f, diags
}

// splitOneLineBlock turns the one-line block whose body starts with a
// nested block at offset at into a multi-line one, byte for byte.
func splitOneLineBlock(src []byte, at int) ([]byte, bool) {
	open := at - 1
	for open >= 0 && (src[open] == ' ' || src[open] == '\t') {
		open--
	}
	if open < 0 || src[open] != '{' || open+1 >= at {
		return nil, false
	}
	tokens, _ := hclsyntax.LexConfig(src[open:], "", hcl.Pos{Byte: open, Line: 1, Column: 1})
	depth := 0
	closeAt := -1
	for _, t := range tokens {
		switch t.Type {
		case hclsyntax.TokenOBrace:
			depth++
		case hclsyntax.TokenCBrace:
			depth--
			if depth == 0 {
				closeAt = t.Range.Start.Byte
			}
		}
		if closeAt >= 0 {
			break
		}
	}
	if closeAt < 0 || closeAt == 0 || src[closeAt-1] != ' ' && src[closeAt-1] != '\t' {
		return nil, false
	}
	out := append([]byte(nil), src...)
	out[open+1] = '\n'
	out[closeAt-1] = '\n'
	return out, true
}

// lineIndex finds the line and column of a byte offset.
type lineIndex struct {
	src    []byte
	starts []int // byte offset where each line starts
}

func newLineIndex(src []byte) *lineIndex {
	li := &lineIndex{src: src, starts: []int{0}}
	for i, c := range src {
		if c == '\n' {
			li.starts = append(li.starts, i+1)
		}
	}
	return li
}

func (li *lineIndex) pos(off int) hcl.Pos {
	off = min(max(off, 0), len(li.src))
	line := sort.SearchInts(li.starts, off+1) - 1
	col := utf8.RuneCount(li.src[li.starts[line]:off]) + 1
	return hcl.Pos{Line: line + 1, Column: col, Byte: off}
}

var rangeType = reflect.TypeOf(hcl.Range{})

// fixTree walks a syntax tree by reflection and recomputes every
// hcl.Range in it from its byte offsets. Recomputing is idempotent, so
// nodes reached twice are harmless; seen stops cycles.
func fixTree(v reflect.Value, li *lineIndex, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		fixTree(v.Elem(), li, seen)
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		if e.Kind() == reflect.Struct && v.CanSet() {
			// A struct held by value in an interface (a traversal step)
			// cannot be changed in place: fix a copy and put it back.
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			fixTree(c, li, seen)
			v.Set(c)
			return
		}
		fixTree(e, li, seen)
	case reflect.Struct:
		if v.Type() == rangeType {
			if v.CanSet() {
				fixRange(v.Addr().Interface().(*hcl.Range), li)
			}
			return
		}
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fixTree(v.Field(i), li, seen)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			fixTree(v.Index(i), li, seen)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			fixTree(it.Value(), li, seen)
		}
	}
}

// fixRange recomputes a range's lines and columns from its byte offsets.
func fixRange(r *hcl.Range, li *lineIndex) {
	if r != nil && (r.End.Line != 0 || r.End.Byte != 0) {
		r.Start, r.End = li.pos(r.Start.Byte), li.pos(r.End.Byte)
	}
}
