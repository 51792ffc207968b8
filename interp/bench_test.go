package interp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/zclconf/go-cty/cty"
)

// reportCPU reports the CPU the benchmark process itself used per
// operation (user + system, the children it spawned excluded): apl's own
// cost, which the machine's load disturbs far less than wall time. Call
// it before the loop and the function it returns after.
func reportCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() { b.ReportMetric(float64(cpu()-start)/float64(b.N)/1e6, "cpu-ms/op") }
}

// reportSwitches reports the voluntary context switches per step of a
// benchmark whose every operation runs steps processes: those of the
// benchmark process's threads and of its waited-for children
// (getrusage's ru_nvcsw). Each is a thread or process waiting for
// another, a hand-off, which on a virtual machine costs wall time out of
// proportion to its CPU. Unlike wall time the count hardly moves with
// the machine's load (involuntary switches, preemptions, do, and are
// left out). Call it before the loop and the function it returns after.
func reportSwitches(b *testing.B, steps int) func() {
	count := func() int64 {
		var self, children syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
		return self.Nvcsw + children.Nvcsw
	}
	start := count()
	return func() { b.ReportMetric(float64(count()-start)/float64(b.N*steps), "vcsw/step") }
}

func truePlaybook(n int) string {
	var b strings.Builder
	b.WriteString("playbook \"chain\" {}\n")
	for i := range n {
		fmt.Fprintf(&b, "step \"s%d\" {\n  shell { command = [\"/bin/true\"] }\n}\n", i)
	}
	return b.String()
}

// BenchmarkChain200 runs 200 steps of /bin/true, every transition
// journaled, completions fsynced each (always), in groups (group, the
// default) or not at all (off). Compare with BenchmarkBash200: the goal
// is apl/bash ≤ 1.3.
func BenchmarkChain200(b *testing.B) {
	for _, sync := range []string{"always", "group", "off"} {
		b.Run("sync="+sync, func(b *testing.B) {
			pb := load(b, truePlaybook(200))
			dir := b.TempDir()
			b.ReportAllocs()
			done, switches := reportCPU(b), reportSwitches(b, 200)
			for b.Loop() {
				res, err := Start(context.Background(), pb, "chain", Options{Workdir: dir, NoSync: sync == "off", SyncAlways: sync == "always"})
				if err != nil || res.Status != StatusCompleted {
					b.Fatal(err, res)
				}
			}
			done()
			switches()
		})
	}
}

// BenchmarkBash200 is the baseline: bash running /bin/true 200 times.
func BenchmarkBash200(b *testing.B) {
	script := strings.Repeat("/bin/true\n", 200)
	switches := reportSwitches(b, 200)
	for b.Loop() {
		if err := exec.Command("bash", "-c", script).Run(); err != nil {
			b.Fatal(err)
		}
	}
	switches()
}

// BenchmarkCheckpoint is the cost of one durable transition: a journal
// append and an fsync, with compaction amortized (goal: under 1 ms).
func BenchmarkCheckpoint(b *testing.B) {
	for _, durable := range []bool{true, false} {
		b.Run(fmt.Sprintf("durable=%v", durable), func(b *testing.B) {
			s := newStore(filesFor(filepath.Join(b.TempDir(), stateFile)), true, true)
			st := newTestState()
			if err := s.snapshot(st, &changes{}); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				name := fmt.Sprintf("s%d", i%50)
				rec := st.Steps[name]
				if rec == nil {
					rec = &StepRecord{}
					st.Steps[name] = rec
				}
				rec.Attempts++
				st.Events = append(st.Events, Event{Type: EventStepCompleted, Step: name})
				var ch changes
				ch.step(name)
				if err := s.commit(st, &ch, durable); err != nil {
					b.Fatal(err)
				}
				// Runs this long are rare; keep the event log from growing
				// without bound across b.N.
				if len(st.Events) > 1000 {
					st.Events = st.Events[:0]
					s.events = 0
				}
			}
			s.close()
		})
	}
}

// BenchmarkStoreChain500 is what the store costs a 500-step chain (as
// BenchmarkChain500 runs it, without the processes): one journal line a
// step, the compactions, the final snapshot; not synced.
func BenchmarkStoreChain500(b *testing.B) {
	b.ReportAllocs()
	done := reportCPU(b)
	for b.Loop() {
		s := newStore(filesFor(filepath.Join(b.TempDir(), stateFile)), false, false)
		st := newTestState()
		st.Meta.Playbook, st.Meta.PlaybookRef, st.Meta.Workdir = "chain", "chain.hcl", "/tmp/work"
		st.Meta.PlaybookHash = strings.Repeat("d3", 32)
		start := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
		st.Meta.StartedAt = start
		if err := s.snapshot(st, &changes{}); err != nil {
			b.Fatal(err)
		}
		for i := range 500 {
			name := fmt.Sprintf("s%d", i)
			t0, t1 := start.Add(time.Duration(i)*time.Millisecond), start.Add(time.Duration(i)*time.Millisecond+800*time.Microsecond)
			code := 0
			st.Steps[name] = &StepRecord{Status: StepCompleted, Attempts: 1, Runs: 1, Output: json.RawMessage(`""`), ExitCode: &code,
				StartedAt: &t0, CompletedAt: &t1, DurationS: t1.Sub(t0).Seconds()}
			st.Events = append(st.Events, Event{Time: t0, Type: EventStepStarted, Step: name, Attempt: 1},
				Event{Time: t1, Type: EventStepCompleted, Step: name, Attempt: 1, Details: map[string]any{"agent_calls": 0, "duration_s": t1.Sub(t0).Seconds()}})
			st.Meta.CurrentStep, st.Meta.LastCheckpoint = fmt.Sprintf("s%d", i+1), t1
			st.Metrics.StepsRun++
			st.Metrics.DurationS = t1.Sub(start).Seconds()
			var ch changes
			ch.step(name)
			if err := s.commit(st, &ch, true); err != nil {
				b.Fatal(err)
			}
		}
		st.Meta.Status = StatusCompleted
		if err := s.snapshot(st, &changes{}); err != nil {
			b.Fatal(err)
		}
		s.close()
	}
	done()
}

// BenchmarkForEach1000 schedules 1,000 items with random dependencies
// whose one step does nothing (an in-process step): the cost per item is
// the scheduler's, plus the state journal (not synced). Goal: under
// 50 µs per item.
func BenchmarkForEach1000(b *testing.B) {
	pb := load(b, `
playbook "dag" {}
input "tasks" {
  type = list(object({ id = string, blocked_by = list(string) }))
}
step "work" {
  for_each    = "inputs.tasks"
  key         = "item.id"
  depends_on  = "item.blocked_by"
  concurrency = 8
  step "noop" {}
}
`)
	rng := rand.New(rand.NewPCG(1, 2))
	var tasks []cty.Value
	for i := range 1000 {
		var deps []cty.Value
		for range rng.IntN(3) {
			if i > 0 {
				deps = append(deps, cty.StringVal(fmt.Sprintf("t%d", rng.IntN(i))))
			}
		}
		dl := cty.ListValEmpty(cty.String)
		if len(deps) > 0 {
			dl = cty.ListVal(deps)
		}
		tasks = append(tasks, cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal(fmt.Sprintf("t%d", i)), "blocked_by": dl}))
	}
	inputs := map[string]cty.Value{"tasks": cty.ListVal(tasks)}
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		res, err := Start(context.Background(), pb, "dag", Options{Workdir: dir, Inputs: inputs, NoSync: true})
		if err != nil || res.Status != StatusCompleted {
			b.Fatal(err, res)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000/1000, "µs/item")
}

// bigAnswer is a driver that answers with a fixed text.
type bigAnswer struct{ text string }

func (d bigAnswer) Call(ctx context.Context, req agent.Request) (agent.Response, error) {
	return agent.Response{Text: d.text}, nil
}

// BenchmarkAgentAnswer50MB is a run whose one agent step answers 50 MB
// of text, against writing the same bytes to a file (issue 9: goal at most
// 3× the plain write).
func BenchmarkAgentAnswer50MB(b *testing.B) {
	line := strings.Repeat("abcdefghij", 10) + "\n"
	text := strings.Repeat(line, 50<<20/len(line))
	b.Run("write", func(b *testing.B) {
		dir := b.TempDir()
		data := []byte(text) // converted once: the loop times the write alone
		b.SetBytes(int64(len(text)))
		done := reportCPU(b)
		for b.Loop() {
			if err := os.WriteFile(filepath.Join(dir, "answer"), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		done()
	})
	b.Run("run", func(b *testing.B) {
		pb := load(b, `
playbook "big" {}
agent "a" { type = "general-purpose" }
prompt "p" { template = "go" }
step "ask" {
  agent "a" { prompt = prompt.p }
}
`)
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		done := reportCPU(b)
		for b.Loop() {
			res, err := Start(context.Background(), pb, "big", Options{Workdir: b.TempDir(), NoSync: true, Drivers: drivers(bigAnswer{text})})
			if err != nil || res.Status != StatusCompleted {
				b.Fatal(err, res)
			}
		}
		done()
	})
	// The same answer printed by a command driver's process (cat), which
	// apl streams to the response artifact.
	b.Run("command", func(b *testing.B) {
		pb := load(b, `
playbook "big" {}
agent "a" { type = "general-purpose" }
prompt "p" { template = "go" }
step "ask" {
  agent "a" { prompt = prompt.p }
}
`)
		src := filepath.Join(b.TempDir(), "answer")
		if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		done := reportCPU(b)
		for b.Loop() {
			res, err := Start(context.Background(), pb, "big", Options{Workdir: b.TempDir(), NoSync: true, AgentCommand: []string{"cat", src}})
			if err != nil || res.Status != StatusCompleted {
				b.Fatal(err, res)
			}
		}
		done()
	})
}

// BenchmarkChain500 is 500 steps of /bin/true with each durability
// (as BenchmarkChain200); BenchmarkSpawn500 is a Go loop spawning the same
// processes. Goals: chain ÷ spawn ≤ 1.15 by default, ≤ 1.05 with sync off.
func BenchmarkChain500(b *testing.B) {
	for _, sync := range []string{"always", "group", "off"} {
		b.Run("sync="+sync, func(b *testing.B) {
			pb := load(b, truePlaybook(500))
			dir := b.TempDir()
			b.ReportAllocs()
			done, switches := reportCPU(b), reportSwitches(b, 500)
			for b.Loop() {
				res, err := Start(context.Background(), pb, "chain", Options{Workdir: dir, NoSync: sync == "off", SyncAlways: sync == "always"})
				if err != nil || res.Status != StatusCompleted {
					b.Fatal(err, res)
				}
			}
			done()
			switches()
		})
	}
}

// BenchmarkSpawn500 is the floor: a Go loop running /bin/true 500 times.
func BenchmarkSpawn500(b *testing.B) {
	b.ReportAllocs()
	done, switches := reportCPU(b), reportSwitches(b, 500)
	for b.Loop() {
		for range 500 {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	}
	done()
	switches()
}

// BenchmarkDocumentForEach1000 is a 1,000-item for_each whose document
// shows every item's status: the document is projected at each of the
// run's checkpoints (two or more per item), each time over every item.
func BenchmarkDocumentForEach1000(b *testing.B) {
	for _, doc := range []bool{false, true} {
		b.Run(fmt.Sprintf("document=%v", doc), func(b *testing.B) {
			src := `
playbook "docs" {}
step "work" {
  for_each    = "map(1..1000, string(#))"
  key         = "item"
  concurrency = 8
  step "noop" {}
}
`
			if doc {
				src += `
document "tasks" {
  path = "tasks.json"
  content = {
    tasks = try({ for k, it in steps.work.output.items : k => it.status }, {})
  }
}
`
			}
			pb := load(b, src)
			dir := b.TempDir()
			b.ReportAllocs()
			for b.Loop() {
				res, err := Start(context.Background(), pb, "docs", Options{Workdir: dir, NoSync: true})
				if err != nil || res.Status != StatusCompleted {
					b.Fatal(err, res)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000/1000, "µs/item")
		})
	}
}
