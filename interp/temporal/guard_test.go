package temporal

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A worker killed between starting a command and naming its group to
// the guard, or in an agent call, whose process no line names, leaves
// processes that carry its mark: the guard stops them too. A marked
// process that leads no group of its own is stopped alone, not with the
// group it shares (here, the test's).
func TestGuardStopsMarkedProcesses(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc: the guard stops the groups it was told of only")
	}
	const token = "test-" + "guard"
	start := func(ownGroup bool) *exec.Cmd {
		cmd := exec.Command("sleep", "30")
		cmd.Env = append(os.Environ(), GuardEnv+"="+token)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: ownGroup}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	leader, member := start(true), start(false)
	other := exec.Command("sleep", "30")
	other.Env = append(os.Environ(), GuardEnv+"=another-worker")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	// Give the commands time to exec: before, their environment is the
	// test's.
	waitMarked(t, token, 2)

	var log bytes.Buffer
	guard(strings.NewReader("mark "+token+"\n"), "/proc", 10*time.Millisecond, &log)
	for name, cmd := range map[string]*exec.Cmd{"the group's leader": leader, "the process in the test's group": member} {
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("%s (pid %d) still runs after the guard", name, cmd.Process.Pid)
		}
	}
	if err := other.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("another worker's process was stopped: %v", err)
	}
	if !strings.Contains(log.String(), "stopped process group") || !strings.Contains(log.String(), "stopped process ") {
		t.Errorf("the guard's log says:\n%s", log.String())
	}
}

func waitMarked(t *testing.T, token string, n int) {
	t.Helper()
	for range 200 {
		if len(marked("/proc", GuardEnv+"="+token)) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the marked processes did not start")
}
