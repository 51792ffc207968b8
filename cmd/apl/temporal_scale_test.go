//go:build !race && !notemporal

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
)

// BenchmarkTemporalScale runs one for_each of APL_SCALE_ITEMS items (a
// `true` each, concurrency APL_SCALE_CONCURRENCY, default 2,500) on the
// real server (the devserver, a process of its own) with two apl worker
// processes, each in its own checkout with --max-steps 16 and a shared
// --blob-dir, and the client apl run --engine temporal --json, then the
// same playbook on the local engine. It reports the wall time, the CPU
// of each side (processes' user+system time, their commands included),
// and the run's workflow history summed over its executions (it
// continues as new: continue.go). BENCHMARKS.md, "Scale on Temporal".
//
// Skipped unless APL_SCALE_ITEMS is set: make test runs every benchmark
// once, and 50,000 items take tens of minutes on two cores.
//
//	APL_SCALE_ITEMS=50000 go test -run '^$' -bench TemporalScale -benchtime 1x -timeout 3h ./cmd/apl/
func BenchmarkTemporalScale(b *testing.B) {
	items, _ := strconv.Atoi(os.Getenv("APL_SCALE_ITEMS"))
	if items <= 0 {
		b.Skip("APL_SCALE_ITEMS is not set")
	}
	conc := 2500
	if n, err := strconv.Atoi(os.Getenv("APL_SCALE_CONCURRENCY")); err == nil && n > 0 {
		conc = n
	}
	dir := b.TempDir()
	apl := filepath.Join(dir, "apl")
	build := exec.Command(goTool(), "build", "-o", apl, ".")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building apl: %v\n%s", err, out)
	}
	pb := filepath.Join(dir, "scale.hcl")
	// The items come from a step: their list (6 bytes an item) is a
	// result too large for the history, which goes to the blob store,
	// and an output the state keeps in a file of the run directory.
	src := fmt.Sprintf(`playbook "scale" {}
step "items" {
  shell {
    script = "seq 1 %d | awk 'BEGIN { printf \"[\" } NR > 1 { printf \",\" } { printf \"\\\"%%s\\\"\", $1 } END { print \"]\" }'"
    parse  = "json"
  }
}
step "work" {
  for_each    = "steps.items.output"
  key         = "item"
  concurrency = %d
  step "do" {
    shell { command = ["true"] }
  }
}
output {
  completed = steps.work.output.completed
  failed    = steps.work.output.failed
}
`, items, conc)
	if err := os.WriteFile(pb, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	want := fmt.Sprintf(`{"completed":%d,"failed":0}`, items)

	for i := 0; i < b.N; i++ {
		// Local first: the same playbook, the same output.
		local := exec.Command(apl, "run", pb, "--json", "--quiet", "--workdir", b.TempDir())
		var lout bytes.Buffer
		local.Stdout, local.Stderr = &lout, os.Stderr
		t0 := time.Now()
		if err := local.Run(); err != nil {
			b.Fatalf("local run: %v", err)
		}
		lwall := time.Since(t0)
		lcpu := cpuOf(local.ProcessState)
		if got := strings.TrimSpace(lout.String()); got != want {
			b.Fatalf("local output %s, want %s", got, want)
		}

		addr, ns, srvPID := startDevServer(b)
		env := append(os.Environ(), "APL_TEMPORAL_ADDRESS="+addr, "APL_TEMPORAL_NAMESPACE="+ns)
		queue := fmt.Sprintf("scale-%d", i)
		blobs := filepath.Join(dir, "blobs")
		var workers []*exec.Cmd
		for w := 1; w <= 2; w++ {
			wd := b.TempDir()
			cmd := exec.Command(apl, "worker", "--workdir", wd, "--name", fmt.Sprintf("w%d", w), "--task-queue", queue,
				"--max-steps", "16", "--blob-dir", blobs)
			cmd.Env = env
			var werr bytes.Buffer
			cmd.Stderr = &werr
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			workers = append(workers, cmd)
			b.Cleanup(func() {
				if cmd.ProcessState == nil {
					cmd.Process.Kill()
					cmd.Wait()
				}
			})
		}
		srv0 := procCPU(b, srvPID)
		id := fmt.Sprintf("scale-%d-%d", items, i)
		run := exec.Command(apl, "run", pb, "--engine", "temporal", "--task-queue", queue, "--run-id", id, "--json", "--quiet")
		run.Env = env
		var out bytes.Buffer
		run.Stdout, run.Stderr = &out, os.Stderr
		t0 = time.Now()
		if err := run.Run(); err != nil {
			b.Fatalf("apl run --engine temporal: %v\n%s", err, out.String())
		}
		wall := time.Since(t0)
		srvCPU := procCPU(b, srvPID) - srv0
		if got := strings.TrimSpace(out.String()); got != want {
			b.Fatalf("Temporal output %s, want %s", got, want)
		}
		var wcpu time.Duration
		for _, w := range workers {
			w.Process.Signal(syscall.SIGTERM)
			w.Wait()
			wcpu += cpuOf(w.ProcessState)
		}
		execs, events, bytes := history(b, addr, ns, id)
		per := func(d time.Duration) string {
			return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000/float64(items))
		}
		b.Logf("%d items, concurrency %d: local %v (%s cpu-ms/item); Temporal %v (%s cpu-ms/item: workers %s, server %s); %d executions, %d events (%.2f/item), %.0f KiB (%.0f B/item)",
			items, conc, lwall.Round(time.Millisecond), per(lcpu), wall.Round(time.Millisecond), per(wcpu+srvCPU), per(wcpu), per(srvCPU),
			execs, events, float64(events)/float64(items), float64(bytes)/1024, float64(bytes)/float64(items))
		b.ReportMetric(float64(items)/wall.Seconds(), "items/s")
		b.ReportMetric(float64((wcpu+srvCPU).Microseconds())/1000/float64(items), "cpu-ms/item")
		b.ReportMetric(float64(lcpu.Microseconds())/1000/float64(items), "local-cpu-ms/item")
		b.ReportMetric(float64(bytes)/float64(items), "history-B/item")
		b.ReportMetric(float64(execs), "executions")
	}
}

func goTool() string {
	g := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(g); err != nil {
		return "go"
	}
	return g
}

// cpuOf is a process's user and system time, its waited-for children's
// included.
func cpuOf(ps *os.ProcessState) time.Duration {
	if ps == nil {
		return 0
	}
	return ps.UserTime() + ps.SystemTime()
}

// procCPU is a running process's user and system time (its own).
func procCPU(tb testing.TB, pid int) time.Duration {
	tb.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Logf("server CPU: %v", err)
		return 0
	}
	// Fields after the command's closing parenthesis: state is 3, utime
	// 14 and stime 15 (1-based, of the whole line).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// history sums the history of every execution of workflow id: how many
// executions, events and bytes.
func history(tb testing.TB, addr, ns, id string) (execs int, events, size int64) {
	tb.Helper()
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: ns, Logger: quietLogger()})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	run := ""
	for {
		d, err := c.DescribeWorkflowExecution(ctx, id, run)
		if err != nil {
			tb.Fatalf("describing %s/%s: %v", id, run, err)
		}
		info := d.GetWorkflowExecutionInfo()
		execs++
		events += info.GetHistoryLength()
		size += info.GetHistorySizeBytes()
		if info.GetExecution().GetRunId() == info.GetFirstRunId() {
			return
		}
		// The execution before: the first event of this one names it.
		it := c.GetWorkflowHistory(ctx, id, info.GetExecution().GetRunId(), false, 0)
		ev, err := it.Next()
		if err != nil {
			tb.Fatal(err)
		}
		run = ev.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if run == "" {
			return
		}
	}
}
