package main

import (
	"fmt"

	"github.com/apl-lang/apl/lang/diff"
)

type diffCmd struct {
	A    string `arg:"" name:"a" help:"The first playbook: a .hcl file, a directory or stdlib:NAME."`
	B    string `arg:"" name:"b" help:"The second playbook."`
	JSON bool   `name:"json" help:"Print the differences as JSON."`
}

func (c *diffCmd) Run(e *env) error {
	a, _, err := e.load(c.A)
	if err != nil {
		return err
	}
	b, _, err := e.load(c.B)
	if err != nil {
		return err
	}
	ba, bb := diff.Blocks(a), diff.Blocks(b)
	changes := diff.Compare(ba, bb)
	rec, err := diff.ReadFork(c.A, e.loader.Allow)
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
		diff.Write(e.stdout, c.A, c.B, changes, ba, bb)
	}
	if len(changes) > 0 {
		return exitWith(exitFailed, nil)
	}
	return nil
}

// forkDiffJSON is apl diff --json for a fork.
type forkDiffJSON struct {
	A       string        `json:"a"`
	B       string        `json:"b"`
	Equal   bool          `json:"equal"`
	Changes []diff.Change `json:"changes"`
	Fork    struct {
		Upstream        string          `json:"upstream"`
		APLVersion      string          `json:"apl_version"`
		Hash            string          `json:"hash"`
		Yours           []diff.Change   `json:"yours"`
		UpstreamChanges []diff.Change   `json:"upstream_changes"`
		Conflicts       []diff.Conflict `json:"conflicts"`
	} `json:"fork"`
}

// forkDiff prints a fork's changes and upstream's since the fork; changes
// are the fork's differences from B, for the exit code and --json.
func (c *diffCmd) forkDiff(e *env, rec *diff.Record, changes []diff.Change, fork, upstream []*diff.Block) error {
	basePB, diags, err := rec.LoadBase(e.loader)
	if err != nil {
		return exitWith(exitInternal, fmt.Errorf("reading the base of %s: %w", c.A, err))
	}
	if diags.HasErrors() {
		return exitWith(exitUsage, fmt.Errorf("the upstream files %s/%s keeps no longer load (%s); fork again, or diff with a playbook of your own", c.A, diff.ForkFile, countDiags(diags)))
	}
	if rec.Hash != "" && "sha256:"+basePB.Hash != rec.Hash {
		fmt.Fprintf(e.stderr, "apl: the upstream files %s/%s keeps do not hash to the %s it records; they were edited, so what this diff calls your changes and upstream's may be off\n", c.A, diff.ForkFile, rec.Hash)
	}
	f := diff.CompareFork(diff.Blocks(basePB), fork, upstream)
	if c.JSON {
		out := forkDiffJSON{A: c.A, B: c.B, Equal: len(changes) == 0, Changes: changes}
		out.Fork.Upstream, out.Fork.APLVersion, out.Fork.Hash = rec.Upstream, rec.Version, rec.Hash
		out.Fork.Yours, out.Fork.UpstreamChanges, out.Fork.Conflicts = f.Yours, f.Upstream, f.Conflicts
		if err := printJSON(e.stdout, out); err != nil {
			return err
		}
	} else if len(f.Yours)+len(f.Upstream) > 0 {
		f.Write(e.stdout, rec, c.A, c.B)
	}
	if len(changes) > 0 {
		return exitWith(exitFailed, nil)
	}
	return nil
}
