package builtins

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// reportCPU adds the CPU time apl's own process spent per operation
// (user + system, children excluded) to a benchmark's figures. Wall time
// per op is mostly fork, exec and the scheduler; this is the overhead
// apl itself adds, and it stays readable on a loaded machine.
func reportCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() {
		b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkBareExec is the floor BenchmarkShellRun is compared with: one
// fork and exec of `true`, nothing captured.
func BenchmarkBareExec(b *testing.B) {
	path, err := exec.LookPath("true")
	if err != nil {
		b.Skip(err)
	}
	dir := b.TempDir()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		cmd := exec.Command(path)
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShellRun is Shell.Run of the same command with everything a
// step gets: the default policy, confinement of the working directory,
// captured output and the process-group handling.
func BenchmarkShellRun(b *testing.B) {
	sh := &Shell{Workdir: b.TempDir(), Policy: DefaultPolicy}
	spec := ShellSpec{Command: []string{"true"}}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := sh.Run(context.Background(), spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkShellRunScript adds bash and the parse of the script by the
// policy; compare it with BenchmarkBareExecBash.
func BenchmarkShellRunScript(b *testing.B) {
	sh := &Shell{Workdir: b.TempDir(), Policy: DefaultPolicy}
	spec := ShellSpec{Script: "true"}
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := sh.Run(context.Background(), spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareExecBash is the floor for BenchmarkShellRunScript.
func BenchmarkBareExecBash(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	defer reportCPU(b)()
	for b.Loop() {
		cmd := exec.Command("bash", "-c", "true")
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
