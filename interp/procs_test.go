package interp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestProcStartTime checks the start time resume compares to tell a
// step's process from one that reused its pid: field 22 of
// /proc/PID/stat, counted after the command name, which may hold spaces
// and parentheses.
func TestProcStartTime(t *testing.T) {
	line := "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615\n"
	if got := statStartTime([]byte(line)); got != "987654" {
		t.Errorf("statStartTime = %q, want 987654", got)
	}
	if got := statStartTime([]byte("4242 (x) S 1 2")); got != "" {
		t.Errorf("a short line gave %q, want nothing", got)
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	cmd := exec.Command("sleep", "5")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as a step's process
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	want := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])[19]
	if got := procStartTime(cmd.Process.Pid); got != want {
		t.Errorf("procStartTime = %q, want %q (from %q)", got, want, s)
	}
	if !alive(cmd.Process.Pid, want) {
		t.Error("the running process is not alive by its own start time")
	}
	if alive(cmd.Process.Pid, want+"1") {
		t.Error("a process with another start time counts as the recorded one")
	}
}

// TestBootTicksBracketStartTime checks the start time a step's procs.log
// line records without reading /proc: the boot clock read before and
// after the process started, in /proc's clock ticks, holds the start
// time /proc then gives; alive accepts the process by it, and refuses a
// range that misses it (a reused pid).
func TestBootTicksBracketStartTime(t *testing.T) {
	for _, c := range []struct {
		now, start string
		want       bool
	}{
		{"100", "100", true}, {"100", "101", false}, {"100", "99-100", true}, {"100", "100-101", true},
		{"100", "98-99", false}, {"102", "100-101", false}, {"x", "1-2", false}, {"5", "", false},
	} {
		if got := startedAt(c.now, c.start); got != c.want {
			t.Errorf("startedAt(%q, %q) = %v, want %v", c.now, c.start, got, c.want)
		}
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	for range 20 {
		d := &runDir{path: t.TempDir()}
		cmd := exec.Command("sleep", "5")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		before := bootTicks()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		d.procStarted("s-1", cmd.Process.Pid, before)
		d.procs.Close()
		b, err := os.ReadFile(filepath.Join(d.path, procsLog))
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(b))
		actual := procStartTime(cmd.Process.Pid)
		if len(f) != 4 || !startedAt(actual, f[3]) || !alive(cmd.Process.Pid, f[3]) {
			t.Errorf("procs.log line %q: /proc says the process started at %s", b, actual)
		}
		n, _ := strconv.Atoi(actual)
		if alive(cmd.Process.Pid, strconv.Itoa(n+1)+"-"+strconv.Itoa(n+5)) {
			t.Error("a process started before the recorded range counts as the recorded one")
		}
		cmd.Process.Kill()
		cmd.Wait()
	}
}
