package temporal

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
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

// Guard is a worker's side of its guard process.
type Guard struct {
	mu  sync.Mutex
	w   io.WriteCloser
	cmd *exec.Cmd
}

// StartGuard starts the guard process: path run with args (apl worker
// --guard, which calls RunGuard).
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
	return &Guard{w: w, cmd: cmd}, nil
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

// RunGuard is the guard process: it reads "start PID" and "end PID"
// lines from r until r closes, then stops the process groups started and
// not ended, SIGTERM first and SIGKILL a second later.
func RunGuard(r io.Reader) {
	signal.Ignore(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	running := map[int]bool{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		op, arg, _ := strings.Cut(sc.Text(), " ")
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
	if len(running) == 0 {
		return
	}
	for pid := range running {
		syscall.Kill(-pid, syscall.SIGTERM)
	}
	time.Sleep(time.Second)
	for pid := range running {
		if syscall.Kill(-pid, syscall.SIGKILL) == nil {
			fmt.Fprintf(os.Stderr, "apl worker: stopped process group %d, a step of the worker that died\n", pid)
		}
	}
}
