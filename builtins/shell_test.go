package builtins

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
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

func TestShellRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		spec       ShellSpec
		wantExit   int
		wantStdout string
		wantStderr string
	}{
		{name: "argv", spec: ShellSpec{Command: []string{"printf", "%s|", "a b", "$(x)"}}, wantStdout: "a b|$(x)|"},
		{name: "script", spec: ShellSpec{Script: "echo out; echo err >&2"}, wantStdout: "out\n", wantStderr: "err\n"},
		{name: "exit code", spec: ShellSpec{Script: "echo partial; exit 3"}, wantExit: 3, wantStdout: "partial\n"},
		{name: "killed by signal", spec: ShellSpec{Script: "kill -KILL $$"}, wantExit: -1},
		{name: "stdin", spec: ShellSpec{Command: []string{"cat"}, Stdin: "line1\nline2\n"}, wantStdout: "line1\nline2\n"},
		{name: "no stdin reads nothing", spec: ShellSpec{Command: []string{"cat"}}},
		{name: "unread stdin", spec: ShellSpec{Command: []string{"true"}, Stdin: strings.Repeat("x", 4<<20)}},
		{name: "env", spec: ShellSpec{Script: `printf %s "$APL_T1,$HOME"`, Env: []string{"APL_T1=v=1", "HOME=/elsewhere"}}, wantStdout: "v=1,/elsewhere"},
		{name: "dir", spec: ShellSpec{Command: []string{"pwd", "-P"}, Dir: "sub"}, wantStdout: realpath(t, filepath.Join(dir, "sub")) + "\n"},
		{name: "absolute dir inside", spec: ShellSpec{Command: []string{"pwd", "-P"}, Dir: filepath.Join(dir, "sub")}, wantStdout: realpath(t, filepath.Join(dir, "sub")) + "\n"},
		{name: "default dir is workdir", spec: ShellSpec{Command: []string{"pwd", "-P"}}, wantStdout: realpath(t, dir) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sh := &Shell{Workdir: dir}
			res, err := sh.Run(context.Background(), tt.spec)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.ExitCode != tt.wantExit {
				t.Errorf("ExitCode = %d, want %d (stderr %q)", res.ExitCode, tt.wantExit, res.Stderr)
			}
			if res.Stdout != tt.wantStdout {
				t.Errorf("Stdout = %q, want %q", res.Stdout, tt.wantStdout)
			}
			if res.Stderr != tt.wantStderr {
				t.Errorf("Stderr = %q, want %q", res.Stderr, tt.wantStderr)
			}
			if !res.Output.RawEquals(cty.StringVal(tt.wantStdout)) {
				t.Errorf("Output = %#v, want the stdout string", res.Output)
			}
			if res.TimedOut || res.StdoutTruncated || res.StderrTruncated {
				t.Errorf("unexpected flags in %+v", res)
			}
		})
	}
}

func TestShellRunRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		spec    ShellSpec
		wantErr string
		is      error
	}{
		{name: "no command", spec: ShellSpec{}, wantErr: "one of command or script is required"},
		{name: "both", spec: ShellSpec{Command: []string{"true"}, Script: "true"}, wantErr: "not both"},
		{name: "empty program", spec: ShellSpec{Command: []string{""}}, wantErr: "program name is empty"},
		{name: "dotdot dir", spec: ShellSpec{Command: []string{"true"}, Dir: "../"}, is: ErrOutsideWorkdir},
		{name: "absolute dir outside", spec: ShellSpec{Command: []string{"true"}, Dir: outside}, is: ErrOutsideWorkdir},
		{name: "symlinked dir outside", spec: ShellSpec{Command: []string{"true"}, Dir: "escape"}, is: ErrOutsideWorkdir},
		{name: "bad parse", spec: ShellSpec{Command: []string{"true"}, Parse: "yaml"}, wantErr: `parse: "yaml" is not one of`},
		{name: "bad env", spec: ShellSpec{Command: []string{"true"}, Env: []string{"NOEQUALS"}}, wantErr: `env: "NOEQUALS" is not KEY=VALUE`},
		{name: "missing program", spec: ShellSpec{Command: []string{"/nonexistent/apl-no-such-program"}}, wantErr: "start /nonexistent/apl-no-such-program"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := (&Shell{Workdir: dir}).Run(context.Background(), tt.spec)
			if err == nil {
				t.Fatal("Run succeeded, want an error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestShellPolicyStopsBeforeRunning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sh := &Shell{Workdir: dir, Policy: DefaultPolicy}
	_, err := sh.Run(context.Background(), ShellSpec{Script: "touch ran; git reset --hard HEAD~1"})
	var pe *PolicyError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *PolicyError", err)
	}
	if pe.Match != "git reset --hard" {
		t.Errorf("Match = %q", pe.Match)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused script ran (stat: %v)", err)
	}
	_, err = sh.Run(context.Background(), ShellSpec{Command: []string{"npm", "install", "-g", "left-pad"}})
	if !errors.As(err, &pe) {
		t.Fatalf("argv command: err = %v, want a *PolicyError", err)
	}
}

func TestShellParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		parse   string
		script  string
		want    cty.Value
		wantErr string
	}{
		{name: "text", parse: "text", script: "echo hi", want: cty.StringVal("hi\n")},
		{name: "lines", parse: "lines", script: `printf 'a\n\n  \nb c\r\nd'`, want: cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b c"), cty.StringVal("d")})},
		{name: "no lines", parse: "lines", script: "true", want: cty.ListValEmpty(cty.String)},
		{name: "json object", parse: "json", script: `echo '{"ok": true, "n": [1, "x"]}'`, want: cty.ObjectVal(map[string]cty.Value{
			"ok": cty.True,
			"n":  cty.TupleVal([]cty.Value{cty.NumberIntVal(1), cty.StringVal("x")}),
		})},
		{name: "json on failure exit", parse: "json", script: `echo '[]'; exit 1`, want: cty.EmptyTupleVal},
		{name: "not json", parse: "json", script: "echo 'Error: nope'", wantErr: `stdout begins "Error: nope\n"`},
		{name: "json then junk", parse: "json", script: "echo '{}'; echo done", wantErr: "unexpected data after the JSON value"},
		{name: "empty json", parse: "json", script: "true", wantErr: "no JSON value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := (&Shell{Workdir: t.TempDir()}).Run(context.Background(), ShellSpec{Script: tt.script, Parse: tt.parse})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if res.Stdout == "" && tt.script != "true" {
					t.Errorf("result not filled in on a parse error: %+v", res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Output.RawEquals(tt.want) {
				t.Errorf("Output = %#v, want %#v", res.Output, tt.want)
			}
		})
	}
}

func TestShellOutputCap(t *testing.T) {
	t.Parallel()
	sh := &Shell{Workdir: t.TempDir()}
	// 3 MB on each stream: far more than a pipe buffer, so a command that
	// was not drained would block forever and this test would hang.
	res, err := sh.Run(context.Background(), ShellSpec{
		Script:    `head -c 3000000 /dev/zero | tr '\0' a; head -c 3000000 /dev/zero | tr '\0' b >&2; echo done >&2; exit 4`,
		MaxOutput: 1000,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 4 {
		t.Errorf("ExitCode = %d, want 4: the command should have run to the end", res.ExitCode)
	}
	if res.Stdout != strings.Repeat("a", 1000) || !res.StdoutTruncated {
		t.Errorf("stdout: %d bytes, truncated=%v", len(res.Stdout), res.StdoutTruncated)
	}
	if res.Stderr != strings.Repeat("b", 1000) || !res.StderrTruncated {
		t.Errorf("stderr: %d bytes, truncated=%v", len(res.Stderr), res.StderrTruncated)
	}

	t.Run("exact fit is not truncated", func(t *testing.T) {
		res, err := sh.Run(context.Background(), ShellSpec{Script: "printf 12345", MaxOutput: 5})
		if err != nil || res.Stdout != "12345" || res.StdoutTruncated {
			t.Errorf("got %q truncated=%v err=%v", res.Stdout, res.StdoutTruncated, err)
		}
	})
	t.Run("cut inside a rune", func(t *testing.T) {
		res, err := sh.Run(context.Background(), ShellSpec{Script: "printf 'ééé'", MaxOutput: 3})
		if err != nil || res.Stdout != "é" || !utf8.ValidString(res.Stdout) {
			t.Errorf("got %q err=%v, want one whole é", res.Stdout, err)
		}
	})
	t.Run("json refuses truncated output", func(t *testing.T) {
		_, err := sh.Run(context.Background(), ShellSpec{Script: `echo '{"a": "long"}'`, MaxOutput: 4, Parse: "json"})
		if err == nil || !strings.Contains(err.Error(), "cut at 4 bytes") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestShellTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
	}{
		{name: "waiting script", script: "sleep 30 & echo $! > pid; echo started; wait"},
		{name: "foreground child", script: "sleep 30 & echo $! > pid; echo started; sleep 31"},
		// SIGTERM is ignored by the script and inherited by its child, so
		// only the SIGKILL after the grace period can end them.
		{name: "ignores SIGTERM", script: "trap '' TERM; sleep 30 & echo $! > pid; echo started; wait"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			sh := &Shell{Workdir: dir, KillGrace: 100 * time.Millisecond}
			begin := time.Now()
			res, err := sh.Run(context.Background(), ShellSpec{Script: tt.script, Timeout: 300 * time.Millisecond})
			if !errors.Is(err, ErrTimeout) {
				t.Fatalf("err = %v, want ErrTimeout", err)
			}
			if elapsed := time.Since(begin); elapsed > 10*time.Second {
				t.Errorf("Run took %s after a 300ms timeout", elapsed)
			}
			if !res.TimedOut || res.ExitCode != -1 || res.Stdout != "started\n" {
				t.Errorf("result = %+v, want TimedOut, exit -1 and the output so far", res)
			}
			assertGone(t, readPid(t, filepath.Join(dir, "pid")))
		})
	}
}

func TestShellKillsLeftoverChildren(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The script exits at once but its background child holds stdout; Run
	// must neither wait 30s for it nor leave it running.
	res, err := (&Shell{Workdir: dir}).Run(context.Background(), ShellSpec{Script: "sleep 30 & echo $! > pid; echo bye"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Duration > 10*time.Second || res.Stdout != "bye\n" {
		t.Errorf("result = %+v", res)
	}
	assertGone(t, readPid(t, filepath.Join(dir, "pid")))
}

func TestShellContextCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancel when the child exists, whatever the load: a fixed deadline
	// could fire before bash had even written the pid.
	go func() {
		waitForFile(pidFile, 30*time.Second)
		cancel()
	}()
	res, err := (&Shell{Workdir: dir}).Run(ctx, ShellSpec{Script: "sleep 30 & echo $! > pid.tmp && mv pid.tmp pid; wait"})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want the context's error and not ErrTimeout", err)
	}
	if res.TimedOut || res.ExitCode != -1 {
		t.Errorf("result = %+v", res)
	}
	assertGone(t, readPid(t, pidFile))
}

// waitForFile returns once path exists, or after limit.
func waitForFile(path string, limit time.Duration) {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
}

func TestShellCancelledBeforeStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := (&Shell{Workdir: dir}).Run(ctx, ShellSpec{Script: "touch ran"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran after cancellation (stat: %v)", err)
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

// assertGone fails unless pid exits soon. SIGKILL is delivered
// asynchronously, so the process may take a moment to finish dying; a
// killed orphan may then linger as a zombie until init reaps it, which
// counts as gone: it no longer runs.
func assertGone(t *testing.T, pid int) {
	t.Helper()
	var stat []byte
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		var err error
		if stat, err = os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil {
			return // exited between the two checks
		}
		// The state follows the parenthesised command name.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return
		}
	}
	t.Errorf("process %d still runs: %s", pid, stat)
}

func realpath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestCaptureWrite(t *testing.T) {
	c := &capture{max: 5}
	for _, chunk := range []string{"ab", "cde", "", "fg"} {
		if n, err := c.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; a capture must always accept everything", chunk, n, err)
		}
	}
	got, truncated := c.String()
	if diff := cmp.Diff("abcde", got); diff != "" || !truncated {
		t.Errorf("String() truncated=%v, diff (-want +got):\n%s", truncated, diff)
	}
}
