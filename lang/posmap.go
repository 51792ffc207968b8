package lang

import (
	"reflect"
	"sort"
	"sync"
	"unsafe"

	"github.com/hashicorp/hcl/v2"
)

// An insertion is a newline ParseConfig puts into a file before parsing
// it, at a position of the file as written.
type insertion struct {
	orig      int // byte offset in the file as written
	line, col int // line and column of that offset
}

// insertMap maps positions of the text with newlines inserted back to the
// file as written.
type insertMap struct {
	ins []insertion // sorted, one per offset
}

func newInsertMap(ins []insertion) *insertMap {
	return &insertMap{ins: sortInserts(ins)}
}

// apply returns src with the newlines inserted.
func (m *insertMap) apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(m.ins))
	last := 0
	for _, in := range m.ins {
		out = append(out, src[last:in.orig]...)
		out = append(out, '\n')
		last = in.orig
	}
	return append(out, src[last:]...)
}

// pos maps a position of the new text to the file as written. The i-th
// inserted newline is at byte orig+i of the new text and ends its line
// line+i; a position on the line after it is that many columns to the
// right of where the newline went. Positions at an inserted newline and
// just after it map to the same place.
func (m *insertMap) pos(p hcl.Pos) hcl.Pos {
	k := sort.Search(len(m.ins), func(i int) bool { return m.ins[i].orig+i >= p.Byte })
	if k == 0 {
		return p
	}
	out := hcl.Pos{Byte: p.Byte - k, Line: p.Line, Column: p.Column}
	if p.Line == 0 {
		return out
	}
	out.Line = p.Line - k
	if last := m.ins[k-1]; last.line+k-1 == p.Line-1 {
		out.Column = last.col + p.Column - 1
	}
	return out
}

func (m *insertMap) fixRange(r *hcl.Range) {
	r.Start, r.End = m.pos(r.Start), m.pos(r.End)
}

// remap maps every range in the diagnostics and in the syntax tree of f.
// A diagnostic's Subject may point into the tree, so the ranges the
// diagnostics point at are mapped first and the walk skips them.
func (m *insertMap) remap(f *hcl.File, diags hcl.Diagnostics) {
	w := &rangeWalker{m: m, done: map[*hcl.Range]bool{}, seen: map[ptrKey]bool{}}
	for _, d := range diags {
		for _, r := range []*hcl.Range{d.Subject, d.Context} {
			if r != nil && !w.done[r] {
				w.done[r] = true
				m.fixRange(r)
			}
		}
	}
	if f != nil {
		w.walk(reflect.ValueOf(f.Body))
	}
}

// rangeWalker walks a syntax tree by reflection, so that every hcl.Range in
// any node type, hclsyntax's future ones included, is mapped: a switch on
// node types would silently miss a field added by an upgrade.
type rangeWalker struct {
	m    *insertMap
	done map[*hcl.Range]bool
	seen map[ptrKey]bool
}

// ptrKey identifies a pointer by address and type: a struct and its first
// field share an address.
type ptrKey struct {
	p unsafe.Pointer
	t reflect.Type
}

var rangeType = reflect.TypeFor[hcl.Range]()

// exportedFields caches, per struct type, the indices of exported fields
// that can hold a range ([]int by reflect.Type).
var exportedFields sync.Map

func fieldsOf(t reflect.Type) []int {
	if fs, ok := exportedFields.Load(t); ok {
		return fs.([]int)
	}
	var fs []int
	for i := range t.NumField() {
		f := t.Field(i)
		if f.IsExported() && mayHoldRange(f.Type) {
			fs = append(fs, i)
		}
	}
	exportedFields.Store(t, fs)
	return fs
}

// mayHoldRange is false for kinds that cannot lead to a range.
func mayHoldRange(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Struct, reflect.Slice, reflect.Array, reflect.Map:
		return true
	}
	return false
}

func (w *rangeWalker) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		k := ptrKey{v.UnsafePointer(), v.Type()}
		if w.seen[k] {
			return
		}
		w.seen[k] = true
		w.walk(v.Elem())
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
			w.walk(c)
			v.Set(c)
			return
		}
		w.walk(e)
	case reflect.Struct:
		if v.Type() == rangeType {
			if v.CanSet() {
				// Each tree node is walked once; only a range a
				// diagnostic points at can have been mapped already.
				if r := (*hcl.Range)(v.Addr().UnsafePointer()); !w.done[r] {
					w.m.fixRange(r)
				}
			}
			return
		}
		for _, i := range fieldsOf(v.Type()) {
			w.walk(v.Field(i))
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.walk(v.Index(i))
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			w.walk(it.Value())
		}
	}
}
