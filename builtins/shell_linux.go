//go:build linux

package builtins

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// spawn is what every command start in this process shares: /dev/null,
// opened once for every command without input, and whether the kernel
// gives a started process a pidfd (Linux 5.3 and later).
var spawn struct {
	once    sync.Once
	devNull int // -1 if it cannot be opened
	pidfd   bool
}

func spawnSetup() {
	spawn.once.Do(func() {
		fd, err := unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			fd = -1
		}
		spawn.devNull = fd
		if pfd, err := unix.PidfdOpen(os.Getpid(), 0); err == nil {
			unix.Close(pfd)
			spawn.pidfd = true
		}
	})
}

// execute starts argv in dir, waits for it and reads its output as Run
// describes, filling in res; it returns why the command was stopped (a
// timeout, ctx) or could not be started or waited for.
//
// A step's command is most of what a chain of short steps costs apl, so
// here it is started with syscall.ForkExec and waited for by one loop
// on the calling goroutine: one poll(2) on its stdout, stderr, stdin
// and pidfd (readable once it exits), the timeout being poll's own and
// ctx's cancellation waking it through an eventfd. os/exec would copy
// and de-duplicate the environment and open /dev/null at every start,
// and the wait would take a goroutine per stream, one for the process,
// a timer and the scheduler's hand-offs between them.
func (s *Shell) execute(ctx context.Context, spec ShellSpec, argv []string, dir string, res *ShellResult) error {
	spawnSetup()
	if s.usePipes || !spawn.pidfd || spawn.devNull < 0 {
		return s.executePipes(ctx, spec, argv, dir, res)
	}
	env, err := s.environ(spec.Env)
	if err != nil {
		return fmt.Errorf("shell: start %s: %w", argv[0], err)
	}
	path := argv[0]
	if !strings.Contains(path, "/") {
		if path, err = exec.LookPath(path); err != nil {
			return fmt.Errorf("shell: start %s: %w", argv[0], err)
		}
	}

	// The child's ends: stdin (/dev/null, or a pipe), stdout, stderr.
	child := [3]int{spawn.devNull, -1, -1}
	parent := [3]int{-1, -1, -1} // stdin's write end, stdout's and stderr's read ends
	closeAll := func(fds []int) {
		for _, fd := range fds {
			if fd >= 0 && fd != spawn.devNull {
				unix.Close(fd)
			}
		}
	}
	for i := range 3 {
		if i == 0 && spec.Stdin == "" {
			continue
		}
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			closeAll(child[:])
			closeAll(parent[:])
			return fmt.Errorf("shell: %w", os.NewSyscallError("pipe2", err))
		}
		if i == 0 {
			child[0], parent[0] = p[0], p[1]
			// Input is written as the command reads it, never blocking
			// the loop that also reads its output.
			unix.SetNonblock(p[1], true)
		} else {
			child[i], parent[i] = p[1], p[0]
		}
	}
	pidfd := -1
	attr := &syscall.ProcAttr{Dir: dir, Env: env, Files: []uintptr{uintptr(child[0]), uintptr(child[1]), uintptr(child[2])},
		Sys: &syscall.SysProcAttr{Setpgid: true, PidFD: &pidfd}}
	start := time.Now()
	pid, err := syscall.ForkExec(path, argv, attr)
	// The parent keeps its own copy of the child's stdout and stderr
	// until the child has exited (waiter.hold): otherwise a command's
	// exit wakes the wait twice, once as it closes its pipes and once as
	// it becomes a zombie, a moment later on the other CPU.
	closeAll(child[:1])
	if err == nil && pidfd < 0 {
		// The process is this one's child and not yet waited for, so its
		// pid cannot have been reused.
		if pidfd, err = unix.PidfdOpen(pid, 0); err != nil {
			unix.Kill(-pid, unix.SIGKILL)
			var ws unix.WaitStatus
			unix.Wait4(pid, &ws, 0, nil)
			err = os.NewSyscallError("pidfd_open", err)
		}
	}
	if err != nil {
		closeAll(parent[:])
		closeAll(child[1:])
		return fmt.Errorf("shell: start %s: %w", argv[0], &os.PathError{Op: "fork/exec", Path: path, Err: err})
	}
	defer unix.Close(pidfd)
	if spec.Started != nil {
		spec.Started(pid)
	}

	w := waiter{
		pid: pid, pidfd: pidfd, in: parent[0], input: []byte(spec.Stdin), hold: [2]int{child[1], child[2]},
		timeout: orDefault(spec.Timeout, DefaultTimeout), grace: s.grace(), wake: -1,
	}
	defer func() { closeAll(w.hold[:]) }()
	w.out[0] = stream{fd: parent[1], c: &capture{max: orDefault(spec.MaxOutput, DefaultMaxOutput)}}
	w.out[1] = stream{fd: parent[2], c: &capture{max: w.out[0].c.max}}
	w.out[0].r = spec.reader(fdReader(parent[1]), false)
	w.out[1].r = spec.reader(fdReader(parent[2]), true)
	if ctx.Done() != nil {
		defer w.wakeOn(ctx)()
	}
	stopped := w.wait(ctx, start)
	closeAll([]int{w.in, w.out[0].fd, w.out[1].fd})

	res.Duration = time.Since(start)
	if w.exited && w.waitErr == nil && w.status.Exited() {
		res.ExitCode = w.status.ExitStatus()
	}
	res.Stdout, res.StdoutTruncated = w.out[0].c.String()
	res.Stderr, res.StderrTruncated = w.out[1].c.String()
	res.TimedOut = errors.Is(stopped, ErrTimeout)
	if stopped == nil {
		stopped = w.waitErr
	}
	return stopped
}

// A waiter waits for one command started by execute.
type waiter struct {
	pid, pidfd int
	in         int // stdin's write end, -1 once closed or without input
	input      []byte
	out        [2]stream // stdout, stderr
	// hold are the write ends of stdout's and stderr's pipes, the
	// child's, which the parent holds until the command has exited, so
	// that the pipes reach their end only once it has: one wake-up for
	// its exit, the pidfd's, not one for the pipes and one for the
	// pidfd. -1 once closed.
	hold    [2]int
	timeout time.Duration
	grace   time.Duration
	wake    int // an eventfd written when ctx is done; -1 without

	exited  bool
	status  unix.WaitStatus
	waitErr error // the wait itself failed
}

// A stream is the read end of a command's stdout or stderr.
type stream struct {
	fd int // -1 once it reached EOF
	c  *capture
	r  io.Reader // reads fd, through spec.Live when set
}

// wakeOn makes ctx's cancellation wake the wait, and returns what
// undoes it. Without an eventfd the wait looks at ctx every 50 ms.
func (w *waiter) wakeOn(ctx context.Context) func() {
	fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return func() {}
	}
	w.wake = fd
	// The callback may run as the wait ends: the lock keeps it from
	// writing to the descriptor once closed, and so perhaps reused.
	var mu sync.Mutex
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if w.wake >= 0 {
			unix.Write(w.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
		}
	})
	return func() {
		stop()
		mu.Lock()
		defer mu.Unlock()
		unix.Close(w.wake)
		w.wake = -1
	}
}

// wait runs until the command has exited and its output is read to EOF,
// or until the grace after its exit has passed with a pipe still held
// open (by a process that left its group). A timeout or ctx's end sends
// SIGTERM to the process group, and SIGKILL after the grace; once the
// command exits, what it left in its group is killed. It returns why the
// command was stopped, if it was.
func (w *waiter) wait(ctx context.Context, start time.Time) error {
	deadline := start.Add(w.timeout)
	var (
		stopped  error
		termAt   time.Time // when the group was sent SIGTERM
		killed   bool
		drainEnd time.Time // when the pipes are closed under a holder
		fds      [5]unix.PollFd
	)
	for {
		now := time.Now()
		if !w.exited && stopped == nil {
			if err := ctx.Err(); err != nil {
				stopped = fmt.Errorf("shell: command stopped: %w", err)
			} else if !now.Before(deadline) {
				stopped = fmt.Errorf("shell: %w after %s", ErrTimeout, w.timeout)
			}
			if stopped != nil {
				unix.Kill(-w.pid, unix.SIGTERM)
				termAt = now
			}
		}
		if !w.exited && stopped != nil && !killed && now.Sub(termAt) >= w.grace {
			unix.Kill(-w.pid, unix.SIGKILL)
			killed = true
		}
		if w.exited && (w.out[0].fd < 0 && w.out[1].fd < 0 || !now.Before(drainEnd)) {
			return stopped
		}

		// Until when nothing but an event needs the loop.
		next := time.Duration(-1)
		switch {
		case w.exited:
			next = drainEnd.Sub(now)
		case stopped == nil:
			next = deadline.Sub(now)
			if w.wake < 0 && ctx.Done() != nil {
				next = min(next, 50*time.Millisecond)
			}
		case !killed:
			next = termAt.Add(w.grace).Sub(now)
		}
		n := 0
		for _, st := range w.out {
			if st.fd >= 0 {
				fds[n] = unix.PollFd{Fd: int32(st.fd), Events: unix.POLLIN}
				n++
			}
		}
		if w.in >= 0 {
			fds[n] = unix.PollFd{Fd: int32(w.in), Events: unix.POLLOUT}
			n++
		}
		if !w.exited {
			fds[n] = unix.PollFd{Fd: int32(w.pidfd), Events: unix.POLLIN}
			n++
		}
		if w.wake >= 0 && stopped == nil {
			fds[n] = unix.PollFd{Fd: int32(w.wake), Events: unix.POLLIN}
			n++
		}
		if _, err := unix.Poll(fds[:n], pollMillis(next)); err != nil && err != unix.EINTR {
			// Nothing to wait with: end the command rather than leave it.
			unix.Kill(-w.pid, unix.SIGKILL)
			if !w.exited {
				w.reap()
			}
			return fmt.Errorf("shell: wait: %w", os.NewSyscallError("poll", err))
		}
		for _, p := range fds[:n] {
			if p.Revents == 0 {
				continue
			}
			switch fd := int(p.Fd); {
			case fd == w.pidfd:
				// The leader is a zombie until reaped, which keeps its
				// pid, the group's id, from being reused while the group
				// is killed.
				unix.Kill(-w.pid, unix.SIGKILL)
				w.reap()
				w.release()
				drainEnd = time.Now().Add(w.grace)
			case fd == w.in:
				w.write(p.Revents)
			case fd == w.wake:
				// ctx is done: the top of the loop sees it.
			default:
				for i := range w.out {
					if st := &w.out[i]; st.fd == fd {
						if _, err := st.c.readOnce(st.r); err != nil {
							unix.Close(st.fd)
							st.fd = -1
						}
					}
				}
			}
		}
	}
}

// reap waits for the exited leader. Its status is lost only where
// someone else waits for this process's children (SIGCHLD ignored):
// then, as os/exec does, the wait fails.
func (w *waiter) reap() {
	for {
		_, err := unix.Wait4(w.pid, &w.status, 0, nil)
		if err == unix.EINTR {
			continue
		}
		w.exited = true
		if err != nil {
			w.waitErr = fmt.Errorf("shell: wait: %w", os.NewSyscallError("wait4", err))
		}
		return
	}
}

// release closes the parent's copies of the command's stdout and
// stderr, once it has exited: the pipes then end as soon as no process
// left in its group holds them.
func (w *waiter) release() {
	for i, fd := range w.hold {
		if fd >= 0 {
			unix.Close(fd)
			w.hold[i] = -1
		}
	}
}

// write gives the command what it will take of its input; once all is
// written, or the command closed its end, the pipe is closed.
func (w *waiter) write(revents int16) {
	if revents&unix.POLLOUT != 0 {
		n, err := unix.Write(w.in, w.input)
		if n > 0 {
			w.input = w.input[n:]
		}
		if err == unix.EAGAIN || err == unix.EINTR {
			return
		}
		if err == nil && len(w.input) > 0 {
			return
		}
	}
	// Everything written, or EPIPE and the like: the command did not
	// read it all.
	unix.Close(w.in)
	w.in = -1
}

// pollMillis is d as poll's timeout: -1 (no timeout) for a negative d,
// rounded up so that the loop does not wake just before the time.
func pollMillis(d time.Duration) int {
	if d < 0 {
		return -1
	}
	return int(min((d+time.Millisecond-1)/time.Millisecond, math.MaxInt32))
}

// fdReader reads a blocking descriptor, io.EOF at its end.
type fdReader int

func (f fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(f), p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// environ is the environment of a command with extra's KEY=VALUE pairs:
// the process's, read once per Shell, with extra overriding it.
func (s *Shell) environ(extra []string) ([]string, error) {
	s.env.once.Do(func() { s.env.base, _ = dedupEnv(os.Environ()) })
	if len(extra) == 0 {
		return s.env.base, nil
	}
	return dedupEnv(append(slices.Clip(s.env.base), extra...))
}

// dedupEnv keeps the last of the entries for each key, in order, as
// os/exec does; a NUL in an entry is refused, as os/exec refuses it.
func dedupEnv(env []string) ([]string, error) {
	out := make([]string, 0, len(env))
	saw := make(map[string]bool, len(env))
	for i := len(env) - 1; i >= 0; i-- {
		kv := env[i]
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, errors.New("exec: environment variable contains NUL")
		}
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			if kv != "" {
				out = append(out, kv)
			}
			continue
		}
		if saw[k] {
			continue
		}
		saw[k] = true
		out = append(out, kv)
	}
	slices.Reverse(out)
	return out, nil
}
