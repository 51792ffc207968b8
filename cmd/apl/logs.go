package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/apl-lang/apl/lang"
)

// logsCmd prints what a run's steps printed and what its agents
// answered, from its artifacts.
type logsCmd struct {
	RunRef  string `arg:"" name:"run" help:"The run: a run id, a run directory, or latest."`
	Step    string `arg:"" optional:"" help:"Only this step's (inside a for_each, each item's)."`
	Prompts bool   `help:"Also print the prompts sent to agents."`
	RunsDir string `help:"Where run directories are (default: .apl/runs)." placeholder:"DIR"`
	JSON    bool   `name:"json" help:"Print the artifacts as a JSON array, each with its content."`

	temporalFlags `embed:""`
}

// logEntry is one artifact with its content, for --json.
type logEntry struct {
	artifact
	Content string `json:"content"`
}

func (c *logsCmd) Run(e *env) error {
	if c.Engine == engineTemporal {
		return temporalLogs(e, c.temporalFlags, c.RunRef)
	}
	dir, st, err := openRun(c.RunsDir, c.RunRef)
	if err != nil {
		return hintTemporal(err, c.RunRef)
	}
	arts := runArtifacts(dir, stepOrder(st, stepsTaken(st)))
	var names []string
	for _, a := range arts {
		if !slices.Contains(names, a.Step) {
			names = append(names, a.Step)
		}
	}
	if c.Step != "" && !slices.Contains(names, c.Step) {
		msg := fmt.Sprintf("run %s has no output of step %q", st.Meta.RunID, c.Step)
		if s := lang.Suggest(c.Step, names); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		if len(names) > 0 {
			msg += "; the steps with output are " + strings.Join(names, ", ")
		}
		return exitWith(exitUsage, fmt.Errorf("%s", msg))
	}
	entries := []logEntry{}
	for _, a := range arts {
		if c.Step != "" && a.Step != c.Step || a.Kind == "prompt" && !c.Prompts {
			continue
		}
		b, err := os.ReadFile(a.Path)
		if err != nil {
			return exitWith(exitInternal, err)
		}
		a.Path = relPath(a.Path)
		entries = append(entries, logEntry{a, string(b)})
	}
	if c.JSON {
		return printJSON(e.stdout, entries)
	}
	for i, en := range entries {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		who := en.Step
		if en.Item != "" {
			who += " [" + en.Item + "]"
		}
		fmt.Fprintf(e.stdout, "==> %s, attempt %d, %s (%s) <==\n", who, en.Attempt, en.Kind, en.Path)
		fmt.Fprint(e.stdout, en.Content)
		if en.Content != "" && !strings.HasSuffix(en.Content, "\n") {
			fmt.Fprintln(e.stdout)
		}
	}
	if len(entries) == 0 {
		fmt.Fprintf(e.stderr, "apl: run %s has no output yet\n", st.Meta.RunID)
	}
	return nil
}
