package playtest

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// Options configure Run.
type Options struct {
	// Workdir is the scratch directory the run uses as its project root;
	// give each test its own, since the run directory inside it is named
	// "test". Default: a new temporary directory, removed when the test
	// ends.
	Workdir string
	// Funcs are the real builtins that call steps without a mock reach.
	// Default: builtins.Funcs().
	Funcs builtins.Registry
	// NoExec runs no program: a shell step without a mock, or a git.*
	// call without one (the default Funcs' git is refused), fails, and
	// the test fails naming it, whatever it expects. For tests of
	// playbooks nobody has reviewed, such as a pull request's in CI.
	NoExec bool
}

// Result is how one test went.
type Result struct {
	Test *lang.Test
	// Mismatches say how the run differs from the test's expectations,
	// one readable line each ("visits.debug: want 3, got 2"); empty when
	// the test passed.
	Mismatches []string
	// What the run did.
	Status         string
	Recommendation string
	Reason         string
	Path           []string
	// Items are the nested steps each for_each item started, by key.
	Items map[string][]string
	// Agents are the agents the steps' last agent calls asked, by step.
	Agents   map[string]string
	Output   cty.Value
	Duration time.Duration
	// EmptyValues are the values the run's prompts rendered empty that
	// the prompts do not mark optional, each place once. They are not
	// mismatches: apl test reports them beside the result.
	EmptyValues []interp.EmptyValue
	// Branches are the IDs of the playbook's branches the run went
	// through (lang.Branch), for apl test --cover.
	Branches map[string]bool
	// Steps is the run's way through the graph, as its event log gives
	// it, for drawing the suite's coverage over the graph.
	Steps *interp.Path
}

// Passed reports whether the run met every expectation.
func (r *Result) Passed() bool { return len(r.Mismatches) == 0 }

// Run runs test t against pb (loaded from ref) and compares the run with
// t.Expect. An error means the test could not be set up; a run that went
// wrong is a failed Result.
func Run(ctx context.Context, pb *lang.Playbook, ref string, t *lang.Test, opts Options) (*Result, error) {
	start := time.Now()
	work := opts.Workdir
	if work == "" {
		dir, err := os.MkdirTemp("", "apl-test-*")
		if err != nil {
			return nil, fmt.Errorf("test %q: %w", t.Name, err)
		}
		defer os.RemoveAll(dir)
		work = dir
	}
	funcs := opts.Funcs
	var shell interp.ShellRunner = &builtins.Shell{Workdir: work, Policy: builtins.DefaultPolicy}
	refused := &refusals{}
	if opts.NoExec {
		shell = refusingShell{refused}
		if funcs == nil {
			funcs = builtins.NewFuncs(builtins.FuncOptions{Git: refusingGit{}})
		}
		funcs = refused.wrap(funcs)
	}
	if funcs == nil {
		funcs = builtins.Funcs()
	}
	res := &Result{Test: t, Path: []string{}, Branches: map[string]bool{}, Steps: &interp.Path{}}
	var empty interp.EmptyValueSet
	acts, mk := mocked(t.Mocks, interp.Actions{Shell: shell, Funcs: funcs})
	ropts := interp.Options{
		Workdir:    work,
		RunID:      "test",
		Inputs:     t.Inputs,
		Mode:       t.Mode,
		Shell:      acts.Shell,
		Drivers:    acts.Drivers,
		Funcs:      acts.Funcs,
		Playbooks:  acts.Playbooks,
		Asker:      mockAsker{mocks: newMocks(t.Mocks)},
		NoSync:     true,
		EmptyValue: empty.Add,
		Observer: interp.ObserverFunc(func(e interp.Event) {
			res.Steps.Event(e)
			if id := branchOf(e); id != "" {
				res.Branches[id] = true
			}
			if e.Type == interp.EventStepStarted {
				res.Path = append(res.Path, e.Step)
				if e.Item != "" {
					if res.Items == nil {
						res.Items = map[string][]string{}
					}
					res.Items[e.Item] = append(res.Items[e.Item], e.Step)
				}
			}
		}),
	}
	run, err := interp.Start(ctx, pb, ref, ropts)
	res.Duration = time.Since(start)
	res.EmptyValues = empty.List()
	if err != nil {
		res.Mismatches = append(refused.mismatches(), "run: "+err.Error())
		return res, nil
	}
	res.Status, res.Recommendation, res.Reason, res.Output = run.Status, run.Recommendation, run.Reason, run.Output
	res.Agents = mk.agents()
	res.Mismatches = append(refused.mismatches(), compare(t.Expect, res)...)
	return res, nil
}

// branchOf is the branch (lang.Branch) an event says the run went
// through, or "".
func branchOf(e interp.Event) string {
	rule, _ := e.Details["rule"].(string)
	switch e.Type {
	case interp.EventGateDecision:
		if rule != "" {
			return lang.RuleBranch(e.Step, rule)
		}
	case interp.EventCapExhausted:
		if rule != "" {
			return lang.ExhaustedBranch(e.Step, rule)
		}
	case interp.EventStepStarted:
		return lang.StepBranch(e.Step)
	case interp.EventItemCompleted:
		return lang.ItemBranch(e.Step, "completed")
	case interp.EventItemFailed:
		return lang.ItemBranch(e.Step, "failed")
	}
	return ""
}
