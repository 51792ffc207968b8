package main

import (
	"io"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

var validateStdlibArgs = []string{"validate", "stdlib:phase-runner", "stdlib:orchestrator", "stdlib:conductor", "stdlib:risk-pipeline"}

// BenchmarkValidateStdlib measures `apl validate` of every stdlib playbook
// in one process (issue 11: under 50 ms cold). The command loads each
// playbook with its prompt files and sub-playbooks and runs every check.
// cpu-ns/op is the process's user + system time per validate (all its
// goroutines and the garbage collector's), which stays readable on a
// loaded machine.
func BenchmarkValidateStdlib(b *testing.B) {
	b.ReportAllocs()
	start := cpuTime()
	for b.Loop() {
		if code := Main(validateStdlibArgs, io.Discard, io.Discard); code != 0 {
			b.Fatalf("apl validate exited %d", code)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkValidateStdlibCold is the same as a user meets it: a fresh apl
// process per validate, process start-up included. It builds apl once
// with the go command on PATH.
func BenchmarkValidateStdlibCold(b *testing.B) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		b.Skip("no go command to build apl with")
	}
	bin := filepath.Join(b.TempDir(), "apl")
	if out, err := exec.Command(goCmd, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	var cpu time.Duration
	for b.Loop() {
		cmd := exec.Command(bin, validateStdlibArgs...)
		if err := cmd.Run(); err != nil {
			b.Fatalf("apl validate: %v", err)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
