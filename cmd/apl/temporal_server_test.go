//go:build !race && !notemporal

// Temporal's server is too slow under the race detector: these tests run
// without it.

package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestTemporalScripts runs the scripts in testdata/temporal against a real
// Temporal server: Temporal's own server code (temporaltest, built from
// interp/temporal/internal/devserver) in a process of its own, with apl
// worker and apl run as separate processes, each worker in a checkout of
// its own. The scripts share the server; each has a task queue of its own
// ($QUEUE), and $APL_TEMPORAL_ADDRESS and $APL_TEMPORAL_NAMESPACE name the
// server.
func TestTemporalScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal server")
	}
	addr, ns := devServer(t)
	var mu sync.Mutex
	envs := map[string][]string{}
	p := scriptParams(filepath.Join("testdata", "temporal"))
	setup := p.Setup
	p.Setup = func(e *testscript.Env) error {
		if err := setup(e); err != nil {
			return err
		}
		e.Setenv("APL_TEMPORAL_ADDRESS", addr)
		e.Setenv("APL_TEMPORAL_NAMESPACE", ns)
		e.Setenv("QUEUE", "q-"+filepath.Base(e.WorkDir))
		mu.Lock()
		envs[e.WorkDir] = e.Vars
		mu.Unlock()
		return nil
	}
	procs := &daemons{envs: envs, mu: &mu, running: map[string]*daemon{}}
	p.Cmds["spawn"] = procs.spawn
	p.Cmds["signal"] = procs.signal
	p.Cmds["reap"] = procs.reap
	p.Cmds["waitfor"] = cmdWaitfor
	testscript.Run(t, p)
}

// devServer builds the server (once per version of the module's
// dependencies: the binary is kept in the user's cache directory), starts
// it, and returns its address and namespace. It stops with the test.
func devServer(t *testing.T) (addr, ns string) {
	t.Helper()
	addr, ns, _ = startDevServer(t)
	return addr, ns
}

// startDevServer is devServer, which also returns the server's process
// id.
func startDevServer(t testing.TB) (addr, ns string, pid int) {
	t.Helper()
	bin := devServerBinary(t)
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	// The server goes down with the test however the test ends: its
	// standard input closes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 2 {
		t.Fatalf("the Temporal server did not say where it serves: %q %v", line, err)
	}
	go io.Copy(io.Discard, out)
	return f[0], f[1], cmd.Process.Pid
}

func devServerBinary(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum", "interp/temporal/internal/devserver/main.go"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "apl-test", "temporal-devserver-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err != nil {
		goCmd = "go"
	}
	tmp := bin + fmt.Sprintf(".%d", os.Getpid())
	build := exec.Command(goCmd, "build", "-o", tmp, "./interp/temporal/internal/devserver")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the Temporal server: %v\n%s", err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// daemons are the processes scripts start with spawn: a worker or a
// client that the script signals, as exec's & cannot with SIGTERM.
type daemons struct {
	mu      *sync.Mutex
	envs    map[string][]string
	running map[string]*daemon
}

type daemon struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (d *daemons) key(ts *testscript.TestScript, name string) string {
	return ts.Getenv("WORK") + "\x00" + name
}

// spawn NAME PROGRAM ARGS... starts PROGRAM in the background, in the
// script's current directory, with its stdout and stderr in
// $WORK/NAME.stdout and $WORK/NAME.stderr.
func (d *daemons) spawn(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: spawn NAME PROGRAM [ARGS...]")
	}
	name, prog := args[0], args[1]
	d.mu.Lock()
	env := d.envs[ts.Getenv("WORK")]
	d.mu.Unlock()
	path := ""
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, prog); fileExists(p) {
			path = p
			break
		}
	}
	if path == "" {
		ts.Fatalf("spawn: %s not on PATH", prog)
	}
	cmd := exec.Command(path, args[2:]...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = env
	out, err := os.Create(ts.MkAbs(filepath.Join(ts.Getenv("WORK"), name+".stdout")))
	ts.Check(err)
	errf, err := os.Create(ts.MkAbs(filepath.Join(ts.Getenv("WORK"), name+".stderr")))
	ts.Check(err)
	cmd.Stdout, cmd.Stderr = out, errf
	ts.Check(cmd.Start())
	p := &daemon{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		out.Close()
		errf.Close()
		close(p.done)
	}()
	d.mu.Lock()
	d.running[d.key(ts, name)] = p
	d.mu.Unlock()
	ts.Defer(func() {
		cmd.Process.Kill()
		<-p.done
	})
}

func (d *daemons) get(ts *testscript.TestScript, name string) *daemon {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.running[d.key(ts, name)]
	if p == nil {
		ts.Fatalf("no process %s was spawned", name)
	}
	return p
}

// signal NAME TERM|KILL|INT sends the process NAME a signal.
func (d *daemons) signal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal NAME TERM|KILL|INT")
	}
	sig, ok := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "INT": syscall.SIGINT}[args[1]]
	if !ok {
		ts.Fatalf("signal: unknown signal %s", args[1])
	}
	ts.Check(d.get(ts, args[0]).cmd.Process.Signal(sig))
}

// reap NAME [CODE] waits for the process NAME to exit (a minute at
// most), and checks its exit status when CODE is given.
func (d *daemons) reap(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: reap NAME [CODE]")
	}
	p := d.get(ts, args[0])
	select {
	case <-p.done:
	case <-time.After(time.Minute):
		ts.Fatalf("%s did not exit within a minute", args[0])
	}
	if len(args) == 2 {
		if got := fmt.Sprint(p.cmd.ProcessState.ExitCode()); got != args[1] {
			ts.Fatalf("%s exited with status %s, want %s", args[0], got, args[1])
		}
	}
}

// waitfor FILE REGEXP waits until FILE's contents match REGEXP (two
// minutes at most: the machine may be loaded; the wait ends as soon as
// they match).
func cmdWaitfor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitfor FILE REGEXP")
	}
	re, err := regexp.Compile(args[1])
	ts.Check(err)
	path := ts.MkAbs(args[0])
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, _ := os.ReadFile(path)
		if re.Match(b) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not come to match %q; it holds:\n%s", args[0], args[1], b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
