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

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// BenchmarkTemporalScale runs one for_each of APL_SCALE_ITEMS items (a
// `true` each, concurrency APL_SCALE_CONCURRENCY, default 2,500) on the
// real server (the devserver, a process of its own) with two apl worker
// processes, each in its own checkout with --max-steps 16 and a shared
// --blob-dir, and the client apl run --engine temporal --json, then the
// same playbook on the local engine. It reports the wall time, the CPU
// of each process apart (user+system time, the commands it ran
// included): the local apl run; each worker, the client apl run and the
// server. And the run's workflow history summed over its executions (it
// continues as new: continue.go), and the load average at the start and
// the end. BENCHMARKS.md, "Scale on Temporal".
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

	per := func(d time.Duration) string {
		return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000/float64(items))
	}
	for i := 0; i < b.N; i++ {
		load := loadAverage()
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
		ccpu := cpuOf(run.ProcessState)
		var wcpu time.Duration
		var each []string
		for _, w := range workers {
			w.Process.Signal(syscall.SIGTERM)
			w.Wait()
			wcpu += cpuOf(w.ProcessState)
			each = append(each, per(cpuOf(w.ProcessState)))
		}
		execs, events, bytes, tasks := history(b, addr, ns, id)
		// Which worker took the workflow tasks, and how many came off
		// the shared queue (not the sticky one of the worker that has the
		// workflow cached: a worker without it replays the history).
		var took, ran []string
		for _, cmd := range workers {
			took = append(took, strconv.Itoa(tasks.by[strconv.Itoa(cmd.Process.Pid)]))
			ran = append(ran, strconv.Itoa(tasks.steps[strconv.Itoa(cmd.Process.Pid)]))
		}
		b.Logf("%d items, concurrency %d, load %s to %s: local %v (%s cpu-ms/item); Temporal %v (%s cpu-ms/item: workers %s (%s), client %s, server %s); %d executions, %d events (%.2f/item), %.0f KiB (%.0f B/item); %d workflow tasks (%s by worker), %d off the shared queue; steps by worker %s",
			items, conc, load, loadAverage(), lwall.Round(time.Millisecond), per(lcpu), wall.Round(time.Millisecond), per(wcpu+ccpu+srvCPU),
			per(wcpu), strings.Join(each, " + "), per(ccpu), per(srvCPU),
			execs, events, float64(events)/float64(items), float64(bytes)/1024, float64(bytes)/float64(items),
			tasks.n, strings.Join(took, " + "), tasks.shared, strings.Join(ran, " + "))
		b.ReportMetric(float64(items)/wall.Seconds(), "items/s")
		b.ReportMetric(float64((wcpu+ccpu+srvCPU).Microseconds())/1000/float64(items), "cpu-ms/item")
		b.ReportMetric(float64(wcpu.Microseconds())/1000/float64(items), "workers-cpu-ms/item")
		b.ReportMetric(float64(ccpu.Microseconds())/1000/float64(items), "client-cpu-ms/item")
		b.ReportMetric(float64(srvCPU.Microseconds())/1000/float64(items), "server-cpu-ms/item")
		b.ReportMetric(float64(lcpu.Microseconds())/1000/float64(items), "local-cpu-ms/item")
		b.ReportMetric(float64(bytes)/float64(items), "history-B/item")
		b.ReportMetric(float64(execs), "executions")
	}
}

// loadAverage is the machine's 1-, 5- and 15-minute load averages, to
// quote beside the figures: the CPU of a process grows with the load.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if err != nil || len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
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

// workflowTasks counts a run's workflow tasks: n in all, by the process
// id of the worker that took them, and shared: those scheduled on the
// workflow's task queue rather than a worker's sticky queue; and its
// activities (steps) by the worker that ran them.
type workflowTasks struct {
	n, shared int
	by, steps map[string]int
}

// history sums the history of every execution of workflow id: how many
// executions, events and bytes, and its workflow tasks.
func history(tb testing.TB, addr, ns, id string) (execs int, events, size int64, tasks workflowTasks) {
	tb.Helper()
	c, err := client.Dial(client.Options{HostPort: addr, Namespace: ns, Logger: quietLogger()})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	run := ""
	tasks.by, tasks.steps = map[string]int{}, map[string]int{}
	for {
		d, err := c.DescribeWorkflowExecution(ctx, id, run)
		if err != nil {
			tb.Fatalf("describing %s/%s: %v", id, run, err)
		}
		info := d.GetWorkflowExecutionInfo()
		execs++
		events += info.GetHistoryLength()
		size += info.GetHistorySizeBytes()
		// The execution before: the first event of this one names it.
		run = ""
		it := c.GetWorkflowHistory(ctx, id, info.GetExecution().GetRunId(), false, 0)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				tb.Fatal(err)
			}
			if a := ev.GetWorkflowExecutionStartedEventAttributes(); a != nil {
				run = a.GetContinuedExecutionRunId()
			}
			if a := ev.GetWorkflowTaskScheduledEventAttributes(); a != nil && a.GetTaskQueue().GetKind() != enumspb.TASK_QUEUE_KIND_STICKY {
				tasks.shared++
			}
			// The SDK's identity: PID@HOST@.
			if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil {
				tasks.n++
				pid, _, _ := strings.Cut(a.GetIdentity(), "@")
				tasks.by[pid]++
			}
			if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
				pid, _, _ := strings.Cut(a.GetIdentity(), "@")
				tasks.steps[pid]++
			}
		}
		if run == "" || info.GetExecution().GetRunId() == info.GetFirstRunId() {
			return
		}
	}
}
