package temporal

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A worker's steps must not outlive it: a step that went on running
// after its worker was killed would finish its writes while the run
// gives the step to a worker again, and the step would run twice. Each
// command runs in a process group of its own (builtins.Shell), and the
// worker tells a guard process, through a pipe, which groups run now.
// When the worker dies, however it dies (SIGKILL too), the pipe closes
// and the guard stops those groups.
//
// A group the worker had no time to name (killed between starting a
// command and writing its line), an agent's process, which no line names,
// and whatever they started are found by a mark instead: StartGuard puts
// GuardEnv=TOKEN, a token of this worker alone, in the worker's
// environment, so every process it starts from then on, and their
// children, carry it. On Linux the guard reads each process's environment
// (/proc/PID/environ) and stops those that carry the mark, twice: when
// the pipe closes and a second later, for a process that was between
// fork and exec then. A process that dropped its environment (env -i)
// is found only through its group.

// GuardEnv is the environment variable that marks the processes a worker
// started.
const GuardEnv = "APL_WORKER_GUARD"

// Guard is a worker's side of its guard process.
type Guard struct {
	mu  sync.Mutex
	w   io.WriteCloser
	cmd *exec.Cmd
}

// StartGuard starts the guard process: path run with args (apl worker
// --guard, which calls RunGuard), and marks the processes this one starts
// from now on as the worker's (GuardEnv).
func StartGuard(path string, args []string) (*Guard, error) {
	cmd := &exec.Cmd{Path: path, Args: args, Stderr: os.Stderr}
	// Its own process group: a Ctrl-C meant for the worker does not stop
	// the guard before it has done its work.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the guard of the worker's steps: %w", err)
	}
	g := &Guard{w: w, cmd: cmd}
	token := guardToken()
	if _, err := fmt.Fprintf(w, "mark %s\n", token); err != nil {
		g.Close()
		return nil, fmt.Errorf("the guard of the worker's steps: %w", err)
	}
	if err := os.Setenv(GuardEnv, token); err != nil {
		g.Close()
		return nil, err
	}
	return g, nil
}

// guardToken is a token no other worker has: this process's id and
// random bytes.
func guardToken() string {
	b := make([]byte, 8)
	rand.Read(b)
	return strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b)
}

func (g *Guard) line(op string, pid int) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	fmt.Fprintf(g.w, "%s %d\n", op, pid)
}

// Close ends the guard once the worker's steps have all ended.
func (g *Guard) Close() {
	if g == nil {
		return
	}
	g.w.Close()
	g.cmd.Wait()
}

// RunGuard is the guard process: it reads "mark TOKEN", "start PID" and
// "end PID" lines from r until r closes, then stops the process groups
// started and not ended and the processes marked with TOKEN, SIGTERM
// first and SIGKILL a second later, and says on stderr what it stopped.
func RunGuard(r io.Reader) {
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	guard(r, "/proc", time.Second, os.Stderr)
}

// guard is RunGuard reading processes' environments under procDir.
func guard(r io.Reader, procDir string, grace time.Duration, log io.Writer) {
	running := map[int]bool{}
	mark := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		op, arg, _ := strings.Cut(sc.Text(), " ")
		if op == "mark" {
			mark = GuardEnv + "=" + arg
			continue
		}
		pid, err := strconv.Atoi(arg)
		if err != nil || pid <= 1 {
			continue
		}
		switch op {
		case "start":
			running[pid] = true
		case "end":
			delete(running, pid)
		}
	}
	groups, procs := targets(running, marked(procDir, mark))
	if len(groups)+len(procs) == 0 {
		return
	}
	for _, p := range stop(groups, procs, syscall.SIGTERM) {
		fmt.Fprintf(log, "apl worker: stopped %s, a step of the worker that ended\n", p)
	}
	time.Sleep(grace)
	// Again, with what was exec'd meanwhile, and SIGKILL for what did
	// not stop.
	groups, procs = targets(running, marked(procDir, mark))
	stop(groups, procs, syscall.SIGKILL)
}

// targets are the groups to stop (those the worker named, and a marked
// process's that it leads) and the marked processes that lead none.
func targets(running map[int]bool, marked []int) (groups, procs []int) {
	for pid := range running {
		groups = append(groups, pid)
	}
	for _, pid := range marked {
		if running[pid] {
			continue
		}
		// Only a group the process leads: the group of a process that
		// leads none may hold the worker's parent (a shell, a test).
		if pg, err := syscall.Getpgid(pid); err == nil && pg == pid {
			groups = append(groups, pid)
		} else {
			procs = append(procs, pid)
		}
	}
	return groups, procs
}

// stop sends sig to groups and procs and says which were there.
func stop(groups, procs []int, sig syscall.Signal) (stopped []string) {
	for _, pg := range groups {
		if syscall.Kill(-pg, sig) == nil {
			stopped = append(stopped, fmt.Sprintf("process group %d", pg))
		}
	}
	for _, pid := range procs {
		if syscall.Kill(pid, sig) == nil {
			stopped = append(stopped, fmt.Sprintf("process %d", pid))
		}
	}
	return stopped
}

// marked is the processes under procDir whose environment holds mark,
// other than this one.
func marked(procDir, mark string) []int {
	if mark == "" {
		return nil
	}
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil // not Linux: the groups alone
	}
	want := []byte(mark)
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join(procDir, e.Name(), "environ"))
		if err != nil {
			continue
		}
		for kv := range bytes.SplitSeq(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
