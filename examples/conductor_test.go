package examples_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
)

// call is one agent call of the conductor example, from its agent's log.
type call struct {
	step, item string
	start, end int64
}

// readCalls reads the log agent.sh writes: "start STEP ITEM NANOS" and
// "end STEP ITEM NANOS" lines.
func readCalls(t *testing.T, path string) []call {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	open := map[string]*call{}
	var calls []call
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("bad log line %q", line)
		}
		ns, _ := strconv.ParseInt(f[3], 10, 64)
		key := f[1] + " " + f[2]
		if f[0] == "start" {
			open[key] = &call{step: f[1], item: f[2], start: ns}
			continue
		}
		c := open[key]
		c.end = ns
		calls = append(calls, *c)
		delete(open, key)
	}
	sort.Slice(calls, func(i, j int) bool { return calls[i].start < calls[j].start })
	return calls
}

// maxOverlap is the most calls that keep ran at the same time.
func maxOverlap(calls []call, keep func(call) bool) int {
	type ev struct {
		at    int64
		delta int
	}
	var evs []ev
	for _, c := range calls {
		if keep(c) {
			evs = append(evs, ev{c.start, 1}, ev{c.end, -1})
		}
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return evs[i].delta < evs[j].delta
	})
	n, most := 0, 0
	for _, e := range evs {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// TestConductor runs the conductor example (examples/conductor) with its
// example agent: the task graph, the opus limit, the serial review queue,
// a rejected task retried with feedback, and a high-severity rejection
// that pauses the run for a person, who skips the task on resume.
func TestConductor(t *testing.T) {
	pb, diags := lang.Load("conductor")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	work := t.TempDir()
	os.MkdirAll(filepath.Join(work, ".homerun"), 0o755)
	tasks, _ := os.ReadFile("conductor/.homerun/tasks.json")
	os.WriteFile(filepath.Join(work, ".homerun", "tasks.json"), tasks, 0o644)
	script, _ := filepath.Abs("conductor/agent.sh")
	logFile := filepath.Join(work, "calls.log")
	opts := interp.Options{
		Workdir:      work,
		AgentCommand: []string{"env", "CONDUCTOR_LOG=" + logFile, "bash", script},
		NoSync:       true,
	}
	res, err := interp.Start(context.Background(), pb, "conductor", opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interp.StatusWaiting || !strings.Contains(res.Reason, "escalate[T3]") {
		t.Fatalf("status %s (%s), want waiting at escalate[T3]", res.Status, res.Reason)
	}
	opts.Answers = map[string]string{"escalate[T3]": "skip"}
	res, err = interp.Resume(context.Background(), pb, res.Dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interp.StatusCompleted || string(res.OutputJSON) != `{"blocked":[],"completed":6,"failed":[]}` {
		t.Fatalf("status %s output %s (%s)", res.Status, res.OutputJSON, res.Reason)
	}

	calls := readCalls(t, logFile)
	if n := maxOverlap(calls, func(c call) bool { return c.step == "review" }); n != 1 {
		t.Errorf("%d reviews ran at once; the review queue is serial", n)
	}
	if n := maxOverlap(calls, func(c call) bool { return c.step == "implement_opus" }); n != 1 {
		t.Errorf("%d opus implementers ran at once; the limit is 1", n)
	}
	if n := maxOverlap(calls, func(c call) bool { return true }); n > 3 {
		t.Errorf("%d agent calls ran at once; at most 3 tasks run", n)
	}
	ends := map[string]int64{} // item → its last call's end
	firsts := map[string]int64{}
	counts := map[string]int{}
	for _, c := range calls {
		ends[c.item] = max(ends[c.item], c.end)
		if _, ok := firsts[c.item]; !ok {
			firsts[c.item] = c.start
		}
		counts[c.step+" "+c.item]++
	}
	if firsts["T2"] < ends["T1"] {
		t.Error("T2 started before T1, which it is blocked by, was done")
	}
	if firsts["T5"] < ends["T3"] {
		t.Error("T5 started before T3 was settled")
	}
	if counts["implement_sonnet T2"] != 2 || counts["review T2"] != 2 {
		t.Errorf("T2 was not retried once after its rejection: %v", counts)
	}
	if counts["review T3"] != 1 {
		t.Errorf("T3 was reviewed %d times; the person skipped it", counts["review T3"])
	}
}
