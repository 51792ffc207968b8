package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/apl-lang/apl/interp"
)

type resumeCmd struct {
	RunRef         string   `arg:"" name:"run" optional:"" help:"The run to continue: a run id, a run directory, or latest (default)."`
	Playbook       string   `help:"Load the playbook from here instead of where the run found it." placeholder:"PATH"`
	Force          bool     `help:"Resume even though the playbook changed since the run began."`
	JSON           bool     `help:"Print only the output object, as JSON, on stdout."`
	Quiet          bool     `short:"q" help:"No progress lines on stderr."`
	AgentCmd       string   `help:"Send every agent step to this command (default: the one the run started with)." env:"APL_AGENT_CMD" placeholder:"CMD"`
	RunsDir        string   `help:"Where run directories are (default: .apl/runs)." placeholder:"DIR"`
	Answer         []string `help:"Answer a waiting decision: STEP=CHOICE (STEP[ITEM]=CHOICE inside a for_each). Repeatable." placeholder:"STEP=CHOICE"`
	From           string   `help:"Run again from this step (completed steps before it are reused)." placeholder:"STEP"`
	NonInteractive bool     `help:"Never prompt: an unanswered ask step pauses the run again (exit 4)."`

	cassetteFlags `embed:""`
}

func (c *resumeCmd) Run(e *env) error {
	runsDir := c.RunsDir
	if runsDir == "" {
		runsDir = filepath.Join(".apl", "runs")
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
	agentCmd, err := splitCommand(c.AgentCmd)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("--agent-cmd: %w", err))
	}
	if len(agentCmd) == 0 {
		// The run goes on with the agent command it started with.
		agentCmd = st.Meta.AgentCommand
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
	res, err := interp.Resume(ctx, pb, dir, interp.Options{
		RunsDir: runsDir, AgentCommand: agentCmd, Drivers: drivers, Force: c.Force,
		Observer: newProgress(e.stderr, c.Quiet, pb),
		Answers:  answers, From: c.From, Asker: asker(e.stderr, c.NonInteractive),
	})
	if err != nil && res == nil && !isInputErr(err) {
		return exitWith(exitUsage, err)
	}
	return report(e, pb, res, err, c.JSON)
}
