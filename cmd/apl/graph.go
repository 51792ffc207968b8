package main

import (
	"errors"
	"os"
	"strings"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/draw"
)

type graphCmd struct {
	Path    string `arg:"" help:"A playbook file, directory, or stdlib:NAME."`
	Format  string `enum:"text,dot,mermaid,svg,png" default:"text" help:"text, dot (Graphviz), mermaid, or svg and png (drawn by Graphviz's dot, which must be installed)."`
	Output  string `short:"o" placeholder:"FILE" help:"Write the graph to FILE instead of stdout."`
	RunPath string `name:"path" placeholder:"RUN" help:"Draw a recorded run over the graph: the steps it visited and the edges it took (a run id, a run directory, or latest)."`
	RunsDir string `help:"Where run directories are, for --path (default: .apl/runs)." placeholder:"DIR"`
	DryRun  bool   `name:"dry-run" help:"Draw the path a dry run takes over the graph (see apl run --dry-run); required inputs get example values."`
	dryMockFlags
}

func (c *graphCmd) Run(e *env) error {
	pb, _, err := e.load(c.Path)
	if err != nil {
		return err
	}
	g := draw.New(pb)
	if c.RunPath != "" && c.DryRun {
		return exitWith(exitUsage, errors.New("--path and --dry-run each draw a path; give one"))
	}
	if c.RunPath != "" {
		r, err := readRun(c.RunsDir, c.RunPath)
		if err != nil {
			return exitWith(exitUsage, err)
		}
		g.Overlay(r)
	}
	if c.DryRun {
		r, err := e.dryPath(pb, c.Path, c.dryMockFlags)
		if err != nil {
			return err
		}
		g.Overlay(r)
	} else if c.Mocks != "" || c.Test != "" {
		return exitWith(exitUsage, errors.New("--mocks and --test go with --dry-run"))
	}
	w := e.stdout
	var out strings.Builder
	if c.Output != "" {
		w = &out
	}
	switch c.Format {
	case "dot":
		g.WriteDot(w)
	case "mermaid":
		g.WriteMermaid(w)
	case "svg", "png":
		var dot strings.Builder
		g.WriteDot(&dot)
		img, err := draw.Render(dot.String(), c.Format)
		if err != nil {
			return exitWith(exitInternal, err)
		}
		w.Write(img)
	default:
		g.WriteText(w)
	}
	if c.Output != "" {
		if err := os.WriteFile(c.Output, []byte(out.String()), 0o644); err != nil {
			return exitWith(exitInternal, err)
		}
	}
	return nil
}

// readRun reads a recorded run to draw: ref is a run id, a run directory
// or "latest".
func readRun(runsDir, ref string) (*draw.Run, error) {
	if runsDir == "" {
		// A checkout may hold a planted .apl symlink: graph reads runs
		// only inside the project, as runs write them.
		dir, err := builtins.ConfinedDir(".", interp.RunsDir("."))
		if err != nil {
			return nil, err
		}
		runsDir = dir
	}
	dir, err := interp.ResolveRun(runsDir, ref)
	if err != nil {
		return nil, err
	}
	st, _, err := interp.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	// The whole event log: a long run keeps only its newest in the state.
	if st.Events, err = interp.ReadEvents(dir, st); err != nil {
		return nil, err
	}
	return draw.RunOf(st), nil
}
