package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apl-lang/apl/interp"
)

// runsCmd lists the runs in a runs directory.
type runsCmd struct {
	RunsDir  string `help:"Where run directories are (default: .apl/runs)." placeholder:"DIR"`
	JSON     bool   `name:"json" help:"Print the runs as a JSON array."`
	Playbook string `placeholder:"NAME" help:"Only the runs of this playbook: its name, or the path or stdlib: reference apl run was given."`

	temporalFlags `embed:""`
}

// ofPlaybook reports whether a run of the playbook named name, given to
// apl run as ref, is one of want's.
func ofPlaybook(want, name, ref string) bool {
	if want == "" || want == name || want == ref {
		return true
	}
	return ref != "" && !strings.HasPrefix(ref, "stdlib:") && filepath.Clean(absPath(want)) == filepath.Clean(absPath(ref))
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// runSummary is one run as apl runs lists it, and the head of apl show.
type runSummary struct {
	RunID      string    `json:"run_id"`
	Playbook   string    `json:"playbook"`
	Ref        string    `json:"playbook_ref"`
	Status     string    `json:"status"`
	Reason     string    `json:"reason,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	DurationS  float64   `json:"duration_s"`
	AgentCalls int       `json:"agent_calls"`
	Tokens     int       `json:"tokens"`
	CostUSD    *float64  `json:"cost_usd"`
	Dir        string    `json:"dir"`
}

// statusKilled is the reason of a run that says running but whose process
// is gone.
const statusKilled = "its process ended without recording how the run ended (killed, or the machine went down)"

func summarize(dir string, st *interp.State) runSummary {
	m := st.Meta
	if m.Status == interp.StatusRunning && !interp.RunHeld(dir) {
		// Its state was last written while it ran: it is running no more.
		m.Status, m.Reason = interp.StatusInterrupted, statusKilled
	}
	return runSummary{
		RunID: m.RunID, Playbook: m.Playbook, Ref: m.PlaybookRef, Status: m.Status, Reason: m.Reason,
		StartedAt: m.StartedAt, DurationS: st.Metrics.DurationS, AgentCalls: st.Metrics.AgentCalls,
		Tokens: st.Metrics.TotalTokens, CostUSD: st.Metrics.TotalCostUSD, Dir: relPath(dir),
	}
}

func (c *runsCmd) Run(e *env) error {
	if c.Engine == engineTemporal {
		return temporalRunsList(e, c.temporalFlags, c.Playbook, c.JSON)
	}
	runsDir := cmp.Or(c.RunsDir, interp.RunsDir("."))
	entries, err := os.ReadDir(runsDir)
	if err != nil && !os.IsNotExist(err) {
		return exitWith(exitUsage, fmt.Errorf("runs: %w", err))
	}
	var runs []runSummary
	for _, ent := range entries {
		if !ent.IsDir() || ent.Name() == "latest" {
			continue
		}
		dir := filepath.Join(runsDir, ent.Name())
		if _, err := interp.ResolveRun(runsDir, ent.Name()); err != nil {
			continue // not a run: no state in it
		}
		st, _, err := interp.ReadRun(dir)
		if err != nil {
			fmt.Fprintf(e.stderr, "apl: warning: run %s: %v\n", ent.Name(), err)
			continue
		}
		if r := summarize(dir, st); ofPlaybook(c.Playbook, r.Playbook, r.Ref) {
			runs = append(runs, r)
		}
	}
	// Newest first, as git log and gh run list show them.
	slices.SortStableFunc(runs, func(a, b runSummary) int {
		return cmp.Or(b.StartedAt.Compare(a.StartedAt), strings.Compare(b.RunID, a.RunID))
	})
	if c.JSON {
		if runs == nil {
			runs = []runSummary{}
		}
		return printJSON(e.stdout, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(e.stderr, "apl: no runs in %s yet\n", relPath(runsDir))
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tPLAYBOOK\tSTATUS\tSTARTED\tDURATION\tCOST")
	for _, r := range runs {
		cost := "-"
		if r.CostUSD != nil {
			cost = formatCost(*r.CostUSD)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.RunID, r.Playbook, r.Status,
			r.StartedAt.Local().Format("2006-01-02 15:04:05"), formatSeconds(r.DurationS), cost)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range runs {
		if r.Reason == statusKilled {
			fmt.Fprintf(e.stderr, "apl: run %s was killed while running; continue it with: %s\n", r.RunID, resumeHint(c.RunsDir, r.RunID))
		}
	}
	return nil
}

// resumeHint is the command that continues run id of runsDir ("" for the
// default).
func resumeHint(runsDir, id string) string {
	if runsDir == "" {
		return "apl resume " + shellQuote(id)
	}
	return "apl resume --runs-dir " + shellQuote(runsDir) + " " + shellQuote(id)
}

// printJSON prints v indented, without HTML escaping.
func printJSON(w io.Writer, v any) error {
	b, err := marshalJSON(v)
	if err != nil {
		return exitWith(exitInternal, err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return exitWith(exitInternal, err)
	}
	_, err = fmt.Fprintf(w, "%s\n", out.Bytes())
	return err
}

// openRun finds a run by reference (an id, a directory or latest) and
// reads its state, for the commands that look at past runs.
func openRun(runsDir, ref string) (string, *interp.State, error) {
	runsDir = cmp.Or(runsDir, interp.RunsDir("."))
	dir, err := interp.ResolveRun(runsDir, ref)
	if err != nil {
		return "", nil, exitWith(exitUsage, err)
	}
	st, _, err := interp.ReadRun(dir)
	if err != nil {
		return "", nil, exitWith(exitUsage, err)
	}
	// The whole event log: a long run keeps only its newest in the state.
	if st.Events, err = interp.ReadEvents(dir, st); err != nil {
		return "", nil, exitWith(exitUsage, err)
	}
	return dir, st, nil
}
