package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/apl-lang/apl/builtins/internal/proc"
)

// Process is one command for a Runner to run.
type Process struct {
	Argv  []string
	Dir   string
	Env   []string  // the whole environment, as KEY=value
	Stdin io.Reader // nil gives the process an empty stdin
	// Started, when set, is told the process id (and so its process
	// group's) as soon as it runs.
	Started func(pid int)
	// Watch, when set, is also given stdout as the process prints it (a
	// driver reading progress); its writes must not fail. A Runner may
	// ignore it.
	Watch io.Writer
	// Stdout, when set, is given stdout instead of ProcessResult.Stdout
	// (up to the output cap); its writes may fail, which the Runner
	// reports after the process ends. A Runner may ignore it and return
	// stdout in the result as usual.
	Stdout io.Writer
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
// process group. When ctx ends the whole group is killed, so an agent's
// children (shells, tools, servers) die with it; and when the process
// exits, whatever it left running in its group is killed too, so a
// background child that still holds stdout neither holds up the call nor
// outlives it.
type ExecRunner struct {
	// MaxOutput caps stdout and stderr, each, in bytes (default 64 MiB).
	MaxOutput int64
	// WaitDelay is how long to wait for output pipes after the process
	// exited and its group was killed (default 5s), in case a child left
	// the group (setsid) and holds them open; then they are closed.
	WaitDelay time.Duration
}

// Run starts p and waits for it.
func (r ExecRunner) Run(ctx context.Context, p Process) (ProcessResult, error) {
	if len(p.Argv) == 0 {
		return ProcessResult{}, errors.New("empty command")
	}
	if err := ctx.Err(); err != nil {
		return ProcessResult{}, err
	}
	limit := r.MaxOutput
	if limit <= 0 {
		limit = 64 << 20
	}
	grace := r.WaitDelay
	if grace <= 0 {
		grace = 5 * time.Second
	}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Dir = p.Dir
	cmd.Env = p.Env
	ownProcessGroup(cmd)
	stdout := &capped{limit: limit}
	stderr := &capped{limit: limit}
	var sink *cappedWriter
	var out io.Writer = stdout
	if p.Stdout != nil {
		sink = &cappedWriter{w: p.Stdout, limit: limit}
		out = sink
	}
	// The pipes are made here rather than by exec so that Wait returns as
	// soon as the process exits: exec would wait for every descendant that
	// holds them, and only then could the leftovers be killed.
	pp, err := proc.Open(cmd, p.Stdin != nil)
	if err != nil {
		return ProcessResult{}, err
	}
	if err := cmd.Start(); err != nil {
		pp.CloseAll()
		return ProcessResult{}, err
	}
	if p.Started != nil {
		p.Started(cmd.Process.Pid)
	}
	pp.CloseChildEnds()
	var readers sync.WaitGroup
	if p.Watch != nil {
		out = io.MultiWriter(out, p.Watch)
	}
	if out == sink {
		readers.Go(func() { sink.readFrom(pp.OutR) })
	} else {
		readers.Go(func() { io.Copy(out, pp.OutR) })
	}
	readers.Go(func() { io.Copy(stderr, pp.ErrR) })
	if pp.InW != nil {
		go func() {
			io.Copy(pp.InW, p.Stdin) // EPIPE just means the process did not read it all
			pp.InW.Close()
		}()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		killGroup(cmd)
		err = <-done
	}
	killGroup(cmd) // the leftovers; usually there are none
	pp.Drain(readers.Wait, grace)

	res := ProcessResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
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
	if stdout.over || stderr.over || sink != nil && sink.over {
		return res, fmt.Errorf("%s: output exceeded %d bytes", p.Argv[0], limit)
	}
	if sink != nil && sink.err != nil {
		return res, fmt.Errorf("%s: writing its output: %w", p.Argv[0], sink.err)
	}
	return res, nil
}

// cappedWriter passes its first limit bytes to w and notes the rest, and
// the first error of w. Like capped, it claims every write.
type cappedWriter struct {
	w     io.Writer
	n     int64
	limit int64
	over  bool
	err   error
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	n := len(p)
	if room := c.limit - c.n; int64(len(p)) > room {
		p = p[:max(room, 0)]
		c.over = true
	}
	if c.err == nil && len(p) > 0 {
		var k int
		k, c.err = c.w.Write(p)
		c.n += int64(k)
	}
	return n, nil
}

// readFrom copies the pipe src into c as Write would, but moves the
// bytes straight from the pipe into c's file where it can (spliceFrom).
func (c *cappedWriter) readFrom(src *os.File) {
	if f, ok := c.w.(*os.File); ok {
		n, spliced, err := spliceFrom(f, src, c.limit)
		c.n += n
		if spliced {
			if err != nil && c.err == nil {
				c.err = err
			}
			if err == nil && c.n < c.limit {
				return // EOF
			}
			// At the cap, or the file failed: the rest is read and
			// dropped, as Write does, so that the process is not left
			// blocked on a full pipe.
		}
	}
	io.Copy(c, src)
}

// capped is a buffer that keeps its first limit bytes and notes the rest.
// It keeps what it is given in chunks and joins them once, at the end: an
// answer of tens of megabytes is copied once, not again at every doubling
// of one growing buffer.
type capped struct {
	chunks [][]byte
	n      int64
	limit  int64
	over   bool
}

func (c *capped) Write(p []byte) (int, error) {
	n := len(p)
	if room := c.limit - c.n; int64(len(p)) > room {
		p = p[:max(room, 0)]
		c.over = true
	}
	for len(p) > 0 {
		last := len(c.chunks) - 1
		if last < 0 || len(c.chunks[last]) == cap(c.chunks[last]) {
			// Chunks start small (most output is) and double up to 4 MiB.
			size := 4 << 10
			if last >= 0 {
				size = min(2*cap(c.chunks[last]), 4<<20)
			}
			c.chunks = append(c.chunks, make([]byte, 0, size))
			last++
		}
		k := copy(c.chunks[last][len(c.chunks[last]):cap(c.chunks[last])], p)
		c.chunks[last] = c.chunks[last][:len(c.chunks[last])+k]
		c.n += int64(k)
		p = p[k:]
	}
	// Claim the whole write: failing it would make the child die of
	// SIGPIPE before its exit status tells us anything.
	return n, nil
}

// Bytes returns what was kept, in one slice.
func (c *capped) Bytes() []byte {
	switch len(c.chunks) {
	case 0:
		return nil
	case 1:
		return c.chunks[0]
	}
	out := make([]byte, 0, c.n)
	for _, ch := range c.chunks {
		out = append(out, ch...)
	}
	return out
}
