package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"
)

// Process is one command for a Runner to run.
type Process struct {
	Argv  []string
	Dir   string
	Env   []string  // the whole environment, as KEY=value
	Stdin io.Reader // nil gives the process an empty stdin
}

// ProcessResult is what a finished process left behind.
type ProcessResult struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
}

// Runner runs processes for the CLI drivers; tests and sandboxes can swap
// it. Run returns an error only when the process could not be started, broke
// its output cap, or was stopped because ctx ended; a non-zero exit is a
// result, not an error.
type Runner interface {
	Run(ctx context.Context, p Process) (ProcessResult, error)
}

// ExecRunner is the default Runner, on os/exec. Each process runs in its own
// process group, and when ctx ends the whole group is killed, so an agent's
// children (shells, tools, servers) die with it.
type ExecRunner struct {
	// MaxOutput caps stdout and stderr, each, in bytes (default 64 MiB).
	MaxOutput int64
	// WaitDelay is how long to wait for output pipes after the kill
	// (default 5s), in case a child left the group and holds them open.
	WaitDelay time.Duration
}

// Run starts p and waits for it.
func (r ExecRunner) Run(ctx context.Context, p Process) (ProcessResult, error) {
	if len(p.Argv) == 0 {
		return ProcessResult{}, errors.New("empty command")
	}
	limit := r.MaxOutput
	if limit <= 0 {
		limit = 64 << 20
	}
	cmd := exec.CommandContext(ctx, p.Argv[0], p.Argv[1:]...)
	cmd.Dir = p.Dir
	cmd.Env = p.Env
	cmd.Stdin = p.Stdin
	stdout := &capped{limit: limit}
	stderr := &capped{limit: limit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	ownProcessGroup(cmd)
	cmd.WaitDelay = r.WaitDelay
	if cmd.WaitDelay <= 0 {
		cmd.WaitDelay = 5 * time.Second
	}
	err := cmd.Run()
	res := ProcessResult{Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.Bytes()}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
		if res.ExitCode < 0 {
			// Killed by a signal nobody here sent.
			return res, fmt.Errorf("%s: %s", p.Argv[0], exit)
		}
	case err != nil:
		return res, err
	}
	if stdout.over || stderr.over {
		return res, fmt.Errorf("%s: output exceeded %d bytes", p.Argv[0], limit)
	}
	return res, nil
}

// capped is a buffer that keeps its first limit bytes and notes the rest.
type capped struct {
	buf   bytes.Buffer
	limit int64
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.limit - int64(c.buf.Len())
	switch {
	case room <= 0:
		c.over = true
	case int64(len(p)) > room:
		c.buf.Write(p[:room])
		c.over = true
	default:
		c.buf.Write(p)
	}
	// Claim the whole write: failing it would make the child die of
	// SIGPIPE before its exit status tells us anything.
	return len(p), nil
}
