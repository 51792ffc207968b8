//go:build !race

package temporal

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/server/temporaltest"
)

// Figures of the fan-out benchmark (BENCHMARKS.md, "for_each on
// Temporal"). APL_BENCH_ITEMS changes the item count, for a quick look.
const (
	benchConcurrency = 64 // the for_each's concurrency
	benchWorkerSlots = 16 // steps one worker runs at once
)

func benchItems() int {
	if n, err := strconv.Atoi(os.Getenv("APL_BENCH_ITEMS")); err == nil && n > 0 {
		return n
	}
	return 1000
}

// fanOut is a for_each of one shell step per item.
func fanOut(b *testing.B, command string) (*lang.Playbook, string, map[string]cty.Value) {
	b.Helper()
	src := fmt.Sprintf(`playbook "fanout" {}
input "items" { type = list(string) }
step "work" {
  for_each    = "inputs.items"
  key         = "item"
  concurrency = %d
  step "do" {
    shell { command = %s }
  }
}
`, benchConcurrency, command)
	ref := filepath.Join(b.TempDir(), "fanout.hcl")
	if err := os.WriteFile(ref, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	pb, diags := loader().Load(ref)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	items := make([]cty.Value, benchItems())
	for i := range items {
		items[i] = cty.StringVal(fmt.Sprintf("i%04d", i))
	}
	return pb, ref, map[string]cty.Value{"items": cty.ListVal(items)}
}

// BenchmarkForEachTemporal runs a 1,000-item for_each whose items each
// run one command, on the local engine and on an in-process Temporal
// server with 1, 2 and 4 workers (each running at most 16 steps at
// once, in its own project directory, sharing one blob store). The
// command is `true` (the cost of the engine alone) or `sleep 0.05` (a
// step that waits, so that more workers finish sooner). It reports
// items/s, the wall time per item (ms/item), and for Temporal the
// history's events per item and size.
//
//	go test -run '^$' -bench ForEachTemporal -benchtime 3x -timeout 30m ./interp/temporal/
func BenchmarkForEachTemporal(b *testing.B) {
	quiet := log.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	ts := temporaltest.NewServer(temporaltest.WithBaseClientOptions(client.Options{Logger: quiet}))
	defer ts.Stop()
	c := ts.GetDefaultClient()
	for _, cmd := range []struct{ name, command string }{
		{"true", `["true"]`},
		{"sleep50ms", `["sleep", "0.05"]`},
	} {
		pb, ref, inputs := fanOut(b, cmd.command)
		n := float64(len(inputs["items"].AsValueSlice()))
		b.Run(cmd.name+"/local", func(b *testing.B) {
			dir := b.TempDir()
			cpu := cpuTime()
			for b.Loop() {
				res, err := interp.Start(context.Background(), pb, ref, interp.Options{Workdir: dir, Inputs: inputs, NoSync: true})
				if err != nil || res.Status != interp.StatusCompleted {
					b.Fatal(err, res)
				}
			}
			perItem(b, n, cpuTime()-cpu)
		})
		for _, workers := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%s/workers=%d", cmd.name, workers), func(b *testing.B) {
				queue := fmt.Sprintf("bench-%s-%d", cmd.name, workers)
				blobs := b.TempDir()
				for range workers {
					w, err := NewWorker(c, queue, Config{Loader: loader(), Workdir: b.TempDir(), BlobDir: blobs},
						worker.Options{MaxConcurrentActivityExecutionSize: benchWorkerSlots})
					if err != nil {
						b.Fatal(err)
					}
					if err := w.Start(); err != nil {
						b.Fatal(err)
					}
					defer w.Stop()
				}
				var events, bytes int64
				cpu := cpuTime()
				for b.Loop() {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
					res, _, err := Run(ctx, c, queue, pb, ref, interp.Options{Inputs: inputs})
					if err != nil || res.Status != interp.StatusCompleted {
						cancel()
						b.Fatal(err, res)
					}
					b.StopTimer()
					d, err := c.DescribeWorkflowExecution(ctx, res.RunID, "")
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					events, bytes = d.WorkflowExecutionInfo.HistoryLength, d.WorkflowExecutionInfo.HistorySizeBytes
					b.StartTimer()
				}
				perItem(b, n, cpuTime()-cpu)
				b.ReportMetric(float64(events)/n, "events/item")
				b.ReportMetric(float64(bytes)/1024, "history-KiB")
			})
		}
	}
}

// perItem reports throughput, wall time per item, and the CPU time per
// item of this process: the walk's, and on Temporal the workers' and the
// in-process server's. The commands' own time (the children's) is left
// out: it is the same on both engines.
func perItem(b *testing.B, n float64, cpu time.Duration) {
	run := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(n/run, "items/s")
	b.ReportMetric(run*1000/n, "ms/item")
	b.ReportMetric(cpu.Seconds()*1000/n/float64(b.N), "cpu-ms/item")
}

// cpuTime is the user and system time of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
