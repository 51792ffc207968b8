package lang

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// A playbook that says extends = "stdlib:NAME" (or a path) holds only what
// it changes. Its files and its upstream's are merged into one body before
// anything is decoded, so the effective playbook is checked as a whole:
//
//   - a block with the same type and labels as an upstream block overrides
//     it attribute by attribute, and its nested blocks likewise (labelled
//     ones by their labels, unlabelled ones by type and position);
//   - playbook, output, on_failure, finally, limits, circuit_breaker and
//     state appear at most once and merge whatever their labels;
//   - a locals attribute overrides the upstream local of the same name;
//   - a block with removed = true removes its upstream block;
//   - any other block is added after the upstream's (a gate's rule before
//     its otherwise).
//
// Every attribute keeps the hclsyntax node of the file that wins, and so
// its range: a diagnostic about it points at the overriding file.

// extendsAttr is the top-level attribute that names the upstream.
const extendsAttr = "extends"

// removedAttr in an overriding block removes the upstream block.
const removedAttr = "removed"

// singletons are the top-level blocks a playbook holds at most once, merged
// with the upstream's whatever their labels.
var singletons = map[string]bool{
	"playbook": true, "output": true, "on_failure": true, "finally": true,
	"limits": true, "circuit_breaker": true, "state": true,
}

// Singleton says whether a playbook holds at most one top-level block of
// type typ (playbook, output, limits, ...), which a fork's block of that
// type overrides whatever its label, and which may be named by its type
// alone.
func Singleton(typ string) bool { return singletons[typ] }

// Removal records a block an extending playbook removed.
type Removal struct {
	// Block is the removed block's address: step.research.
	Block string
	// Range is the removing block's header; Upstream the removed one's.
	Range, Upstream hcl.Range
}

// layer reads the files of one playbook of an extends chain (depth 0 is
// the playbook loaded), resolves its extends, and returns its body merged
// over its upstream's. chain holds the canonical refs of the playbooks
// below it, to refuse a cycle.
func (l *loader) layer(srcs map[string][]byte, dir string, depth int, chain []string) (*hclsyntax.Body, hcl.Diagnostics) {
	names := make([]string, 0, len(srcs))
	for n := range srcs {
		names = append(names, n)
	}
	sort.Strings(names)
	var diags hcl.Diagnostics
	own := &hclsyntax.Body{Attributes: hclsyntax.Attributes{}}
	var ext *hclsyntax.Attribute
	parsed := l.parseFiles(srcs, names)
	for i, n := range names {
		l.addSource(n, srcs[n], dir, depth)
		f := parsed[i].file
		diags = append(diags, parsed[i].diags...)
		if f == nil {
			continue
		}
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			continue
		}
		if len(names) == 1 || own.SrcRange.Filename == "" {
			own.SrcRange, own.EndRange = body.SrcRange, body.EndRange
		}
		for name, a := range body.Attributes {
			if name != extendsAttr {
				own.Attributes[name] = a
				continue
			}
			if ext != nil {
				diags = append(diags, errDiag("Duplicate extends",
					fmt.Sprintf("The playbook already extends another at %s; a playbook extends at most one.", ext.SrcRange), a.NameRange))
				continue
			}
			ext = a
		}
		own.Blocks = append(own.Blocks, body.Blocks...)
	}
	l.prefetchTemplates(own.Blocks)
	if ext == nil {
		return own, diags
	}
	ref, written, d := l.upstreamRef(ext, dir)
	diags = append(diags, d...)
	if d.HasErrors() {
		return own, diags
	}
	// Read before anything else touches the path, so that a path outside
	// the project is refused before it is looked at.
	upSrcs, upDir, err := l.ld.read(ref, l.project())
	if err != nil {
		if pe := (*PathError)(nil); errors.As(err, &pe) {
			return own, append(diags, pathDiag("Cannot read upstream playbook", asWritten(err, ref, written), ext.Expr.Range()))
		}
		return own, append(diags, errDiag("Cannot read upstream playbook",
			fmt.Sprintf("The playbook extends %q, which cannot be read: %s.", ref, err), ext.Expr.Range()))
	}
	canon := canonicalRef(ref)
	if slices.Contains(chain, canon) {
		return own, append(diags, errDiag("Playbook extends itself",
			fmt.Sprintf("The chain of extends comes back to %q: %s.", ref, strings.Join(append(chain, canon), " → ")), ext.Expr.Range()))
	}
	l.pb.Extends = append(l.pb.Extends, ref)
	up, d := l.layer(upSrcs, upDir, depth+1, append(chain, canon))
	diags = append(diags, d...)
	return l.merge(up, own, "", true), diags
}

// upstreamRef resolves an extends value: stdlib:NAME as it is, a path
// relative to the directory of the playbook that says it. written is the
// value as the playbook wrote it.
func (l *loader) upstreamRef(a *hclsyntax.Attribute, dir string) (ref, written string, diags hcl.Diagnostics) {
	v, d := a.Expr.Value(nil)
	if d.HasErrors() || v.IsNull() || !v.Type().Equals(ctyString) || !v.IsKnown() {
		return "", "", hcl.Diagnostics{errDiag("Invalid extends",
			`extends takes a constant string: "stdlib:NAME", or a playbook file or directory relative to this playbook.`, a.Expr.Range())}
	}
	written = v.AsString()
	switch {
	case strings.HasPrefix(written, StdlibPrefix):
		return written, written, nil
	case strings.HasPrefix(dir, StdlibPrefix):
		return "", "", hcl.Diagnostics{errDiag("Invalid extends",
			fmt.Sprintf("A stdlib playbook extends only stdlib:NAME, not %q.", written), a.Expr.Range())}
	}
	if err := checkPlaybookPath(written); err != nil {
		return "", "", hcl.Diagnostics{pathDiag("Invalid extends", err, a.Expr.Range())}
	}
	if filepath.IsAbs(written) {
		return written, written, nil
	}
	return filepath.Join(dir, written), written, nil
}

// merge returns upstream body up overridden by own. addr is the address
// of the block they are the bodies of ("" at the top level); top says
// they are playbooks' top-level bodies.
func (l *loader) merge(up, own *hclsyntax.Body, addr string, top bool) *hclsyntax.Body {
	out := &hclsyntax.Body{Attributes: hclsyntax.Attributes{}, SrcRange: own.SrcRange, EndRange: own.EndRange}
	if up != nil {
		for n, a := range up.Attributes {
			out.Attributes[n] = a
		}
	}
	for n, a := range own.Attributes {
		if n == removedAttr && addr != "" {
			continue
		}
		if prev := out.Attributes[n]; prev != nil {
			l.pb.overrides[a.SrcRange] = append([]hcl.Range{prev.SrcRange}, l.pb.overrides[prev.SrcRange]...)
			if n == "with" {
				a = mergeArgs(prev, a)
			}
		}
		out.Attributes[n] = a
	}
	var ups []*hclsyntax.Block
	if up != nil {
		ups = up.Blocks
	}
	blocks := slices.Clone(ups)
	seen := map[string]int{} // unlabelled blocks of own by type, for matching by position
	for _, ob := range own.Blocks {
		baddr := BlockAddress(addr, ob.Type, ob.Labels...)
		removed := l.removedFlag(ob)
		if top && ob.Type == "locals" {
			l.overrideLocals(blocks, ob)
			blocks = append(blocks, withBody(ob, l.merge(nil, ob.Body, baddr, false)))
			continue
		}
		i := matchBlock(ups, ob, seen, top)
		if i < 0 || blocks[i] == nil {
			if removed {
				l.diags = append(l.diags, errDiag("Nothing to remove",
					fmt.Sprintf("The upstream playbook has no %s to remove.", baddr), ob.DefRange()))
				continue
			}
			l.warnNearMiss(ups, ob, baddr)
			blocks = append(blocks, withBody(ob, l.merge(nil, ob.Body, baddr, false)))
			continue
		}
		if removed {
			l.pb.Removed = append(l.pb.Removed, Removal{Block: baddr, Range: ob.DefRange(), Upstream: blocks[i].DefRange()})
			blocks[i] = nil
			continue
		}
		blocks[i] = withBody(ob, l.merge(blocks[i].Body, ob.Body, baddr, false))
	}
	for i, b := range blocks {
		switch {
		case b == nil:
		case i >= len(ups) && b.Type == "rule":
			out.Blocks = insertRule(out.Blocks, b)
		default:
			out.Blocks = append(out.Blocks, b)
		}
	}
	return out
}

// warnNearMiss warns of a labelled block ob that overrides nothing,
// so is added, where the upstream has a block of its type whose name is
// one ob's is close to: most likely a misspelt override, which would
// otherwise add a step after the upstream's last one (or a rule, an
// input) and leave the block meant unchanged.
func (l *loader) warnNearMiss(ups []*hclsyntax.Block, ob *hclsyntax.Block, baddr string) {
	if len(ob.Labels) == 0 {
		return
	}
	last := len(ob.Labels) - 1
	var names []string
	for _, u := range ups {
		if u.Type == ob.Type && len(u.Labels) == len(ob.Labels) && slices.Equal(u.Labels[:last], ob.Labels[:last]) {
			names = append(names, u.Labels[last])
		}
	}
	near := Suggest(ob.Labels[last], names)
	if len(near) < 4 { // none, or too short to tell a slip from a new name
		return
	}
	l.diags = append(l.diags, warnDiag("Added, not overridden",
		fmt.Sprintf("The upstream has no %s %q (%s), so this block adds one beside its %s %q instead of overriding that. Did you mean %q? If the block is new, give it a name further from the upstream's.",
			ob.Type, ob.Labels[last], baddr, ob.Type, near, near), ob.LabelRanges[last]))
}

// insertRule adds rule b, which an overriding gate adds to its upstream's
// (a fork's, or a step's over its template's), before the upstream's
// otherwise: rules are tried before otherwise.
func insertRule(blocks []*hclsyntax.Block, b *hclsyntax.Block) []*hclsyntax.Block {
	if i := slices.IndexFunc(blocks, func(x *hclsyntax.Block) bool { return x.Type == "otherwise" }); i >= 0 {
		return slices.Insert(blocks, i, b)
	}
	return append(blocks, b)
}

// withBody is a block with hdr's header and the body given.
func withBody(hdr *hclsyntax.Block, body *hclsyntax.Body) *hclsyntax.Block {
	nb := *hdr
	nb.Body = body
	return &nb
}

// overrideLocals drops from the upstream locals blocks the locals that
// ob declares again, recording the overrides.
func (l *loader) overrideLocals(blocks []*hclsyntax.Block, ob *hclsyntax.Block) {
	for i, b := range blocks {
		if b == nil || b.Type != "locals" {
			continue
		}
		for n, a := range ob.Body.Attributes {
			prev := b.Body.Attributes[n]
			if prev == nil {
				continue
			}
			l.pb.overrides[a.SrcRange] = append([]hcl.Range{prev.SrcRange}, l.pb.overrides[prev.SrcRange]...)
			body := *b.Body
			body.Attributes = hclsyntax.Attributes{}
			for m, x := range b.Body.Attributes {
				if m != n {
					body.Attributes[m] = x
				}
			}
			nb := *b
			nb.Body = &body
			blocks[i] = &nb
			b = &nb
		}
	}
}

// matchBlock finds the upstream block ob overrides: the same type and
// labels, or for unlabelled blocks the one at the same place among those
// of its type; at the top level, the single block of a singleton type.
func matchBlock(ups []*hclsyntax.Block, ob *hclsyntax.Block, seen map[string]int, top bool) int {
	if top && singletons[ob.Type] {
		return slices.IndexFunc(ups, func(u *hclsyntax.Block) bool { return u.Type == ob.Type })
	}
	if len(ob.Labels) > 0 {
		return slices.IndexFunc(ups, func(u *hclsyntax.Block) bool {
			return u.Type == ob.Type && slices.Equal(u.Labels, ob.Labels)
		})
	}
	k := seen[ob.Type]
	seen[ob.Type]++
	for i, u := range ups {
		if u.Type != ob.Type || len(u.Labels) > 0 {
			continue
		}
		if k == 0 {
			return i
		}
		k--
	}
	return -1
}

// removedFlag reads a block's removed attribute.
func (l *loader) removedFlag(b *hclsyntax.Block) bool {
	a := b.Body.Attributes[removedAttr]
	if a == nil {
		return false
	}
	v, d := a.Expr.Value(nil)
	if d.HasErrors() || v.IsNull() || !v.IsKnown() || !v.Type().Equals(cty.Bool) {
		l.diags = append(l.diags, errDiag("Invalid removed",
			"removed takes a constant bool: removed = true removes the upstream block.", a.Expr.Range()))
		return false
	}
	return v.True()
}
