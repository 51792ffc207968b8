package diff

import (
	"fmt"
	"io"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Change is one difference between two playbooks.
type Change struct {
	// Kind is "added", "removed", "changed" or "reordered".
	Kind  string `json:"kind"`
	Block string `json:"block"`
	// Attribute is the attribute changed, added or removed; "" for a
	// whole block.
	Attribute string `json:"attribute,omitempty"`
	A         string `json:"a,omitempty"`
	B         string `json:"b,omitempty"`
	// Diff is a unified diff of a multi-line text: a prompt, a script.
	Diff string `json:"diff,omitempty"`
}

// Block is a block of a playbook, flattened: its attributes' normalized
// texts, in source order, and the labels of its ordered children.
type Block struct {
	Addr   string // its address (lang.BlockAddress)
	Parent string // the address of the block it is in; "" at the top
	Kind   string // the block type
	Name   string // its first label
	Attrs  []Attr
	// Rules are a gate's rule names in order.
	Rules []string
}

// Attr is an attribute of a block: its name, and its expression's source
// as apl fmt writes it (for file("x"), the text of x too).
type Attr struct{ Name, Text string }

// Blocks flattens a loaded playbook into its blocks, by address, in the
// order they are first met. It reads the effective playbook: for one that
// extends another, the upstream's blocks with its overrides.
func Blocks(pb *lang.Playbook) []*Block {
	var out []*Block
	flatten(pb, pb.Body(), "", &out, map[string]bool{})
	return out
}

func flatten(pb *lang.Playbook, body *hclsyntax.Body, prefix string, out *[]*Block, seen map[string]bool) {
	for _, b := range body.Blocks {
		addr := lang.BlockAddress(prefix, b.Type, b.Labels...)
		// A block a playbook holds once is the same block whatever its
		// label, as a fork's overrides it: a renamed playbook is a
		// changed name, not a playbook removed and another added.
		singleton := prefix == "" && lang.Singleton(b.Type)
		if singleton {
			addr = b.Type
		}
		// Unlabelled blocks that repeat (two on_exhausted, which the loader
		// rejects) keep apart by their place.
		for i := 2; seen[addr]; i++ {
			addr = fmt.Sprintf("%s#%d", strings.TrimSuffix(addr, fmt.Sprintf("#%d", i-1)), i)
		}
		seen[addr] = true
		bl := &Block{Addr: addr, Parent: prefix, Kind: b.Type}
		if len(b.Labels) > 0 {
			bl.Name = b.Labels[0]
		}
		attrs := make([]*hclsyntax.Attribute, 0, len(b.Body.Attributes))
		for _, a := range b.Body.Attributes {
			attrs = append(attrs, a)
		}
		slices.SortFunc(attrs, func(x, y *hclsyntax.Attribute) int { return x.SrcRange.Start.Byte - y.SrcRange.Start.Byte })
		if singleton && len(b.Labels) > 0 {
			bl.Attrs = append(bl.Attrs, Attr{"(name)", fmt.Sprintf("%q", b.Labels[0])})
		}
		for _, a := range attrs {
			bl.Attrs = append(bl.Attrs, Attr{a.Name, exprText(pb, a.Expr)})
		}
		if b.Type == "gate" {
			for _, r := range b.Body.Blocks {
				if r.Type == "rule" && len(r.Labels) > 0 {
					bl.Rules = append(bl.Rules, r.Labels[0])
				}
			}
		}
		*out = append(*out, bl)
		flatten(pb, b.Body, addr, out, seen)
	}
}

// exprText is an expression's source as apl fmt writes it; for file("x")
// the text of x, which the playbook loaded.
func exprText(pb *lang.Playbook, expr hclsyntax.Expression) string {
	file := expr.Range().Filename
	src := pb.Sources[file]
	if call, ok := expr.(*hclsyntax.FunctionCallExpr); ok && call.Name == "file" && len(call.Args) == 1 {
		if v, d := call.Args[0].Value(nil); !d.HasErrors() && v.Type().FriendlyName() == "string" && !v.IsNull() {
			if text, ok := sourceOf(pb, file, v.AsString()); ok {
				return fmt.Sprintf("file(%q):\n%s", v.AsString(), text)
			}
		}
	}
	r := expr.Range()
	text := string(src[r.Start.Byte:r.End.Byte])
	formatted := string(hclwrite.Format([]byte("x = " + text + "\n")))
	return strings.TrimSuffix(strings.TrimPrefix(formatted, "x = "), "\n")
}

// sourceOf finds the text of a file a playbook's file() read, relative to
// the file that names it.
func sourceOf(pb *lang.Playbook, from, rel string) (string, bool) {
	dir := path.Dir(filepath.ToSlash(from))
	want := path.Join(dir, filepath.ToSlash(rel))
	for n, b := range pb.Sources {
		if path.Clean(filepath.ToSlash(n)) == want {
			return string(b), true
		}
	}
	return "", false
}

// Compare lists the differences from a to b: blocks removed, added and
// changed, in a's order and then b's. A block is matched by its address,
// wherever and in whatever order its files hold it, and an attribute by
// its text as apl fmt writes it: comments and layout are no differences.
func Compare(a, b []*Block) []Change {
	changes := []Change{}
	inB := map[string]*Block{}
	for _, bl := range b {
		inB[bl.Addr] = bl
	}
	inA := map[string]*Block{}
	for _, bl := range a {
		inA[bl.Addr] = bl
	}
	// A block under a removed or added one is said with it.
	under := func(bl *Block, own, other map[string]*Block) bool {
		for p := bl.Parent; p != ""; p = own[p].Parent {
			if other[p] == nil {
				return true
			}
		}
		return false
	}
	for _, x := range a {
		y := inB[x.Addr]
		if y == nil {
			if !under(x, inA, inB) {
				changes = append(changes, Change{Kind: "removed", Block: x.Addr})
			}
			continue
		}
		changes = append(changes, compareAttrs(x, y)...)
		if ra, rb := x.Rules, y.Rules; !slices.Equal(commonOrder(ra, rb), commonOrder(rb, ra)) {
			changes = append(changes, Change{Kind: "reordered", Block: x.Addr, A: strings.Join(ra, ", "), B: strings.Join(rb, ", ")})
		}
	}
	for _, y := range b {
		if inA[y.Addr] == nil && !under(y, inB, inA) {
			changes = append(changes, Change{Kind: "added", Block: y.Addr})
		}
	}
	return changes
}

// commonOrder is xs without the names ys lacks.
func commonOrder(xs, ys []string) []string {
	var out []string
	for _, x := range xs {
		if slices.Contains(ys, x) {
			out = append(out, x)
		}
	}
	return out
}

func compareAttrs(x, y *Block) []Change {
	var out []Change
	get := func(as []Attr, name string) (string, bool) {
		for _, a := range as {
			if a.Name == name {
				return a.Text, true
			}
		}
		return "", false
	}
	for _, a := range x.Attrs {
		t, ok := get(y.Attrs, a.Name)
		switch {
		case !ok:
			out = append(out, Change{Kind: "removed", Block: x.Addr, Attribute: a.Name, A: a.Text})
		case t != a.Text:
			c := Change{Kind: "changed", Block: x.Addr, Attribute: a.Name, A: a.Text, B: t}
			if strings.Contains(a.Text, "\n") || strings.Contains(t, "\n") {
				c.Diff = textDiff(a.Text, t)
			}
			out = append(out, c)
		}
	}
	for _, b := range y.Attrs {
		if _, ok := get(x.Attrs, b.Name); !ok {
			out = append(out, Change{Kind: "added", Block: x.Addr, Attribute: b.Name, B: b.Text})
		}
	}
	return out
}

// textDiff is a unified diff of two texts, without file headers.
func textDiff(a, b string) string {
	d := Unified("x", withNewline(a), withNewline(b))
	_, rest, _ := strings.Cut(d, "+++ b/x\n")
	return rest
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// Write writes the changes from a (named nameA) to b as text: budgets and
// modes as tables, then each other block's changes under its address.
func Write(w io.Writer, nameA, nameB string, changes []Change, a, b []*Block) {
	fmt.Fprintf(w, "--- %s\n+++ %s\n", nameA, nameB)
	tables := map[string]bool{}
	for _, c := range changes {
		if k := tableOf(c, a, b); k != "" {
			tables[k] = true
			continue
		}
		switch {
		case c.Kind == "reordered":
			fmt.Fprintf(w, "~ %s: rules in order %s → %s\n", c.Block, c.A, c.B)
		case c.Attribute == "":
			sign := map[string]string{"added": "+", "removed": "-"}[c.Kind]
			fmt.Fprintf(w, "%s %s\n", sign, c.Block)
		case c.Diff != "":
			fmt.Fprintf(w, "~ %s: %s\n", c.Block, c.Attribute)
			for _, l := range strings.SplitAfter(c.Diff, "\n") {
				if l != "" {
					fmt.Fprintf(w, "    %s", l)
				}
			}
		case c.Kind == "changed":
			fmt.Fprintf(w, "~ %s: %s = %s → %s\n", c.Block, c.Attribute, c.A, c.B)
		case c.Kind == "added":
			fmt.Fprintf(w, "~ %s: + %s = %s\n", c.Block, c.Attribute, c.B)
		case c.Kind == "removed":
			fmt.Fprintf(w, "~ %s: - %s = %s\n", c.Block, c.Attribute, c.A)
		}
	}
	for _, k := range []string{"budget", "mode"} {
		if tables[k] {
			writeTable(w, k, changes, a, b)
		}
	}
}

// tableOf is the type of the block c changes when it is a top-level
// budget or mode, which Write shows in a table; else "".
func tableOf(c Change, a, b []*Block) string {
	for _, bl := range append(slices.Clip(a), b...) {
		if bl.Addr == c.Block && bl.Parent == "" && (bl.Kind == "budget" || bl.Kind == "mode") {
			return bl.Kind
		}
	}
	return ""
}

// writeTable prints the budgets or modes that differ as a table: a row
// from A (-) and a row from B (+) for each.
func writeTable(w io.Writer, kind string, changes []Change, a, b []*Block) {
	var cols []string
	rows := map[string][2]*Block{}
	var order []string
	find := func(bs []*Block, addr string) *Block {
		for _, bl := range bs {
			if bl.Addr == addr {
				return bl
			}
		}
		return nil
	}
	for _, c := range changes {
		if tableOf(c, a, b) != kind {
			continue
		}
		if _, ok := rows[c.Block]; !ok {
			order = append(order, c.Block)
		}
		pair := [2]*Block{find(a, c.Block), find(b, c.Block)}
		rows[c.Block] = pair
		for _, bl := range pair {
			if bl == nil {
				continue
			}
			for _, at := range bl.Attrs {
				if !slices.Contains(cols, at.Name) {
					cols = append(cols, at.Name)
				}
			}
		}
	}
	fmt.Fprintf(w, "%ss:\n", kind)
	var buf strings.Builder
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\t%s\t%s\n", kind, strings.Join(cols, "\t"))
	for _, addr := range order {
		for i, bl := range rows[addr] {
			sign := [2]string{"-", "+"}[i]
			if bl == nil {
				continue
			}
			cells := []string{bl.Name}
			for _, col := range cols {
				v := ""
				for _, at := range bl.Attrs {
					if at.Name == col {
						v = strings.Join(strings.Fields(at.Text), " ")
					}
				}
				cells = append(cells, v)
			}
			fmt.Fprintf(tw, "%s\t%s\n", sign, strings.Join(cells, "\t"))
		}
	}
	tw.Flush()
	for _, l := range strings.SplitAfter(buf.String(), "\n") {
		if l != "" {
			fmt.Fprintln(w, strings.TrimRight(l, " \n"))
		}
	}
}

// SourceChanges says what changed between two versions of a playbook's
// sources (as a run recorded them, and as they are now), file by file:
// playbook files block by block as apl diff compares them, other files (the
// prompt files file() read) as unified diffs. It returns "" when nothing
// differs.
func SourceChanges(was, now map[string][]byte) string {
	names := map[string]bool{}
	for n := range was {
		names[n] = true
	}
	for n := range now {
		names[n] = true
	}
	var sb strings.Builder
	for _, n := range slices.Sorted(maps.Keys(names)) {
		a, inA := was[n]
		b, inB := now[n]
		switch {
		case !inA:
			fmt.Fprintf(&sb, "+ %s (a new file)\n", n)
		case !inB:
			fmt.Fprintf(&sb, "- %s (no longer read)\n", n)
		case string(a) == string(b):
		case strings.HasSuffix(n, ".hcl"):
			ba, okA := fileBlocks(was, n)
			bb, okB := fileBlocks(now, n)
			if !okA || !okB {
				fmt.Fprintf(&sb, "--- %s\n%s", n, textDiff(string(a), string(b)))
				continue
			}
			if changes := Compare(ba, bb); len(changes) > 0 {
				Write(&sb, n+" (when the run began)", n+" (now)", changes, ba, bb)
			}
		default:
			fmt.Fprintf(&sb, "--- %s (when the run began)\n+++ %s (now)\n%s", n, n, textDiff(string(a), string(b)))
		}
	}
	return sb.String()
}

// fileBlocks flattens one playbook file of srcs into its blocks.
func fileBlocks(srcs map[string][]byte, name string) ([]*Block, bool) {
	_, f, diags := lang.ParseConfig(srcs[name], name)
	if diags.HasErrors() || f == nil {
		return nil, false
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return nil, false
	}
	var out []*Block
	flatten(&lang.Playbook{Sources: srcs}, body, "", &out, map[string]bool{})
	return out, true
}
