package interp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A run directory's procs/ folder holds a file for each process a step
// has running: its process id (which is also its process group's) and
// when it started. A run killed while a step runs leaves its file behind,
// and the process may well still be running; resume stops that process
// group before it runs the step again, so the step never runs twice side
// by side.
const procsDir = "procs"

// procStarted records a step's process. It is called from the goroutine
// that runs the process, so it touches only its own file.
func (d *runDir) procStarted(name string, pid int) {
	p := filepath.Join(d.path, procsDir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	os.WriteFile(p, []byte(fmt.Sprintf("%d %s\n", pid, procStartTime(pid))), 0o644)
}

// procEnded forgets a step's process once it has ended and its group was
// reaped.
func (d *runDir) procEnded(name string) { os.Remove(filepath.Join(d.path, procsDir, name)) }

// stopSurvivors stops the process groups that a killed run left running
// and says what it stopped.
func (d *runDir) stopSurvivors() []string {
	dir := filepath.Join(d.path, procsDir)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		fields := strings.Fields(string(b))
		pid, err := strconv.Atoi(firstOf(fields))
		if err != nil || pid <= 1 {
			os.Remove(p)
			continue
		}
		start := ""
		if len(fields) > 1 {
			start = fields[1]
		}
		if alive(pid, start) {
			stopGroup(pid)
			out = append(out, fmt.Sprintf("stopped process group %d, which %s left running when the run stopped", pid, e.Name()))
		}
		os.Remove(p)
	}
	return out
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// alive reports whether the process group pid still runs the process that
// was recorded: where the system says when a process started, a reused
// pid is told apart.
func alive(pid int, start string) bool {
	if err := syscall.Kill(-pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if now := procStartTime(pid); start != "" && now != "" && now != start {
		return false // the leader's pid was reused by another process
	}
	return true
}

// stopGroup asks a process group to end, then kills what is left.
func stopGroup(pid int) {
	syscall.Kill(-pid, syscall.SIGTERM)
	retry(100, 20*time.Millisecond, func() bool { return syscall.Kill(-pid, 0) != nil })
	syscall.Kill(-pid, syscall.SIGKILL)
}

// procStartTime is when process pid started, in clock ticks since boot,
// from /proc; "" where /proc does not say.
func procStartTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	// After "pid (comm)": state is field 3, starttime field 22.
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}
