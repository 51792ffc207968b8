package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCommandKillsLeftoverChildren is the regression test for issue 9: an
// agent command that answered and exited but left a background child
// holding stdout failed the step (WaitDelay expired) or leaked the child.
func TestCommandKillsLeftoverChildren(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	d := newDriver(t, Config{
		Type:    TypeCommand,
		Command: []string{"bash", "-c", `echo '{"ok":true}'; sleep 30 & echo $! > "$0"`, pidFile},
		Output:  "json",
	})
	begin := time.Now()
	resp, err := d.Call(context.Background(), Request{Step: "s", Agent: "a", Prompt: "p", Workdir: dir})
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if elapsed := time.Since(begin); elapsed > 3*time.Second {
		t.Errorf("Call took %s: it waited for the leftover child", elapsed)
	}
	if !strings.Contains(resp.Text, `"ok":true`) {
		t.Errorf("Text = %q", resp.Text)
	}
	assertGone(t, readPid(t, pidFile))
}

func TestExecRunnerCancelKillsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the child exists, not after a fixed sleep.
		for ctx.Err() == nil {
			if data, err := os.ReadFile(pidFile); err == nil && bytes.HasSuffix(data, []byte("\n")) {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	_, err := ExecRunner{}.Run(ctx, Process{Argv: []string{"bash", "-c", `sleep 30 & echo $! > "$0"; wait`, pidFile}, Dir: dir})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	assertGone(t, readPid(t, pidFile))
}

func TestExecRunnerStdin(t *testing.T) {
	t.Parallel()
	res, err := ExecRunner{}.Run(context.Background(), Process{Argv: []string{"cat"}, Stdin: strings.NewReader("in\n")})
	if err != nil || string(res.Stdout) != "in\n" {
		t.Errorf("Run = %q, %v", res.Stdout, err)
	}
	res, err = ExecRunner{}.Run(context.Background(), Process{Argv: []string{"cat"}})
	if err != nil || len(res.Stdout) != 0 {
		t.Errorf("no stdin: Run = %q, %v", res.Stdout, err)
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// assertGone fails unless pid stops running soon; a killed orphan may
// linger as a zombie until init reaps it, which counts as gone.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	var stat []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		var err error
		if stat, err = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil {
			return
		}
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return
		}
	}
	t.Errorf("process %d still runs: %s", pid, stat)
}

// Stdout given to a file arrives there whole, in order, however the
// process writes it (in bursts with pauses, past a pipeful at once): on
// Linux it is spliced from the pipe into the file. A file that cannot
// be written fails the run, as a failing Write does.
func TestExecRunnerStreamsToFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	want := make([]byte, 3<<20)
	for i := range want {
		want[i] = byte(i*7 + i/4096)
	}
	if err := os.WriteFile(src, want, 0o644); err != nil {
		t.Fatal(err)
	}
	script := "head -c 100000 " + src + "; sleep 0.05; tail -c +100001 " + src + " | head -c 1000000; sleep 0.05; tail -c +1100001 " + src
	dst, err := os.OpenFile(filepath.Join(dir, "dst"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	res, err := ExecRunner{}.Run(context.Background(), Process{Argv: []string{"sh", "-c", script}, Stdout: dst})
	if err != nil || len(res.Stdout) != 0 {
		t.Fatalf("Run: %v, stdout kept %d bytes", err, len(res.Stdout))
	}
	got, err := os.ReadFile(dst.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the file holds %d bytes, not the %d the process printed", len(got), len(want))
	}

	ro, err := os.Open(dst.Name()) // read-only
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = ExecRunner{}.Run(context.Background(), Process{Argv: []string{"cat", src}, Stdout: ro})
	if err == nil || !strings.Contains(err.Error(), "writing its output") {
		t.Errorf("a file that cannot be written: err = %v", err)
	}
}
