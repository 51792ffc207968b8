package interp

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A run directory's procs.log records the processes its steps run: a
// line "start NAME PID STARTTIME" when one starts (its pid is also its
// process group's) and "end NAME" when it has ended. A run killed while a
// step runs leaves a start without its end, and the process may well
// still be running; resume stops that process group before it runs the
// step again, so the step never runs twice side by side. One file kept
// open, and a step's end written with the next step's start: it costs a
// step one small append.
//
// STARTTIME is when the process started, in the clock ticks since boot
// that /proc/PID/stat gives (field 22): one number, or LO-HI, the ticks
// of the boot clock read before the process was started and after.
// The kernel takes a process's start time from that same clock when it
// forks it, so it lies within; reading the clock twice costs a step
// nothing, where reading /proc/PID/stat made the kernel format all of
// the process's statistics.
const procsLog = "procs.log"

// procStarted records a step's process, which was started after the
// boot clock read before (bootTicks; "" where it cannot be read). It is
// called from the goroutine that runs the process; appends of one line
// are atomic.
func (d *runDir) procStarted(name string, pid int, before string) {
	start := ""
	if after := bootTicks(); before != "" && after != "" {
		start = before
		if after != before {
			start += "-" + after
		}
	} else {
		start = procStartTime(pid)
	}
	d.procLine("start " + name + " " + strconv.Itoa(pid) + " " + start + "\n")
	// While the process runs, the spans held back are written.
	if err := d.flushSpans(); err != nil {
		d.mu.Lock()
		d.spanErr = err
		d.mu.Unlock()
	}
}

// procEnded records that a step's process ended and its group was
// reaped. The line is written with the next one, or when the run
// directory is closed: one write a step. A run killed before then leaves
// a start without its end, whose process group resume finds gone (alive),
// since it was killed and reaped before this was called.
func (d *runDir) procEnded(name string) {
	d.procsMu.Lock()
	d.procsEnd = append(append(append(d.procsEnd, "end "...), name...), '\n')
	d.procsMu.Unlock()
}

// procLine writes line, after the end lines that wait.
func (d *runDir) procLine(line string) {
	d.procsOnce.Do(func() {
		d.procs, _ = os.OpenFile(filepath.Join(d.path, procsLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	})
	d.procsMu.Lock()
	defer d.procsMu.Unlock()
	b := append(d.procsEnd, line...)
	d.procsEnd = b[:0]
	if d.procs != nil && len(b) > 0 {
		d.procs.Write(b)
	}
}

// stopSurvivors stops the process groups that a killed run left running,
// says what it stopped, and starts the log afresh.
func (d *runDir) stopSurvivors() []string {
	p := filepath.Join(d.path, procsLog)
	b, err := os.ReadFile(p)
	if err != nil {
		return nil
	}
	type proc struct{ pid, start string }
	running := map[string]proc{}
	var order []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) >= 3 && f[0] == "start":
			if _, seen := running[f[1]]; !seen {
				order = append(order, f[1])
			}
			running[f[1]] = proc{f[2], strings.Join(f[3:], "")}
		case len(f) == 2 && f[0] == "end":
			delete(running, f[1])
		}
	}
	var out []string
	for _, name := range order {
		pr, ok := running[name]
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(pr.pid)
		if err != nil || pid <= 1 {
			continue
		}
		if alive(pid, pr.start) {
			stopGroup(pid)
			out = append(out, fmt.Sprintf("stopped process group %d, which %s left running when the run stopped", pid, name))
		}
	}
	os.Remove(p)
	return out
}

// alive reports whether the process group pid still runs the process that
// was recorded: where the system says when a process started, a reused
// pid is told apart.
func alive(pid int, start string) bool {
	if err := syscall.Kill(-pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if now := procStartTime(pid); start != "" && now != "" && !startedAt(now, start) {
		return false // the leader's pid was reused by another process
	}
	return true
}

// startedAt reports whether the start time now, as /proc says it, is
// the recorded start: the same number, or within LO-HI.
func startedAt(now, start string) bool {
	lo, hi, ok := strings.Cut(start, "-")
	if !ok {
		return now == start
	}
	n, err1 := strconv.ParseUint(now, 10, 64)
	l, err2 := strconv.ParseUint(lo, 10, 64)
	h, err3 := strconv.ParseUint(hi, 10, 64)
	return err1 == nil && err2 == nil && err3 == nil && l <= n && n <= h
}

// stopGroup asks a process group to end, then kills what is left.
func stopGroup(pid int) {
	syscall.Kill(-pid, syscall.SIGTERM)
	retry(100, 20*time.Millisecond, func() bool { return syscall.Kill(-pid, 0) != nil })
	syscall.Kill(-pid, syscall.SIGKILL)
}

// procStartTime is when process pid started, in clock ticks since boot,
// from /proc; "" where /proc does not say. It runs once per step, so it
// reads the file with one open, one read and one close into a buffer on
// the stack (os.ReadFile also stats the file and reads twice), and splits
// no fields it does not need.
func procStartTime(pid int) string {
	var path [32]byte
	p := append(strconv.AppendInt(append(path[:0], "/proc/"...), int64(pid), 10), "/stat"...)
	fd, err := syscall.Open(string(p), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	var buf [2048]byte // the whole line; starttime is within its first 600 bytes
	n, err := syscall.Read(fd, buf[:])
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return ""
	}
	return statStartTime(buf[:n])
}

// statStartTime is field 22 (starttime) of a /proc/PID/stat line. The
// command name, field 2, is in parentheses and may hold spaces and
// parentheses itself, so fields are counted after the last ')'.
func statStartTime(b []byte) string {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	// After "pid (comm)": state is field 3, starttime field 22, the 20th.
	field := 0
	for j := i + 1; j < len(b); {
		for j < len(b) && (b[j] == ' ' || b[j] == '\n') {
			j++
		}
		k := j
		for k < len(b) && b[k] != ' ' && b[k] != '\n' {
			k++
		}
		if k == j {
			break
		}
		field++
		if field == 20 {
			return string(b[j:k])
		}
		j = k
	}
	return ""
}
