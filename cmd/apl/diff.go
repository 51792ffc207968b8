package main

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

type diffCmd struct {
	A    string `arg:"" name:"a" help:"The first playbook: a .hcl file, a directory or stdlib:NAME."`
	B    string `arg:"" name:"b" help:"The second playbook."`
	JSON bool   `name:"json" help:"Print the differences as JSON."`
}

// A playbook is compared block by block: each block is named by its
// address (step "plan".gate.rule "pass"), wherever and in whatever order
// its files hold it, and each attribute by its expression's source text
// as apl fmt writes it. Comments and layout are not differences; a
// prompt file that file() reads is compared by its text.

// change is one difference between two playbooks.
type change struct {
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

// block is a block of a playbook, flattened: its attributes' normalized
// texts, in source order, and the labels of its ordered children.
type block struct {
	addr  string
	kind  string // the block type
	name  string // its first label
	attrs []attr
	// rules are a gate's rule names in order.
	rules []string
}

type attr struct{ name, text string }

func (c *diffCmd) Run(e *env) error {
	a, _, err := e.load(c.A)
	if err != nil {
		return err
	}
	b, _, err := e.load(c.B)
	if err != nil {
		return err
	}
	ba, err := playbookBlocks(a)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("%s: %w", c.A, err))
	}
	bb, err := playbookBlocks(b)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("%s: %w", c.B, err))
	}
	changes := diffBlocks(ba, bb)
	rec, err := readFork(c.A, e.loader.Allow)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	if rec != nil && rec.Base == nil {
		fmt.Fprintf(e.stderr, "apl: %s was forked by an apl that kept no copy of upstream's files, so this diff cannot tell your changes from upstream's\n", c.A)
	}
	if rec != nil && rec.Base != nil {
		return c.forkDiff(e, rec, changes, ba, bb)
	}
	if c.JSON {
		if err := printJSON(e.stdout, map[string]any{"a": c.A, "b": c.B, "equal": len(changes) == 0, "changes": changes}); err != nil {
			return err
		}
	} else if len(changes) > 0 {
		writeDiff(e.stdout, c.A, c.B, changes, ba, bb)
	}
	if len(changes) > 0 {
		return exitWith(exitFailed, nil)
	}
	return nil
}

// playbookBlocks flattens a loaded playbook into its blocks, by address,
// in the order they are first met. It reads the effective playbook: for
// one that extends another, the upstream's blocks with its overrides.
func playbookBlocks(pb *lang.Playbook) ([]*block, error) {
	var out []*block
	flatten(pb, pb.Body(), "", &out, map[string]bool{})
	return out, nil
}

func flatten(pb *lang.Playbook, body *hclsyntax.Body, prefix string, out *[]*block, seen map[string]bool) {
	for _, b := range body.Blocks {
		addr := b.Type
		for _, l := range b.Labels {
			addr += fmt.Sprintf(" %q", l)
		}
		if prefix != "" {
			addr = prefix + "." + addr
		}
		// Unlabelled blocks that repeat (two on_exhausted, which the loader
		// rejects) keep apart by their place.
		for i := 2; seen[addr]; i++ {
			addr = fmt.Sprintf("%s#%d", strings.TrimSuffix(addr, fmt.Sprintf("#%d", i-1)), i)
		}
		seen[addr] = true
		bl := &block{addr: addr, kind: b.Type}
		if len(b.Labels) > 0 {
			bl.name = b.Labels[0]
		}
		attrs := make([]*hclsyntax.Attribute, 0, len(b.Body.Attributes))
		for _, a := range b.Body.Attributes {
			attrs = append(attrs, a)
		}
		slices.SortFunc(attrs, func(x, y *hclsyntax.Attribute) int { return x.SrcRange.Start.Byte - y.SrcRange.Start.Byte })
		for _, a := range attrs {
			bl.attrs = append(bl.attrs, attr{a.Name, exprText(pb, a.Expr)})
		}
		if b.Type == "gate" {
			for _, r := range b.Body.Blocks {
				if r.Type == "rule" && len(r.Labels) > 0 {
					bl.rules = append(bl.rules, r.Labels[0])
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

// diffBlocks lists the differences from a to b: blocks removed, added and
// changed, in a's order and then b's.
func diffBlocks(a, b []*block) []change {
	changes := []change{}
	inB := map[string]*block{}
	for _, bl := range b {
		inB[bl.addr] = bl
	}
	inA := map[string]*block{}
	for _, bl := range a {
		inA[bl.addr] = bl
	}
	// A block under a removed or added one is said with it.
	under := func(addr string, m map[string]*block) bool {
		for i := strings.LastIndex(addr, "."); i > 0; i = strings.LastIndex(addr[:i], ".") {
			if m[addr[:i]] == nil {
				return true
			}
		}
		return false
	}
	for _, x := range a {
		y := inB[x.addr]
		if y == nil {
			if !under(x.addr, inB) {
				changes = append(changes, change{Kind: "removed", Block: x.addr})
			}
			continue
		}
		changes = append(changes, diffAttrs(x, y)...)
		if ra, rb := x.rules, y.rules; !slices.Equal(commonOrder(ra, rb), commonOrder(rb, ra)) {
			changes = append(changes, change{Kind: "reordered", Block: x.addr, A: strings.Join(ra, ", "), B: strings.Join(rb, ", ")})
		}
	}
	for _, y := range b {
		if inA[y.addr] == nil && !under(y.addr, inA) {
			changes = append(changes, change{Kind: "added", Block: y.addr})
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

func diffAttrs(x, y *block) []change {
	var out []change
	get := func(as []attr, name string) (string, bool) {
		for _, a := range as {
			if a.name == name {
				return a.text, true
			}
		}
		return "", false
	}
	for _, a := range x.attrs {
		t, ok := get(y.attrs, a.name)
		switch {
		case !ok:
			out = append(out, change{Kind: "removed", Block: x.addr, Attribute: a.name, A: a.text})
		case t != a.text:
			c := change{Kind: "changed", Block: x.addr, Attribute: a.name, A: a.text, B: t}
			if strings.Contains(a.text, "\n") || strings.Contains(t, "\n") {
				c.Diff = textDiff(a.text, t)
			}
			out = append(out, c)
		}
	}
	for _, b := range y.attrs {
		if _, ok := get(x.attrs, b.name); !ok {
			out = append(out, change{Kind: "added", Block: x.addr, Attribute: b.name, B: b.text})
		}
	}
	return out
}

// textDiff is a unified diff of two texts, without file headers.
func textDiff(a, b string) string {
	d := unifiedDiff("x", withNewline(a), withNewline(b))
	_, rest, _ := strings.Cut(d, "+++ b/x\n")
	return rest
}

func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// writeDiff prints the changes: budgets and modes as tables, then each
// other block's changes under its address.
func writeDiff(w io.Writer, nameA, nameB string, changes []change, a, b []*block) {
	fmt.Fprintf(w, "--- %s\n+++ %s\n", nameA, nameB)
	tables := map[string]bool{}
	for _, c := range changes {
		k := kindOf(c.Block)
		if (k == "budget" || k == "mode") && !strings.Contains(c.Block, ".") {
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

// kindOf is the type of an address's first block.
func kindOf(addr string) string {
	k, _, _ := strings.Cut(addr, " ")
	return k
}

// writeTable prints the budgets or modes that differ as a table: a row
// from A (-) and a row from B (+) for each.
func writeTable(w io.Writer, kind string, changes []change, a, b []*block) {
	var cols []string
	rows := map[string][2]*block{}
	var order []string
	find := func(bs []*block, addr string) *block {
		for _, bl := range bs {
			if bl.addr == addr {
				return bl
			}
		}
		return nil
	}
	for _, c := range changes {
		if kindOf(c.Block) != kind || strings.Contains(c.Block, ".") {
			continue
		}
		if _, ok := rows[c.Block]; !ok {
			order = append(order, c.Block)
		}
		pair := [2]*block{find(a, c.Block), find(b, c.Block)}
		rows[c.Block] = pair
		for _, bl := range pair {
			if bl == nil {
				continue
			}
			for _, at := range bl.attrs {
				if !slices.Contains(cols, at.name) {
					cols = append(cols, at.name)
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
			cells := []string{bl.name}
			for _, col := range cols {
				v := ""
				for _, at := range bl.attrs {
					if at.name == col {
						v = strings.Join(strings.Fields(at.text), " ")
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

// sourceChanges says what changed between two versions of a playbook's
// sources (as a run recorded them, and as they are now), file by file:
// playbook files block by block as apl diff compares them, other files (the
// prompt files file() read) as unified diffs. It returns "" when nothing
// differs.
func sourceChanges(was, now map[string][]byte) string {
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
			if changes := diffBlocks(ba, bb); len(changes) > 0 {
				writeDiff(&sb, n+" (when the run began)", n+" (now)", changes, ba, bb)
			}
		default:
			fmt.Fprintf(&sb, "--- %s (when the run began)\n+++ %s (now)\n%s", n, n, textDiff(string(a), string(b)))
		}
	}
	return sb.String()
}

// fileBlocks flattens one playbook file of srcs into its blocks.
func fileBlocks(srcs map[string][]byte, name string) ([]*block, bool) {
	_, f, diags := lang.ParseConfig(srcs[name], name)
	if diags.HasErrors() || f == nil {
		return nil, false
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return nil, false
	}
	var out []*block
	flatten(&lang.Playbook{Sources: srcs}, body, "", &out, map[string]bool{})
	return out, true
}
