package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// A fork's diff is three-way: .apl-fork keeps upstream's files as they
// were forked (the base), so apl diff FORK UPSTREAM shows what the fork
// changed (base → fork) apart from what upstream changed since (base →
// upstream), and the blocks both changed, which the user merges by hand.

// conflict is a block or attribute both the fork and upstream changed,
// differently.
type conflict struct {
	Block     string `json:"block"`
	Attribute string `json:"attribute,omitempty"`
	Yours     change `json:"yours"`
	Upstream  change `json:"upstream"`
}

// forkDiffJSON is apl diff --json for a fork.
type forkDiffJSON struct {
	A       string   `json:"a"`
	B       string   `json:"b"`
	Equal   bool     `json:"equal"`
	Changes []change `json:"changes"`
	Fork    struct {
		Upstream        string     `json:"upstream"`
		APLVersion      string     `json:"apl_version"`
		Hash            string     `json:"hash"`
		Yours           []change   `json:"yours"`
		UpstreamChanges []change   `json:"upstream_changes"`
		Conflicts       []conflict `json:"conflicts"`
	} `json:"fork"`
}

// forkDiff prints a fork's changes and upstream's since the fork; changes
// are the fork's differences from B, for the exit code and --json.
func (c *diffCmd) forkDiff(e *env, rec *forkRecord, changes []change, fork, upstream []*block) error {
	dir, err := rec.writeBase()
	if err != nil {
		return exitWith(exitInternal, fmt.Errorf("reading the base of %s: %w", c.A, err))
	}
	defer os.RemoveAll(dir)
	basePB, diags := e.loader.Load(dir)
	if diags.HasErrors() {
		return exitWith(exitUsage, fmt.Errorf("the upstream files %s/%s keeps no longer load (%s); fork again, or diff with a playbook of your own", c.A, forkFile, countDiags(diags)))
	}
	if rec.Hash != "" && "sha256:"+basePB.Hash != rec.Hash {
		fmt.Fprintf(e.stderr, "apl: the upstream files %s/%s keeps do not hash to the %s it records; they were edited, so what this diff calls your changes and upstream's may be off\n", c.A, forkFile, rec.Hash)
	}
	base, _ := playbookBlocks(basePB)
	yours := diffBlocks(base, fork)
	theirs := diffBlocks(base, upstream)
	conflicts := conflicts(yours, theirs)
	if c.JSON {
		out := forkDiffJSON{A: c.A, B: c.B, Equal: len(changes) == 0, Changes: changes}
		out.Fork.Upstream, out.Fork.APLVersion, out.Fork.Hash = rec.Upstream, rec.Version, rec.Hash
		out.Fork.Yours, out.Fork.UpstreamChanges, out.Fork.Conflicts = yours, theirs, conflicts
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else if len(yours)+len(theirs) > 0 {
		writeForkDiff(e.stdout, c, rec, yours, theirs, conflicts, base, fork, upstream)
	}
	if len(changes) > 0 {
		return exitWith(exitFailed, nil)
	}
	return nil
}

func writeForkDiff(w io.Writer, c *diffCmd, rec *forkRecord, yours, theirs []change, conflicts []conflict, base, fork, upstream []*block) {
	forked := rec.Upstream + " as forked"
	if rec.Version != "" {
		forked += " (apl " + rec.Version + ")"
	}
	if len(yours) == 0 {
		fmt.Fprintf(w, "Your changes: none.\n")
	} else {
		fmt.Fprintf(w, "Your changes:\n")
		writeDiff(w, forked, c.A, yours, base, fork)
	}
	if len(theirs) == 0 {
		fmt.Fprintf(w, "\nUpstream's changes since the fork: none.\n")
	} else {
		fmt.Fprintf(w, "\nUpstream's changes since the fork:\n")
		writeDiff(w, forked, c.B, theirs, base, upstream)
	}
	if len(conflicts) > 0 {
		fmt.Fprintf(w, "\nChanged on both sides; merge these by hand:\n")
		for _, k := range conflicts {
			what := k.Block
			if k.Attribute != "" {
				what += ": " + k.Attribute
			}
			fmt.Fprintf(w, "  %s (yours: %s; upstream: %s)\n", what, describe(k.Yours), describe(k.Upstream))
		}
	}
}

// describe says in a few words what a change did.
func describe(c change) string {
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
func conflicts(yours, theirs []change) []conflict {
	out := []conflict{}
	for _, y := range yours {
		for _, t := range theirs {
			if touchesSame(y, t) && !sameChange(y, t) {
				k := conflict{Block: y.Block, Attribute: y.Attribute, Yours: y, Upstream: t}
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
func touchesSame(x, y change) bool {
	within := func(whole, c change) bool {
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
func sameChange(x, y change) bool {
	return x.Block == y.Block && x.Attribute == y.Attribute && x.Kind == y.Kind && x.B == y.B &&
		!(x.Kind == "added" && x.Attribute == "") // two added blocks may differ inside
}
