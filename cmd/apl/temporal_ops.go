//go:build !notemporal

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

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
	where := fmt.Sprintf("Temporal at %s (namespace %s)", c.TemporalAddress, c.Namespace)
	switch st, err := temporal.WorkflowStatus(ctx, cl, c.RunRef); {
	case err != nil:
		return temporalError(c.TemporalAddress, c.Namespace, err)
	case st == "":
		return exitWith(exitUsage, fmt.Errorf("no run %q on %s", c.RunRef, where))
	case st != "running":
		return exitWith(exitUsage, fmt.Errorf("run %s on %s has ended (its workflow is %s): there is nothing to stop", c.RunRef, where, st))
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
		fmt.Fprintf(e.stderr, "run %s terminated: its workflow ended at once; steps under way were not stopped, and no on_failure or finally step ran\n", c.RunRef)
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
		fmt.Fprintf(e.stderr, "apl: no runs on Temporal at %s (namespace %s) yet\n", f.TemporalAddress, f.Namespace)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tPLAYBOOK\tSTATUS\tSTARTED\tWORKER")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.RunID, cmp.Or(r.Name, r.Playbook), r.Status,
			r.StartedAt.Local().Format(time.DateTime), cmp.Or(r.Worker, "-"))
	}
	return tw.Flush()
}

// temporalShow is apl show --engine temporal: how a run on the cluster
// went, or goes.
func temporalShow(e *env, f temporalFlags, id string, asJSON bool) error {
	cl, err := dialTemporal(f.TemporalAddress, f.Namespace)
	if err != nil {
		return err
	}
	defer cl.Close()
	s, err := temporal.Show(context.Background(), cl, id)
	if err != nil {
		return exitWith(exitUsage, err)
	}
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
	fmt.Fprintln(e.stdout, "path:")
	for _, p := range s.Path {
		fmt.Fprintf(e.stdout, "  %s\n", p)
	}
	if len(s.Output) > 0 && string(s.Output) != "{}" {
		fmt.Fprintf(e.stdout, "output: %s\n", s.Output)
	}
	return nil
}

// temporalLogs is apl logs --engine temporal: the run's events, as apl
// run printed them (the workflow keeps the last ones).
func temporalLogs(e *env, f temporalFlags, id string) error {
	cl, err := dialTemporal(f.TemporalAddress, f.Namespace)
	if err != nil {
		return err
	}
	defer cl.Close()
	in, err := temporal.StartedWith(context.Background(), cl, id)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	pb, diags := e.loader.Load(in.Ref)
	if len(in.Sources) > 0 {
		pb, diags = e.loader.LoadRef(in.Ref, in.Sources, in.Dir)
	}
	if diags.HasErrors() {
		return exitWith(exitUsage, fmt.Errorf("run %s: its playbook %s: %s", id, in.Ref, countDiags(diags)))
	}
	prog := newProgress(e.stdout, progressOptions{}, pb)
	defer prog.close()
	evs, err := temporal.AllEvents(context.Background(), cl, id)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	for _, ev := range evs {
		prog.Event(ev)
	}
	return nil
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
