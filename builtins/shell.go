package builtins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/apl-lang/apl/builtins/internal/proc"

	"github.com/zclconf/go-cty/cty"
)

// Defaults for a ShellSpec or Shell field left zero. The timeout is the
// protocols' "60 seconds max per command".
const (
	DefaultTimeout   = 60 * time.Second
	DefaultMaxOutput = 1 << 20
	DefaultKillGrace = 2 * time.Second
)

// ErrTimeout is wrapped by the error Run returns when a command outlives its
// timeout, so callers can tell "too slow" from "failed" with errors.Is.
var ErrTimeout = errors.New("command timed out")

// ShellSpec describes one command for Shell.Run: what the interpreter has
// after evaluating a `shell` step's attributes.
type ShellSpec struct {
	// Step names the playbook step that runs the command; it only labels
	// the call (for fakes, logs and errors).
	Step string
	// Command is an argv run without a shell, so no value in it is ever
	// interpreted. Exactly one of Command and Script is set.
	Command []string
	// Script is run with `bash -c`. Nothing like -e or -o pipefail is
	// implied: the script says what it wants. Values interpolated into it
	// must have been added with Script.Value, which quotes each for the
	// place it lands in.
	Script string
	// Dir is the working directory, relative to Shell.Workdir or absolute;
	// either way it must lie inside Shell.Workdir.
	Dir string
	// Env holds extra KEY=VALUE pairs; they override the inherited
	// environment, which a Shell reads once, when it first starts a
	// command (on Linux; elsewhere at every start).
	Env []string
	// Stdin is fed to the command; empty means it reads /dev/null.
	Stdin string
	// Timeout bounds the run; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxOutput is how many bytes of each stream are kept; zero means
	// DefaultMaxOutput. The rest is read and dropped so the command never
	// blocks on a full pipe.
	MaxOutput int
	// Parse says how ShellResult.Output is derived from stdout: "" or
	// "text" (the string), "lines" (a list of the non-blank lines) or
	// "json" (any JSON value, see JSONToCty).
	Parse string
	// Started, when set, is told the command's process id as soon as it
	// runs; the command leads its own process group, so the id is the
	// group's too. A caller records it, so that after the caller is killed
	// whoever resumes its work can stop what it left running.
	Started func(pid int)
	// Live, when set, is called with each line the command prints, as it
	// prints it, without its newline (apl run --verbose); stderr tells
	// the stream. The two streams may call it from different goroutines
	// (elsewhere than Linux, where one goroutine reads both). It sees all
	// the output, MaxOutput or not.
	Live func(stderr bool, line string)
}

// ShellResult is what a command did. A non-zero exit is a result, not an
// error: verification steps exist to look at failing commands.
type ShellResult struct {
	// ExitCode is the exit status, or -1 if a signal ended the command or
	// it never ran.
	ExitCode int
	// Stdout and Stderr hold the first MaxOutput bytes of each stream,
	// never ending in a partial UTF-8 sequence.
	Stdout, Stderr string
	// StdoutTruncated and StderrTruncated report that a stream was longer
	// than MaxOutput, so a caller never mistakes a prefix for the whole.
	StdoutTruncated bool
	StderrTruncated bool
	// Duration is the wall time from start until the command and its
	// group were gone.
	Duration time.Duration
	// TimedOut is set when the timeout, not the command, ended the run.
	TimedOut bool
	// Output is stdout parsed as ShellSpec.Parse asks; a null of dynamic
	// type when the run was cut short or parsing failed.
	Output cty.Value
}

// Shell runs commands confined to a project directory. The zero Policy
// blocks nothing; use DefaultPolicy for the protocols' rules.
type Shell struct {
	// Workdir is the project root: commands run there by default and a
	// ShellSpec.Dir outside it is refused.
	Workdir string
	// Policy is checked before anything starts.
	Policy Policy
	// KillGrace is how long a stopped command gets between SIGTERM and
	// SIGKILL, and how long its output pipes are drained after it exits
	// before they are closed; zero means DefaultKillGrace.
	KillGrace time.Duration

	root struct {
		once sync.Once
		dir  string
		err  error
	}
	// env is the environment a command inherits, read and de-duplicated
	// when the Shell first starts one (execute, on Linux), rather than
	// by os/exec at every start.
	env struct {
		once sync.Once
		base []string
	}
	// usePipes makes Linux run commands as elsewhere (executePipes), for
	// tests that check both ways agree.
	usePipes bool
}

// Run runs spec and waits for it. The command gets its own process group;
// a timeout or a cancelled ctx sends SIGTERM to the whole group and SIGKILL
// after KillGrace, and when the command ends, anything it left running in
// that group is killed too, so no step leaks background processes or keeps
// its pipes open. Errors are reserved for refusals (*PolicyError, a Dir
// outside Workdir, a bad spec), failures to start, a timeout (wrapping
// ErrTimeout), cancellation (wrapping ctx.Err()) and output that does not
// parse; in the last three the returned result is still filled in.
func (s *Shell) Run(ctx context.Context, spec ShellSpec) (ShellResult, error) {
	res := ShellResult{ExitCode: -1, Output: cty.NullVal(cty.DynamicPseudoType)}
	argv, err := spec.argv()
	if err != nil {
		return res, err
	}
	if err := spec.checkPolicy(s.Policy); err != nil {
		return res, err
	}
	if err := spec.check(); err != nil {
		return res, err
	}
	dir, err := s.dir(spec.Dir)
	if err != nil {
		return res, fmt.Errorf("shell: dir: %w", err)
	}

	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("shell: command not started: %w", err)
	}

	if err := s.execute(ctx, spec, argv, dir, &res); err != nil {
		return res, err
	}
	out, err := parseOutput(spec.Parse, res.Stdout, res.StdoutTruncated)
	if err != nil {
		return res, err
	}
	res.Output = out
	return res, nil
}

// executePipes is execute with os/exec, a goroutine per stream, one
// waiting for the command and a timer: where the system offers no
// pidfd, and the way execute's own loop is checked against.
func (s *Shell) executePipes(ctx context.Context, spec ShellSpec, argv []string, dir string, res *ShellResult) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p, err := proc.Open(cmd, spec.Stdin != "")
	if err != nil {
		return fmt.Errorf("shell: %w", err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		p.CloseAll()
		return fmt.Errorf("shell: start %s: %w", argv[0], err)
	}
	p.CloseChildEnds()
	if spec.Started != nil {
		spec.Started(cmd.Process.Pid)
	}

	stdout := &capture{max: orDefault(spec.MaxOutput, DefaultMaxOutput)}
	stderr := &capture{max: stdout.max}
	// Each reader reports on readers when its pipe reaches EOF.
	readers := make(chan struct{}, 2)
	go func() { stdout.ReadFrom(spec.reader(p.OutR, false)); readers <- struct{}{} }()
	go func() { stderr.ReadFrom(spec.reader(p.ErrR, true)); readers <- struct{}{} }()
	if p.InW != nil {
		go func() {
			io.WriteString(p.InW, spec.Stdin) // EPIPE just means the command did not read it all
			p.InW.Close()
		}()
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	timeout := orDefault(spec.Timeout, DefaultTimeout)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr, stopped error
	select {
	case waitErr = <-done:
	case <-timer.C:
		stopped = fmt.Errorf("shell: %w after %s", ErrTimeout, timeout)
		waitErr = s.stop(cmd.Process.Pid, done)
	case <-ctx.Done():
		stopped = fmt.Errorf("shell: command stopped: %w", ctx.Err())
		waitErr = s.stop(cmd.Process.Pid, done)
	}
	// Reap whatever the command left behind in its group; ESRCH (nothing
	// left) is the usual case.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	p.Drain(func() { <-readers; <-readers }, s.grace())

	res.Duration = time.Since(start)
	res.ExitCode = cmd.ProcessState.ExitCode()
	res.Stdout, res.StdoutTruncated = stdout.String()
	res.Stderr, res.StderrTruncated = stderr.String()
	res.TimedOut = errors.Is(stopped, ErrTimeout)
	if stopped != nil {
		return stopped
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return fmt.Errorf("shell: wait: %w", waitErr)
	}
	return nil
}

// stop ends the process group politely, then firmly, and returns what Wait
// returned for the leader.
func (s *Shell) stop(pgid int, done <-chan error) error {
	syscall.Kill(-pgid, syscall.SIGTERM)
	grace := time.NewTimer(s.grace())
	defer grace.Stop()
	select {
	case err := <-done:
		return err
	case <-grace.C:
		syscall.Kill(-pgid, syscall.SIGKILL)
		return <-done
	}
}

// dir resolves a ShellSpec.Dir. The project root itself, what most steps
// use, is resolved once per Shell: ResolvePath costs a stat of every
// component of the path, twice.
func (s *Shell) dir(d string) (string, error) {
	if d != "" && d != "." {
		return ResolvePath(s.Workdir, d)
	}
	s.root.once.Do(func() { s.root.dir, s.root.err = ResolvePath(s.Workdir, "") })
	return s.root.dir, s.root.err
}

func (s *Shell) grace() time.Duration { return orDefault(s.KillGrace, DefaultKillGrace) }

func (spec ShellSpec) argv() ([]string, error) {
	switch {
	case len(spec.Command) > 0 && spec.Script != "":
		return nil, errors.New("shell: set either command or script, not both")
	case len(spec.Command) > 0:
		if spec.Command[0] == "" {
			return nil, errors.New("shell: command: the program name is empty")
		}
		return spec.Command, nil
	case spec.Script != "":
		return []string{"bash", "-c", spec.Script}, nil
	}
	return nil, errors.New("shell: one of command or script is required")
}

// checkPolicy checks the script, or the argv as one command.
func (spec ShellSpec) checkPolicy(p Policy) error {
	if spec.Script != "" {
		return p.Check(spec.Script)
	}
	return p.CheckArgv(spec.Command)
}

func (spec ShellSpec) check() error {
	switch spec.Parse {
	case "", "text", "lines", "json":
	default:
		return fmt.Errorf("shell: parse: %q is not one of \"text\", \"lines\", \"json\"", spec.Parse)
	}
	for _, kv := range spec.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return fmt.Errorf("shell: env: %q is not KEY=VALUE", kv)
		}
	}
	if spec.Timeout < 0 || spec.MaxOutput < 0 {
		return errors.New("shell: timeout and max output must not be negative")
	}
	return nil
}

func parseOutput(mode, stdout string, truncated bool) (cty.Value, error) {
	switch mode {
	case "lines":
		var lines []cty.Value
		for _, l := range strings.Split(stdout, "\n") {
			l = strings.TrimSuffix(l, "\r")
			if strings.TrimSpace(l) != "" {
				lines = append(lines, cty.StringVal(l))
			}
		}
		if len(lines) == 0 {
			return cty.ListValEmpty(cty.String), nil
		}
		return cty.ListVal(lines), nil
	case "json":
		if truncated {
			return cty.NullVal(cty.DynamicPseudoType), fmt.Errorf("shell: parse json: stdout was cut at %d bytes, so it cannot be parsed", len(stdout))
		}
		v, err := JSONToCty([]byte(stdout))
		if err != nil {
			return cty.NullVal(cty.DynamicPseudoType), fmt.Errorf("shell: parse json: %v; stdout begins %q", err, head(stdout, 80))
		}
		return v, nil
	}
	return cty.StringVal(stdout), nil
}

// capture keeps the first max bytes written to it and swallows the rest.
type capture struct {
	max       int
	buf       []byte
	truncated bool
}

func (c *capture) Write(b []byte) (int, error) {
	room := c.max - len(c.buf)
	if len(b) > room {
		c.truncated = true
		c.buf = append(c.buf, b[:max(room, 0)]...)
	} else {
		c.buf = append(c.buf, b...)
	}
	return len(b), nil
}

// ReadFrom reads r to EOF into the capture. It exists so that reading a
// pipe costs no 32 KB copy buffer per stream, as io.Copy's would: kept
// bytes are read straight into buf, grown as output arrives, and the rest
// into a pooled scratch buffer that is dropped.
func (c *capture) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		n, err := c.readOnce(r)
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// readOnce is one read of r into the capture, as ReadFrom reads.
func (c *capture) readOnce(r io.Reader) (int, error) {
	if room := c.max - len(c.buf); room > 0 {
		if cap(c.buf) == 0 {
			// Most commands print little or nothing, and this read
			// often gets only the pipe's end: it goes to a pooled buffer,
			// and only what it got is kept.
			scratch := discardPool.Get().(*[]byte)
			n, err := r.Read((*scratch)[:min(room, len(*scratch))])
			c.buf = append(c.buf, (*scratch)[:n]...)
			discardPool.Put(scratch)
			return n, err
		}
		if len(c.buf) == cap(c.buf) {
			c.buf = slices.Grow(c.buf, min(room, max(512, cap(c.buf))))
		}
		n, err := r.Read(c.buf[len(c.buf):min(cap(c.buf), c.max)])
		c.buf = c.buf[:len(c.buf)+n]
		return n, err
	}
	scratch := discardPool.Get().(*[]byte)
	n, err := r.Read(*scratch)
	discardPool.Put(scratch)
	c.truncated = c.truncated || n > 0
	return n, err
}

var discardPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// String returns what was kept, without a rune split by the cut.
func (c *capture) String() (string, bool) {
	b := c.buf
	if c.truncated {
		for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
			if utf8.RuneStart(b[len(b)-i]) {
				if !utf8.FullRune(b[len(b)-i:]) {
					b = b[:len(b)-i]
				}
				break
			}
		}
	}
	return string(b), c.truncated
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
