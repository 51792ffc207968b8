package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
)

// logsCmd prints what a run's steps printed and what its agents
// answered, from its artifacts.
type logsCmd struct {
	RunRef  string `arg:"" name:"run" help:"The run: a run id, a run directory, or latest."`
	Step    string `arg:"" optional:"" help:"Only this step's: a for_each step's are its items', STEP[ITEM] one item's."`
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
		return c.temporalLogs(e)
	}
	dir, st, err := openRun(c.RunsDir, c.RunRef)
	if err != nil {
		return hintTemporal(err, c.RunRef, c.temporalFlags)
	}
	return c.printLogs(e, dir, st, relPath)
}

// printLogs prints the artifacts of the run in dir, each headed with
// where it is (shown: what its header says of an artifact's path).
func (c *logsCmd) printLogs(e *env, dir string, st *interp.State, shown func(string) string) error {
	arts := runArtifacts(dir, stepOrder(st, stepsTaken(st)))
	keep := func(artifact) bool { return true }
	if c.Step != "" {
		var err error
		if keep, err = stepFilter(st, arts, c.Step); err != nil {
			return err
		}
	}
	entries := []logEntry{}
	for _, a := range arts {
		if !keep(a) || a.Kind == "prompt" && !c.Prompts {
			continue
		}
		b, err := os.ReadFile(a.Path)
		if err != nil {
			return exitWith(exitInternal, err)
		}
		a.Path = shown(a.Path)
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
			who += " [" + unescapeItem(en.Item) + "]"
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

// stepFilter selects the artifacts that apl logs RUN STEP prints. STEP is
// a step with output; a for_each step, whose output is its inner steps'
// for each item; or either followed by [ITEM], one item's.
func stepFilter(st *interp.State, arts []artifact, ref string) (func(artifact) bool, error) {
	name, item := ref, ""
	if i := strings.IndexByte(ref, '['); i > 0 && strings.HasSuffix(ref, "]") {
		name, item = ref[:i], ref[i+1:len(ref)-1]
	}
	var names []string
	for _, a := range arts {
		if !slices.Contains(names, a.Step) {
			names = append(names, a.Step)
		}
	}
	for _, fe := range slices.Sorted(maps.Keys(st.Items)) {
		if !slices.Contains(names, fe) {
			names = append(names, fe)
		}
	}
	inner := innerSteps(st, name)
	keep := func(a artifact) bool {
		if a.Step != name && !(slices.Contains(inner, a.Step) && a.Item != "") {
			return false
		}
		return item == "" || a.Item == item || unescapeItem(a.Item) == item
	}
	if slices.ContainsFunc(arts, keep) {
		return keep, nil
	}
	if item != "" && (slices.Contains(names, name) || len(inner) > 0) {
		var items []string
		for _, a := range arts {
			if k := unescapeItem(a.Item); (a.Step == name || slices.Contains(inner, a.Step)) && k != "" && !slices.Contains(items, k) {
				items = append(items, k)
			}
		}
		msg := fmt.Sprintf("run %s has no output of item %q of step %q", st.Meta.RunID, item, name)
		if len(items) > 0 {
			msg += "; the items with output are " + strings.Join(items, ", ")
		}
		return nil, exitWith(exitUsage, fmt.Errorf("%s", msg))
	}
	if len(inner) > 0 {
		return nil, exitWith(exitUsage, fmt.Errorf("run %s has no output of the items of step %q yet", st.Meta.RunID, name))
	}
	msg := fmt.Sprintf("run %s has no output of step %q", st.Meta.RunID, name)
	if s := lang.Suggest(name, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", s)
	}
	if len(names) > 0 {
		msg += "; the steps with output are " + strings.Join(names, ", ")
	}
	return nil, exitWith(exitUsage, fmt.Errorf("%s", msg))
}

// unescapeItem undoes the escapes of an item key in an artifact's name,
// where a byte other than a letter, a digit, '-' or '.' is written _XX.
func unescapeItem(s string) string {
	if !strings.Contains(s, "_") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && i+2 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
