//go:build !notemporal

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/temporal"
	"go.temporal.io/sdk/client"
)

// apl runs, show, logs and cancel with --engine temporal: the runs of a
// namespace on the cluster, as the local commands give a project's.

func (c *cancelCmd) Run(e *env) error {
	if c.Engine != engineTemporal {
		return exitWith(exitUsage, errors.New("apl cancel stops a run on Temporal (--engine temporal); a local run stops with Ctrl-C where it runs, and apl resume continues it"))
	}
	cl, err := dialTemporal(c.TemporalAddress, c.Namespace)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx := context.Background()
	switch st, err := knownRun(ctx, cl, c.temporalFlags, c.RunRef); {
	case err != nil:
		return err
	case st != "running":
		return exitWith(exitUsage, fmt.Errorf("run %s on %s has ended (its workflow is %s): there is nothing to stop", c.RunRef, c.where(), st))
	}
	if c.Terminate {
		err = cl.TerminateWorkflow(ctx, c.RunRef, "", c.Reason)
	} else {
		err = cl.CancelWorkflow(ctx, c.RunRef, "")
	}
	if err != nil {
		return temporalError(c.TemporalAddress, c.Namespace, err)
	}
	if c.Terminate {
		fmt.Fprintf(e.stderr, "run %s terminated: its workflow ended at once, without a result, and no on_failure or finally step ran; a worker still running one of its steps stops it at the step's next heartbeat\n", c.RunRef)
		return nil
	}
	fmt.Fprintf(e.stderr, "run %s: cancel requested; its steps under way stop and it ends interrupted (no on_failure or finally steps), as a local run stopped with Ctrl-C\n", c.RunRef)
	return c.waitEnd(ctx, e, cl)
}

// cancelWait is how long apl cancel waits for the run to end before it
// says what holds it.
var cancelWait = 15 * time.Second

// waitEnd waits for the cancelled run to end and says how it ended, or,
// when it does not end soon, what holds it: a run whose workers are all
// gone cannot stop its walk.
func (c *cancelCmd) waitEnd(ctx context.Context, e *env, cl client.Client) error {
	ctx, cancel := context.WithTimeout(ctx, cancelWait)
	defer cancel()
	var held []string
	for tick := 1; ctx.Err() == nil; tick++ {
		st, err := temporal.WorkflowStatus(ctx, cl, c.RunRef)
		if err == nil && st != "running" {
			if s, err := temporal.Show(ctx, cl, c.RunRef); err == nil {
				st = s.Status
			}
			fmt.Fprintf(e.stderr, "run %s ended %s\n", c.RunRef, st)
			return nil
		}
		if tick%10 == 0 {
			if held = temporal.Stalled(ctx, cl, c.RunRef); len(held) > 0 {
				break
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
	why := "it has not ended yet"
	if len(held) > 0 {
		why += ": " + strings.Join(held, "; ")
	}
	fmt.Fprintf(e.stderr, "run %s: %s; it ends once a worker takes the cancellation, or apl cancel %s --engine temporal --terminate ends it now\n", c.RunRef, why, shellQuote(c.RunRef))
	return nil
}

// temporalRunsList is apl runs --engine temporal: the namespace's runs,
// newest first, those of playbook alone when it is not "".
func temporalRunsList(e *env, f temporalFlags, playbook string, asJSON bool) error {
	cl, err := dialTemporal(f.TemporalAddress, f.Namespace)
	if err != nil {
		return err
	}
	defer cl.Close()
	all, err := temporal.List(context.Background(), cl, 1000)
	if err != nil {
		return temporalError(f.TemporalAddress, f.Namespace, err)
	}
	runs := []temporal.Summary{}
	for _, r := range all {
		if ofPlaybook(playbook, r.Name, r.Playbook) {
			runs = append(runs, r)
		}
	}
	if asJSON {
		return printJSON(e.stdout, runs)
	}
	if len(runs) == 0 {
		fmt.Fprintf(e.stderr, "apl: no runs on %s yet\n", f.where())
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tPLAYBOOK\tSTATUS\tSTARTED\tDURATION\tWORKER")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.RunID, cmp.Or(r.Name, r.Playbook), r.Status,
			r.StartedAt.Local().Format(time.DateTime), formatSeconds(r.DurationS), cmp.Or(r.Worker, "-"))
	}
	return tw.Flush()
}

// temporalShow is apl show --engine temporal: how a run on the cluster
// went, or goes, as apl show tells a local run. A run on Temporal keeps
// no state file; its steps are read from its events (runState), which a
// worker answers for (one walking the run, or any, replaying one that
// ended). When none answers, the status, path and output alone.
func temporalShow(e *env, f temporalFlags, id string, asJSON bool) error {
	cl, err := dialTemporal(f.TemporalAddress, f.Namespace)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx := context.Background()
	wst, err := knownRun(ctx, cl, f, id)
	if err != nil {
		return err
	}
	s, evs, qerr, err := readTemporalRun(ctx, cl, id, wst == "running", 0)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	// Why a run that goes on waits, if it does: for a worker of its
	// queue, or its home worker.
	var stalled []string
	if wst == "running" {
		stalled = temporal.Stalled(ctx, cl, id)
	}
	if qerr != nil {
		if asJSON {
			return printJSON(e.stdout, s)
		}
		fmt.Fprintf(e.stdout, "run %s · %s · %s (temporal, namespace %s)\n", s.RunID, s.Playbook, s.Status, f.Namespace)
		if s.Reason != "" {
			fmt.Fprintf(e.stdout, "reason: %s\n", s.Reason)
		}
		if s.Home != nil {
			fmt.Fprintf(e.stdout, "works in: %s\n", s.Home)
		}
		if len(s.Path) > 0 {
			fmt.Fprintln(e.stdout, "path:")
			for _, p := range s.Path {
				fmt.Fprintf(e.stdout, "  %s\n", p)
			}
		}
		if len(s.Output) > 0 && string(s.Output) != "{}" {
			fmt.Fprintf(e.stdout, "output: %s\n", s.Output)
		}
		for _, n := range stalled {
			fmt.Fprintf(e.stdout, "waits: %s\n", n)
		}
		fmt.Fprintf(e.stderr, "apl: its steps are not shown: no worker answered for the run\n")
		return nil
	}
	// Its artifacts stay on the worker (apl logs): an empty directory.
	empty, err := os.MkdirTemp("", "apl-show-*")
	if err != nil {
		return exitWith(exitInternal, err)
	}
	defer os.RemoveAll(empty)
	st := runState(s, evs)
	// Each main step's output, as the run holds it (not in its events).
	if outs, err := temporal.StepOutputs(ctx, cl, id); err == nil {
		for name, out := range outs {
			if rec := st.Steps[name]; rec != nil {
				rec.Output = out
			}
		}
	}
	rs := temporalRunShow{runShow: showRun(empty, st), Home: s.Home}
	// Its status is the cluster's: no process holds a run directory here.
	rs.Status, rs.Reason = s.Status, s.Reason
	rs.Dir = "none here: temporal workflow " + id + " (namespace " + f.Namespace + ")"
	if asJSON {
		return printJSON(e.stdout, rs)
	}
	writeShow(e.stdout, rs.runShow)
	if s.Home != nil {
		fmt.Fprintf(e.stdout, "\nworks in: %s\n", s.Home)
	}
	for _, n := range stalled {
		fmt.Fprintf(e.stdout, "waits: %s\n", n)
	}
	return nil
}

// knownRun is the status of run id's workflow on the cluster f names;
// a run the namespace does not have is a usage error that says where it
// was looked for.
func knownRun(ctx context.Context, cl client.Client, f temporalFlags, id string) (string, error) {
	st, err := temporal.WorkflowStatus(ctx, cl, id)
	switch {
	case err != nil:
		return "", temporalError(f.TemporalAddress, f.Namespace, err)
	case st == "":
		return "", exitWith(exitUsage, fmt.Errorf("no run %q on %s", id, f.where()))
	}
	return st, nil
}

// temporalRunShow is apl show --json of a run on Temporal: a local run's
// account, and the worker whose checkout it works in.
type temporalRunShow struct {
	runShow
	Home *temporal.Home `json:"home,omitempty"`
}

// runState is a run's state as its events tell it, for apl show and apl
// logs: each step's and item's status, attempts, time, tokens, cost,
// error and skip reason (their outputs are not in the events: apl show
// asks the run for them), the run's metrics and output.
func runState(s temporal.Shown, evs []interp.Event) *interp.State {
	st := &interp.State{Meta: interp.Meta{RunID: s.RunID, PlaybookRef: s.Playbook, Status: s.Status, Reason: s.Reason},
		Steps: map[string]*interp.StepRecord{}, Items: map[string]map[string]*interp.ItemRecord{}, Events: evs, Output: s.Output}
	recOf := func(ev interp.Event) *interp.StepRecord {
		if rec := st.Steps[ev.Step]; rec != nil {
			return rec
		}
		rec := &interp.StepRecord{Status: interp.StepPending}
		st.Steps[ev.Step] = rec
		return rec
	}
	for _, ev := range evs {
		num := func(k string) float64 {
			// Counts come as ints (the client puts their types back),
			// the rest as float64s.
			switch v := ev.Details[k].(type) {
			case int:
				return float64(v)
			case float64:
				return v
			}
			return 0
		}
		switch ev.Type {
		case interp.EventRunStarted:
			if st.Meta.StartedAt.IsZero() {
				st.Meta.StartedAt = ev.Time
			}
			// "run ID of NAME ..."
			if rest, ok := strings.CutPrefix(ev.Message, "run "+s.RunID+" of "); ok && rest != "" {
				st.Meta.Playbook = strings.Fields(rest)[0]
			}
		case interp.EventRunCompleted, interp.EventRunFailed, interp.EventRunInterrupted:
			st.Metrics.DurationS = num(interp.DetailDuration)
			st.Metrics.TotalTokens = int(num(interp.DetailTokens))
			st.Metrics.AgentCalls = int(num(interp.DetailAgentCalls))
			if c, ok := ev.Details[interp.DetailCost].(float64); ok {
				st.Metrics.TotalCostUSD = &c
			}
		case interp.EventItemStarted, interp.EventItemCompleted, interp.EventItemFailed, interp.EventItemBlocked:
			items := st.Items[ev.Step]
			if items == nil {
				items = map[string]*interp.ItemRecord{}
				st.Items[ev.Step] = items
			}
			it := items[ev.Item]
			if it == nil {
				it = &interp.ItemRecord{Key: ev.Item, Steps: map[string]*interp.StepRecord{}}
				items[ev.Item] = it
			}
			it.Status = map[string]string{interp.EventItemStarted: interp.StepRunning, interp.EventItemCompleted: interp.StepCompleted,
				interp.EventItemFailed: interp.StepFailed, interp.EventItemBlocked: "blocked"}[ev.Type]
			if st, ok := strings.CutPrefix(ev.Message, "finished: "); ok && ev.Type == interp.EventItemCompleted {
				// An item that ended with a finish status has it, as
				// its local record does.
				it.Status = st
			}
		case interp.EventStepStarted, interp.EventStepCompleted, interp.EventStepFailed, interp.EventStepSkipped, interp.EventStepReused:
			if ev.Item != "" || strings.Contains(ev.Step, "/") {
				continue
			}
			rec := recOf(ev)
			switch ev.Type {
			case interp.EventStepStarted:
				rec.Status, rec.Attempts = interp.StepRunning, max(rec.Attempts+1, ev.Attempt)
			case interp.EventStepCompleted, interp.EventStepReused:
				rec.Status = interp.StepCompleted
			case interp.EventStepFailed:
				rec.Status, rec.Error = interp.StepFailed, ev.Message
			case interp.EventStepSkipped:
				rec.Status, rec.SkipReason = interp.StepSkipped, ev.Message
			}
			if ev.Type == interp.EventStepCompleted || ev.Type == interp.EventStepFailed {
				rec.DurationS += num(interp.DetailDuration)
				rec.Tokens += int(num(interp.DetailTokens))
				if c, ok := ev.Details[interp.DetailCost].(float64); ok {
					rec.CostUSD = &c
				}
				if _, ok := ev.Details[interp.DetailExitCode]; ok {
					code := int(num(interp.DetailExitCode))
					rec.ExitCode = &code
				}
			}
		}
	}
	return st
}

// temporalLogs is apl logs --engine temporal: what the run's steps
// printed and its agents answered, from the run directory its worker
// keeps, as for a local run.
func (c *logsCmd) temporalLogs(e *env) error {
	cl, err := dialTemporal(c.TemporalAddress, c.Namespace)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx := context.Background()
	if _, err := knownRun(ctx, cl, c.temporalFlags, c.RunRef); err != nil {
		return err
	}
	s, err := temporal.Show(ctx, cl, c.RunRef)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	evs, err := temporal.AllEvents(ctx, cl, c.RunRef)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("%w: no worker answered for it", err))
	}
	dir, err := os.MkdirTemp("", "apl-logs-*")
	if err != nil {
		return exitWith(exitInternal, err)
	}
	defer os.RemoveAll(dir)
	cut, err := temporal.FetchRunDir(ctx, cl, c.RunRef, dir, true)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	if len(cut) > 0 {
		fmt.Fprintf(e.stderr, "apl: %d artifacts are left out (over 3 MB in all): %s\n", len(cut), strings.Join(cut, ", "))
	}
	// An artifact is where the worker keeps it, in the run's directory.
	return c.printLogs(e, dir, runState(s, evs), func(p string) string {
		if rel, err := filepath.Rel(dir, p); err == nil {
			return filepath.ToSlash(rel)
		}
		return p
	})
}

// lookupTemporal is the status of run id on the cluster f names, "" when
// the cluster has no such run; it gives up after a few seconds.
func lookupTemporal(f temporalFlags, id string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl, err := client.DialContext(ctx, client.Options{HostPort: f.TemporalAddress, Namespace: f.Namespace, Logger: quietLogger()})
	if err != nil {
		return "", err
	}
	defer cl.Close()
	return temporal.WorkflowStatus(ctx, cl, id)
}
