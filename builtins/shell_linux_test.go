//go:build linux

package builtins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// On Linux a command is started with ForkExec and waited for by one poll
// loop (execute); elsewhere, and without a pidfd, by os/exec and a
// goroutine per stream (executePipes). Both must give a step the same
// result: streams, caps, exit codes, timeouts, input, the environment,
// live lines and the process group's end.
func TestShellExecuteAgreesWithPipes(t *testing.T) {
	t.Parallel()
	spawnSetup()
	if !spawn.pidfd {
		t.Skip("no pidfd: execute is executePipes")
	}
	cases := []struct {
		name string
		spec ShellSpec
	}{
		{"argv", ShellSpec{Command: []string{"printf", "%s|", "a b", "$(x)"}}},
		{"both streams", ShellSpec{Script: "echo out; echo err >&2; exit 3"}},
		{"signal", ShellSpec{Script: "kill -KILL $$"}},
		{"stdin", ShellSpec{Command: []string{"cat"}, Stdin: strings.Repeat("line\n", 40000)}},
		{"unread stdin", ShellSpec{Command: []string{"true"}, Stdin: strings.Repeat("x", 4<<20)}},
		{"no stdin reads /dev/null", ShellSpec{Command: []string{"wc", "-c"}}},
		{"env overrides, inherits, keeps the last", ShellSpec{Script: `printf %s "$APL_T1,$PATH,$HOME"`,
			Env: []string{"APL_T1=first", "HOME=/elsewhere", "APL_T1=v=1"}}},
		{"cap", ShellSpec{Script: `head -c 300000 /dev/zero | tr '\0' a; head -c 300000 /dev/zero | tr '\0' b >&2`, MaxOutput: 1000}},
		{"leftover child holds the pipes", ShellSpec{Script: "sleep 30 & echo bye"}},
		{"timeout", ShellSpec{Script: "trap '' TERM; echo started; sleep 30", Timeout: 200 * time.Millisecond}},
		{"not found", ShellSpec{Command: []string{"apl-no-such-command"}}},
		{"not found by path", ShellSpec{Command: []string{"/no/such/command"}}},
		{"NUL in env", ShellSpec{Command: []string{"true"}, Env: []string{"A=b\x00c"}}},
		{"live", ShellSpec{Script: `printf 'one\ntwo\r\n'; echo err >&2; printf 'three'`, MaxOutput: 4}},
	}
	type outcome struct {
		Exit               int
		Stdout, Stderr     string
		OutTrunc, ErrTrunc bool
		TimedOut           bool
		Err                string
		Lines              map[bool][]string
		Slow               bool
	}
	run := func(t *testing.T, pipes bool, spec ShellSpec) outcome {
		sh := &Shell{Workdir: t.TempDir(), KillGrace: 100 * time.Millisecond, usePipes: pipes}
		var mu sync.Mutex
		lines := map[bool][]string{}
		if spec.MaxOutput == 4 {
			spec.Live = func(stderr bool, line string) {
				mu.Lock()
				defer mu.Unlock()
				lines[stderr] = append(lines[stderr], line)
			}
		}
		res, err := sh.Run(context.Background(), spec)
		o := outcome{Exit: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, OutTrunc: res.StdoutTruncated,
			ErrTrunc: res.StderrTruncated, TimedOut: res.TimedOut, Lines: lines, Slow: res.Duration > 10*time.Second}
		if err != nil {
			o.Err = err.Error()
		}
		return o
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			want, got := run(t, true, c.spec), run(t, false, c.spec)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("execute differs from executePipes (-pipes +execute):\n%s", d)
			}
		})
	}
}

// A cancelled context stops the command's whole group, at once: the
// cancellation wakes the wait, which does not look at the context only
// now and then.
func TestShellExecuteCancelStopsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		waitForFile(pidFile, 30*time.Second)
		cancel()
	}()
	res, err := (&Shell{Workdir: dir, KillGrace: 100 * time.Millisecond}).Run(ctx,
		ShellSpec{Script: "trap '' TERM; sleep 30 & echo $! > pid.tmp && mv pid.tmp pid; wait"})
	if !errors.Is(err, context.Canceled) || res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("err = %v, result %+v", err, res)
	}
	assertGone(t, readPid(t, pidFile))
}

// Every command without input reads the one /dev/null this process
// opened, and no descriptor of a finished command stays open.
func TestShellExecuteLeavesNoDescriptors(t *testing.T) {
	sh := &Shell{Workdir: t.TempDir()}
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skip(err)
		}
		return len(ents)
	}
	if _, err := sh.Run(context.Background(), ShellSpec{Command: []string{"true"}}); err != nil {
		t.Fatal(err)
	}
	before := count()
	for range 20 {
		if _, err := sh.Run(context.Background(), ShellSpec{Script: "echo out; echo err >&2", Stdin: "in"}); err != nil {
			t.Fatal(err)
		}
		if _, err := sh.Run(context.Background(), ShellSpec{Command: []string{"true"}}); err != nil {
			t.Fatal(err)
		}
	}
	if after := count(); after > before {
		t.Errorf("%d descriptors open after 40 commands, %d before", after, before)
	}
}

// TestHelperReapedElsewhere is not a test: TestShellWaitFailsWhenReapedElsewhere
// runs the test binary with APL_TEST_REAPED set, to ignore SIGCHLD in a
// process of its own.
func TestHelperReapedElsewhere(t *testing.T) {
	mode := os.Getenv("APL_TEST_REAPED")
	if mode == "" {
		t.Skip("helper process")
	}
	signal.Ignore(syscall.SIGCHLD)
	res, err := (&Shell{Workdir: t.TempDir(), usePipes: mode == "pipes"}).Run(context.Background(), ShellSpec{Script: "exit 3"})
	fmt.Printf("exit %d: %v\n", res.ExitCode, err)
}

// Where SIGCHLD is ignored the kernel reaps a command itself and its
// exit status is lost: Run says the wait failed, as os/exec does, rather
// than report an exit code it never saw.
func TestShellWaitFailsWhenReapedElsewhere(t *testing.T) {
	for _, mode := range []string{"pipes", "poll"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperReapedElsewhere$")
		cmd.Env = append(os.Environ(), "APL_TEST_REAPED="+mode)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out)
		}
		if !strings.Contains(string(out), "exit -1: shell: wait:") {
			t.Errorf("%s: %s", mode, out)
		}
	}
}
