package interp

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/apl-lang/apl/lang"
)

// Keys of Event.Details that report what a step or a run cost, for
// progress displays. Durations are in seconds; costs in USD, present only
// once a backend reported one.
const (
	DetailDuration   = "duration_s"
	DetailTokens     = "tokens"
	DetailCost       = "cost_usd"
	DetailAgentCalls = "agent_calls"
	// DetailRunTokens and DetailRunCost are the run's totals so far, on
	// step events.
	DetailRunTokens = "run_tokens"
	DetailRunCost   = "run_cost_usd"
	// DetailArtifacts lists, on a failed step, the files its last attempt
	// left in artifacts/ (command output, agent prompts, responses and
	// stderr), as paths that open from the current directory.
	DetailArtifacts = "artifacts"
	// DetailStatus and DetailReason are the run's status and reason, on
	// the events that end it.
	DetailStatus = "status"
	DetailReason = "reason"
	// DetailExitCode is a shell step's exit status, on the event that
	// ends it (-1: its command did not start or was stopped).
	DetailExitCode = "exit_code"
)

// stepDetails says what a step that just ended took: its time, tokens
// and cost, the run's totals so far, and on failure where its output is.
func (r *run) stepDetails(f *frame, s *lang.Step, rec *StepRecord, failed bool) map[string]any {
	d := map[string]any{DetailDuration: rec.DurationS}
	if rec.Tokens > 0 {
		d[DetailTokens] = rec.Tokens
	}
	if rec.CostUSD != nil {
		d[DetailCost] = *rec.CostUSD
	}
	r.runTotals(d, DetailRunTokens, DetailRunCost)
	if _, shell := s.Action.(*lang.Shell); shell && rec.ExitCode != nil {
		d[DetailExitCode] = *rec.ExitCode
	}
	if failed {
		if a := r.attemptArtifacts(f, s, rec); len(a) > 0 {
			d[DetailArtifacts] = a
		}
	}
	return d
}

// runDetails are the details of the event that ends a run.
func (r *run) runDetails() map[string]any {
	m := r.st.Meta
	d := map[string]any{DetailStatus: m.Status, DetailDuration: r.elapsed().Seconds()}
	if m.Reason != "" {
		d[DetailReason] = r.redact.String(m.Reason)
	}
	r.runTotals(d, DetailTokens, DetailCost)
	return d
}

func (r *run) runTotals(d map[string]any, tokens, cost string) {
	d[DetailAgentCalls] = r.st.Metrics.AgentCalls
	if r.st.Metrics.TotalTokens > 0 {
		d[tokens] = r.st.Metrics.TotalTokens
	}
	if c := r.st.Metrics.TotalCostUSD; c != nil {
		d[cost] = *c
	}
}

// attemptArtifacts lists the artifacts of the step's last attempt: its
// command's output, named by its run, or its last agent call's files,
// named by the call.
func (r *run) attemptArtifacts(f *frame, s *lang.Step, rec *StepRecord) []string {
	if r.dir == nil {
		return nil
	}
	n := rec.Runs
	if _, ok := s.Action.(*lang.AgentCall); ok {
		n = rec.Calls
	}
	dir := filepath.Join(r.dir.path, "artifacts")
	seen := map[string]bool{}
	var out []string
	if n > 0 {
		base := artifactBase(f, s, n)
		matches, _ := filepath.Glob(filepath.Join(dir, globQuote(base)+".*"))
		for _, m := range matches {
			if filepath.Base(m) != base+filepath.Ext(m) {
				continue // another step's, whose name or key starts with base
			}
			if st, err := os.Stat(m); err == nil && st.Mode().IsRegular() && !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	sort.Strings(out)
	return out
}

var globMeta = regexp.MustCompile(`[*?\[\\]`)

func globQuote(s string) string { return globMeta.ReplaceAllString(s, `\$0`) }
