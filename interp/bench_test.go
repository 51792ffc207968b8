package interp

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func truePlaybook(n int) string {
	var b strings.Builder
	b.WriteString("playbook \"chain\" {}\n")
	for i := range n {
		fmt.Fprintf(&b, "step \"s%d\" {\n  shell { command = [\"/bin/true\"] }\n}\n", i)
	}
	return b.String()
}

// BenchmarkChain200 runs 200 steps of /bin/true with durable state (every
// transition journaled, completions fsynced). Compare with
// BenchmarkBash200: the goal is apl/bash ≤ 1.3.
func BenchmarkChain200(b *testing.B) {
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			pb := load(b, truePlaybook(200))
			dir := b.TempDir()
			for b.Loop() {
				res, err := Start(context.Background(), pb, "chain", Options{Workdir: dir, NoSync: !sync})
				if err != nil || res.Status != StatusCompleted {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkBash200 is the baseline: bash running /bin/true 200 times.
func BenchmarkBash200(b *testing.B) {
	script := strings.Repeat("/bin/true\n", 200)
	for b.Loop() {
		if err := exec.Command("bash", "-c", script).Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckpoint is the cost of one durable transition: a journal
// append and an fsync, with compaction amortized (goal: under 1 ms).
func BenchmarkCheckpoint(b *testing.B) {
	for _, durable := range []bool{true, false} {
		b.Run(fmt.Sprintf("durable=%v", durable), func(b *testing.B) {
			s := newStore(filesFor(filepath.Join(b.TempDir(), stateFile)), true)
			st := newTestState()
			if err := s.snapshot(st); err != nil {
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
				s.touch(name)
				if err := s.commit(st, durable); err != nil {
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
