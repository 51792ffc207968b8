package diff

import (
	"fmt"
	"io"
	"strings"
)

// A fork's diff is three-way: .apl-fork keeps upstream's files as they
// were forked (the base), so apl diff FORK UPSTREAM shows what the fork
// changed (base → fork) apart from what upstream changed since (base →
// upstream), and the blocks both changed, which the user merges by hand.

// Conflict is a block or attribute both the fork and upstream changed,
// differently.
type Conflict struct {
	Block     string `json:"block"`
	Attribute string `json:"attribute,omitempty"`
	Yours     Change `json:"yours"`
	Upstream  Change `json:"upstream"`
}

// Fork is a fork compared three ways: what the fork changed since it was
// forked, what upstream changed since, and where both changed one thing.
type Fork struct {
	Yours     []Change // from the base to the fork
	Upstream  []Change // from the base to upstream
	Conflicts []Conflict
	// The blocks compared, for Write's tables.
	base, fork, upstream []*Block
}

// CompareFork compares a fork with its upstream through base, upstream's
// blocks as they were forked.
func CompareFork(base, fork, upstream []*Block) *Fork {
	yours, theirs := Compare(base, fork), Compare(base, upstream)
	return &Fork{Yours: yours, Upstream: theirs, Conflicts: conflicts(yours, theirs), base: base, fork: fork, upstream: upstream}
}

// Write writes the fork's changes and upstream's as text, then the
// conflicts; rec names what was forked, nameA the fork and nameB
// upstream.
func (f *Fork) Write(w io.Writer, rec *Record, nameA, nameB string) {
	forked := rec.Upstream + " as forked"
	if rec.Version != "" {
		forked += " (apl " + rec.Version + ")"
	}
	if len(f.Yours) == 0 {
		fmt.Fprintf(w, "Your changes: none.\n")
	} else {
		fmt.Fprintf(w, "Your changes:\n")
		Write(w, forked, nameA, f.Yours, f.base, f.fork)
	}
	if len(f.Upstream) == 0 {
		fmt.Fprintf(w, "\nUpstream's changes since the fork: none.\n")
	} else {
		fmt.Fprintf(w, "\nUpstream's changes since the fork:\n")
		Write(w, forked, nameB, f.Upstream, f.base, f.upstream)
	}
	if len(f.Conflicts) > 0 {
		fmt.Fprintf(w, "\nChanged on both sides; merge these by hand:\n")
		for _, k := range f.Conflicts {
			what := k.Block
			if k.Attribute != "" {
				what += ": " + k.Attribute
			}
			fmt.Fprintf(w, "  %s (yours: %s; upstream: %s)\n", what, describe(k.Yours), describe(k.Upstream))
		}
	}
}

// describe says in a few words what a change did.
func describe(c Change) string {
	switch {
	case c.Kind == "reordered":
		return "rules reordered"
	case c.Attribute == "":
		return c.Kind + " the block"
	case c.Kind == "changed":
		return "changed it"
	default:
		return c.Kind + " it"
	}
}

// conflicts pairs the fork's changes with upstream's that touch the same
// attribute (or the same block, or a block the other side removed)
// without being the same change.
func conflicts(yours, theirs []Change) []Conflict {
	out := []Conflict{}
	for _, y := range yours {
		for _, t := range theirs {
			if touchesSame(y, t) && !sameChange(y, t) {
				k := Conflict{Block: y.Block, Attribute: y.Attribute, Yours: y, Upstream: t}
				if len(t.Block) < len(y.Block) || y.Attribute == "" && t.Attribute != "" {
					k.Block, k.Attribute = t.Block, t.Attribute
				}
				out = append(out, k)
			}
		}
	}
	return out
}

// touchesSame reports whether two changes touch one attribute, one
// block's rule order, or a block one of them adds or removes whole.
func touchesSame(x, y Change) bool {
	within := func(whole, c Change) bool {
		return whole.Attribute == "" && whole.Kind != "reordered" &&
			(c.Block == whole.Block || strings.HasPrefix(c.Block, whole.Block+"."))
	}
	if within(x, y) || within(y, x) {
		return true
	}
	if (x.Kind == "reordered") != (y.Kind == "reordered") {
		return false
	}
	return x.Block == y.Block && x.Attribute == y.Attribute
}

// sameChange reports whether both sides made one change: the same kind,
// to the same value.
func sameChange(x, y Change) bool {
	return x.Block == y.Block && x.Attribute == y.Attribute && x.Kind == y.Kind && x.B == y.B &&
		!(x.Kind == "added" && x.Attribute == "") // two added blocks may differ inside
}
