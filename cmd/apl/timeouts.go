package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apl-lang/apl/lang"
)

// timeoutFlags raise or lower steps' time limits for one run without a
// fork: a real agent may need longer than a playbook allows. A resumed run
// keeps those it started with; resume's own win.
type timeoutFlags struct {
	Timeout      []string `sep:"none" placeholder:"STEP=DURATION" help:"Give step STEP this time limit (30m, 1h30m) over its timeout attribute, in this run and the playbooks it runs. Repeatable."`
	AgentTimeout string   `placeholder:"DURATION" help:"Give every agent step this time limit (30m), but those --timeout names."`
}

func (f timeoutFlags) set() bool { return len(f.Timeout) > 0 || f.AgentTimeout != "" }

// limits reads the flags against pb: each STEP must be a step of pb, or of
// a playbook it runs.
func (f timeoutFlags) limits(pb *lang.Playbook) (map[string]time.Duration, time.Duration, error) {
	var steps map[string]time.Duration
	names := stepNames(pb, nil)
	for _, kv := range f.Timeout {
		step, val, ok := strings.Cut(kv, "=")
		if !ok || step == "" {
			return nil, 0, fmt.Errorf("--timeout takes STEP=DURATION (--timeout implement=30m), not %q", kv)
		}
		if !slices.Contains(names, step) {
			msg := fmt.Sprintf("--timeout %s: playbook %q has no step %q", kv, pb.Name, step)
			if s := lang.Suggest(step, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", s)
			}
			return nil, 0, fmt.Errorf("%s", msg)
		}
		d, err := positiveDuration(val)
		if err != nil {
			return nil, 0, fmt.Errorf("--timeout %s: %w", kv, err)
		}
		if steps == nil {
			steps = map[string]time.Duration{}
		}
		steps[step] = d
	}
	var agentLimit time.Duration
	if f.AgentTimeout != "" {
		d, err := positiveDuration(f.AgentTimeout)
		if err != nil {
			return nil, 0, fmt.Errorf("--agent-timeout %s: %w", f.AgentTimeout, err)
		}
		agentLimit = d
	}
	return steps, agentLimit, nil
}

func positiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive duration such as 30m or 1h30m, not %q", s)
	}
	return d, nil
}

// stepNames lists the names of pb's steps at every depth, and of the
// steps of the playbooks it runs.
func stepNames(pb *lang.Playbook, seen []*lang.Playbook) []string {
	if slices.Contains(seen, pb) {
		return nil
	}
	seen = append(seen, pb)
	var out []string
	for _, s := range pb.AllSteps() {
		if !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
		if sub, ok := s.Action.(*lang.SubPlaybook); ok && sub.Playbook != nil {
			for _, n := range stepNames(sub.Playbook, seen) {
				if !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	return out
}
