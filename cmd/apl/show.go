package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/apl-lang/apl/interp"
)

// showCmd tells the story of one run.
type showCmd struct {
	RunRef  string `arg:"" name:"run" optional:"" help:"The run: a run id, a run directory, or latest (default)."`
	RunsDir string `help:"Where run directories are (default: .apl/runs)." placeholder:"DIR"`
	JSON    bool   `name:"json" help:"Print the run as JSON."`

	temporalFlags `embed:""`
}

// runShow is apl show's account of a run.
type runShow struct {
	runSummary
	Recommendation string `json:"recommendation,omitempty"`
	// Path is the main steps in the order they ran, a step once per visit.
	Path   []string        `json:"path"`
	Steps  []stepShow      `json:"steps"`
	Output json.RawMessage `json:"output,omitempty"`
}

// stepShow is one step of a run.
type stepShow struct {
	Name       string          `json:"name"`
	Status     string          `json:"status"`
	Attempts   int             `json:"attempts"`
	DurationS  float64         `json:"duration_s"`
	Tokens     int             `json:"tokens,omitempty"`
	CostUSD    *float64        `json:"cost_usd,omitempty"`
	ExitCode   *int            `json:"exit_code,omitempty"`
	Output     json.RawMessage `json:"output,omitempty"`
	Error      string          `json:"error,omitempty"`
	SkipReason string          `json:"skip_reason,omitempty"`
	// Items counts a for_each step's items by status.
	Items     map[string]int `json:"items,omitempty"`
	Artifacts []string       `json:"artifacts,omitempty"`
}

func (c *showCmd) Run(e *env) error {
	if c.Engine == engineTemporal {
		return temporalShow(e, c.temporalFlags, c.RunRef, c.JSON)
	}
	dir, st, err := openRun(c.RunsDir, c.RunRef)
	if err != nil {
		return hintTemporal(err, c.RunRef, c.temporalFlags)
	}
	s := showRun(dir, st)
	if c.JSON {
		return printJSON(e.stdout, s)
	}
	writeShow(e.stdout, s)
	if s.Reason == statusKilled {
		fmt.Fprintf(e.stderr, "apl: run %s was killed while running; continue it with: %s\n", s.RunID, resumeHint(c.RunsDir, s.RunID))
	}
	return nil
}

// stepsTaken is the main steps in the order the run went through them,
// from its event log: a step once per visit, its retries not counted.
func stepsTaken(st *interp.State) []string {
	var path []string
	for _, ev := range st.Events {
		if ev.Item != "" || strings.Contains(ev.Step, "/") || st.Steps[ev.Step] == nil {
			continue
		}
		if ev.Type == interp.EventStepStarted || ev.Type == interp.EventStepReused && (len(path) == 0 || path[len(path)-1] != ev.Step) {
			path = append(path, ev.Step)
		}
	}
	return path
}

// stepOrder is the order steps are shown in: as they ran, then the
// others that have a record, by name.
func stepOrder(st *interp.State, path []string) []string {
	var order []string
	for _, p := range path {
		if !slices.Contains(order, p) {
			order = append(order, p)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(st.Steps)) {
		if !slices.Contains(order, name) {
			order = append(order, name)
		}
	}
	return order
}

func showRun(dir string, st *interp.State) runShow {
	s := runShow{runSummary: summarize(dir, st), Recommendation: st.Meta.Recommendation, Path: stepsTaken(st), Output: st.Output}
	if s.Path == nil {
		s.Path = []string{}
	}
	if s.Reason == "" && s.Status == interp.StatusFailed {
		// A gate failed the run without a reason: the event that led to it
		// tells why.
		for _, ev := range slices.Backward(st.Events) {
			if ev.Type == interp.EventCapExhausted || ev.Type == interp.EventStepFailed {
				s.Reason = ev.Message
				break
			}
		}
	}
	order := stepOrder(st, s.Path)
	arts := runArtifacts(dir, order)
	for _, name := range order {
		rec := st.Steps[name]
		if rec.Status == interp.StepPending && rec.Attempts == 0 {
			continue
		}
		ss := stepShow{Name: name, Status: rec.Status, Attempts: rec.Attempts, DurationS: rec.DurationS,
			Tokens: rec.Tokens, CostUSD: rec.CostUSD, ExitCode: rec.ExitCode, Output: rec.Output,
			Error: rec.Error, SkipReason: rec.SkipReason}
		if items := st.Items[name]; len(items) > 0 {
			ss.Items = map[string]int{}
			for _, it := range items {
				ss.Items[it.Status]++
			}
		}
		inner := innerSteps(st, name)
		for _, a := range arts {
			if a.Step == name || slices.Contains(inner, a.Step) && a.Item != "" {
				ss.Artifacts = append(ss.Artifacts, relPath(a.Path))
			}
		}
		s.Steps = append(s.Steps, ss)
	}
	if s.Steps == nil {
		s.Steps = []stepShow{}
	}
	return s
}

// innerSteps are the steps inside a for_each step, as its items'
// records name them.
func innerSteps(st *interp.State, step string) []string {
	var out []string
	for _, it := range st.Items[step] {
		for name := range it.Steps {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

func writeShow(w io.Writer, s runShow) {
	fmt.Fprintf(w, "run %s of %s (%s): %s\n", s.RunID, s.Playbook, s.Ref, s.Status)
	took := "took " + formatSeconds(s.DurationS)
	if c := costLine(map[string]any{interp.DetailAgentCalls: s.AgentCalls, interp.DetailTokens: s.Tokens, interp.DetailCost: costOf(s.CostUSD)}, interp.DetailTokens, interp.DetailCost, true); c != "" {
		took += " · " + c
	}
	fmt.Fprintf(w, "started %s, %s\n", s.StartedAt.Local().Format("2006-01-02 15:04:05"), took)
	if s.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", s.Reason)
	}
	if s.Recommendation != "" {
		fmt.Fprintf(w, "recommendation: %s\n", s.Recommendation)
	}
	fmt.Fprintf(w, "directory: %s\n", s.Dir)
	if len(s.Path) > 0 {
		fmt.Fprintf(w, "path: %s\n", strings.Join(s.Path, " → "))
	}
	for _, st := range s.Steps {
		fmt.Fprintf(w, "\n%s: %s", st.Name, st.Status)
		var facts []string
		if st.Attempts > 0 {
			facts = append(facts, formatSeconds(st.DurationS), plural(st.Attempts, "attempt"))
		}
		if st.ExitCode != nil {
			facts = append(facts, fmt.Sprintf("exit %d", *st.ExitCode))
		}
		if c := costLine(map[string]any{interp.DetailTokens: st.Tokens, interp.DetailCost: costOf(st.CostUSD)}, interp.DetailTokens, interp.DetailCost, true); c != "" {
			facts = append(facts, c)
		}
		if len(facts) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(facts, " · "))
		}
		fmt.Fprintln(w)
		if st.SkipReason != "" {
			fmt.Fprintf(w, "  skipped: %s\n", st.SkipReason)
		}
		if len(st.Items) > 0 {
			var parts []string
			for _, k := range slices.Sorted(maps.Keys(st.Items)) {
				parts = append(parts, fmt.Sprintf("%d %s", st.Items[k], k))
			}
			fmt.Fprintf(w, "  items: %s\n", strings.Join(parts, ", "))
		}
		if len(st.Output) > 0 && string(st.Output) != "null" {
			fmt.Fprintf(w, "  output: %s\n", clip(strings.Join(strings.Fields(string(st.Output)), " "), 100))
		}
		if st.Error != "" {
			fmt.Fprintf(w, "  error: %s\n", st.Error)
		}
		switch n := len(st.Artifacts); {
		case n > 4:
			fmt.Fprintf(w, "  artifacts: %d files, %s ... (apl logs %s %s)\n", n, st.Artifacts[0], shellQuote(s.RunID), st.Name)
		case n > 0:
			fmt.Fprintf(w, "  artifacts: %s\n", strings.Join(st.Artifacts, ", "))
		}
	}
	if len(s.Output) > 0 && string(s.Output) != "{}" {
		fmt.Fprintf(w, "\noutput: %s\n", s.Output)
	}
}

// costOf is a cost for costLine's map: absent when unknown.
func costOf(c *float64) any {
	if c == nil {
		return nil
	}
	return *c
}
