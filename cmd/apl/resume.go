package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/lang/diff"
)

type resumeCmd struct {
	RunRef         string   `arg:"" name:"run" optional:"" help:"The run to continue: a run id, a run directory, or latest (default)."`
	Playbook       string   `help:"Load the playbook from here instead of where the run found it." placeholder:"PATH"`
	Force          bool     `help:"Resume even though the playbook changed since the run began."`
	JSON           bool     `help:"Print only the output object, as JSON, on stdout."`
	AgentCmd       string   `help:"Send every agent step to this command (default: the one the run started with)." env:"APL_AGENT_CMD" placeholder:"CMD"`
	RunsDir        string   `help:"Where run directories are (default: .apl/runs)." placeholder:"DIR"`
	Answer         []string `help:"Answer a waiting decision: STEP=CHOICE (STEP[ITEM]=CHOICE inside a for_each), or STEP=TEXT for a typed answer. Repeatable." placeholder:"STEP=CHOICE" sep:"none"`
	From           string   `help:"Run again from this step (completed steps before it are reused)." placeholder:"STEP"`
	NonInteractive bool     `help:"Never prompt: an unanswered ask step pauses the run again (exit 4)."`

	timeoutFlags  `embed:""`
	temporalFlags `embed:""`

	progressOptions `embed:""`
	cassetteFlags   `embed:""`
}

func (c *resumeCmd) Run(e *env) error {
	if c.Engine == engineTemporal {
		if c.timeoutFlags.set() {
			return exitWith(exitUsage, errors.New("--timeout and --agent-timeout go with the local engine; on Temporal, set the steps' timeout attributes"))
		}
		return c.resumeTemporal(e)
	}
	runsDir := c.RunsDir
	if runsDir == "" {
		runsDir = interp.RunsDir(".")
	}
	dir, err := interp.ResolveRun(runsDir, c.RunRef)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	st, _, err := interp.ReadRun(dir)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	ref := c.Playbook
	if ref == "" {
		ref = st.Meta.PlaybookRef
	}
	pb, _, err := e.load(ref)
	if err != nil {
		return err
	}
	if err := checkFrom(pb, c.From); err != nil {
		return exitWith(exitUsage, err)
	}
	timeouts, agentTimeout, err := c.limits(pb)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	agentCmd, err := splitCommand(c.AgentCmd)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("--agent-cmd: %w", err))
	}
	if len(agentCmd) == 0 {
		// The run goes on with the agent command it started with.
		agentCmd = st.Meta.AgentCommand
	}
	if err := preflight(pb, agentCmd, st.Meta.Workdir, c.cassetteFlags); err != nil {
		return exitWith(exitUsage, err)
	}
	drivers, err := runDrivers(pb, agentCmd, c.cassetteFlags, false)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	answers, err := parseAnswers(c.Answer)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	prog := newProgress(e.stderr, c.progressOptions, pb)
	ropts := interp.Options{
		RunsDir: runsDir, AgentCommand: agentCmd, Drivers: drivers, Force: c.Force,
		Timeouts: timeouts, AgentTimeout: agentTimeout,
		Observer: prog,
		Answers:  answers, From: c.From, Asker: asker(e.stderr, c.NonInteractive, prog),
	}
	if c.Verbose && !c.Quiet {
		ropts.Output = prog.output
	}
	res, err := interp.Resume(ctx, pb, dir, ropts)
	prog.close()
	if err != nil && res == nil {
		return exitWith(exitUsage, resumeError(err, dir, pb))
	}
	return report(e, pb, res, err, c.JSON)
}

// resumeError puts interp's refusal to resume into words that name the
// flags that get past it.
func resumeError(err error, dir string, pb *lang.Playbook) error {
	var (
		ch *interp.ChangedError
		bo *interp.BreakerOpenError
		we *interp.WaitingError
		ns *interp.NoStepError
	)
	switch {
	case errors.As(err, &ch):
		// Say what changed, from the sources the run recorded; runs of
		// older apls recorded none, and only the hashes are known.
		if was, rerr := interp.RunSources(dir); rerr == nil {
			if changes := diff.SourceChanges(was, pb.Sources); changes != "" {
				return fmt.Errorf("the playbook changed since the run began:\n%s"+
					"resume with --force to run the new version", indent(changes))
			}
		}
		return fmt.Errorf("%v; resume with --force to run the new version", err)
	case errors.As(err, &bo):
		return fmt.Errorf("%v; resume after that, or with --force", err)
	case errors.As(err, &we) && we.Given != "":
		return fmt.Errorf("--answer %s=%s: %v", we.Key, we.Given, err)
	case errors.As(err, &we):
		return fmt.Errorf("%v; answer with --answer %s=%s", err, we.Key, answerPlaceholder(&we.Waiting))
	case errors.As(err, &ns):
		return fmt.Errorf("--from %s: %v", ns.Step, err)
	}
	return err
}

// indent indents every line of s by two spaces.
func indent(s string) string {
	var sb strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			sb.WriteString("  " + l)
		}
	}
	return sb.String()
}

// checkFrom checks --from before the run is touched: it names a main step
// (not one inside a for_each or on_failure). interp checks it too; here the
// message suggests the step meant.
func checkFrom(pb *lang.Playbook, from string) error {
	if from == "" {
		return nil
	}
	if s := pb.Step(from); s != nil && s.Parent == nil && !s.OnFailure {
		return nil
	}
	names := make([]string, len(pb.Steps))
	for i, s := range pb.Steps {
		names[i] = s.Name
	}
	hint := ""
	if s := lang.Suggest(from, names); s != "" {
		hint = fmt.Sprintf(" (did you mean --from %s?)", s)
	}
	return fmt.Errorf("--from %s: playbook %q has no main step of that name%s; its main steps are %s", from, pb.Name, hint, strings.Join(names, ", "))
}
