//go:build !race

package temporal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// subRunFiles writes, in dir, a sub-playbook ./child (playbook "child":
// driver, its agent, and child) and a parent (playbook "p": driver's
// driver block, and parent), and returns the parent's file.
func subRunFiles(dir, driver, child, parent string) string {
	os.MkdirAll(filepath.Join(dir, "child"), 0o755)
	os.WriteFile(filepath.Join(dir, "child", "main.hcl"), []byte("playbook \"child\" {}\n"+driver+child), 0o644)
	// The driver serves a local sub-run's calls; no step of the parent's
	// uses the agent.
	decl, _, _ := strings.Cut(driver, "agent ")
	ref := filepath.Join(dir, "parent.hcl")
	os.WriteFile(ref, []byte("playbook \"p\" {}\n"+decl+parent), 0o644)
	return ref
}

// callsInOrder is a child's step "each" that makes calls agent calls of
// step "do" one after another, each capped by the step at stepCap
// tokens (none: 0), with then after each.
func callsInOrder(calls, stepCap int, then string) string {
	capped := ""
	if stepCap > 0 {
		capped = fmt.Sprintf("max_tokens = %d\n", stepCap)
	}
	return fmt.Sprintf(`
step "each" {
  for_each    = "range(%d)"
  concurrency = 1
  step "do" {
    %s    agent "a" { prompt = "Do ${item}." }
  }
%s
}
`, calls, capped, then)
}

// phaseUnder is a parent's body: limits, and one sub-playbook step
// "phase" that runs ./child, then rest.
func phaseUnder(limits, rest string) string {
	return "limits { " + limits + " }\nstep \"phase\" { playbook { source = \"child\" } }\n" + rest
}

// historyLength is how many events the history of workflow id holds.
func historyLength(t *testing.T, c client.Client, id string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		t.Fatal(err)
	}
	return int(d.GetWorkflowExecutionInfo().GetHistoryLength())
}

// Each agent call of a sub-run under a capped parent adds at most 9
// events to the parent's history when calls follow one another, and 13
// when a step without a call comes between: one round trip (the
// reservation, carrying what the call before spent, and its answer),
// and, when nothing carries it, what the call spent alone, unanswered.
// Before, each call was two round trips, 18 events, so a parent that
// cannot continue as new while its sub-run runs reached Temporal's limit
// of 51,200 events after about 2,800 calls.
func TestSubRunCallsAddFewEventsToParent(t *testing.T) {
	c := server(t)
	startWorker(t, c, "per-call", t.TempDir())
	for _, shape := range []struct {
		name, between string
		most          float64
	}{
		{"calls one after another", "", 9},
		{"calls between shell steps", `  step "note" { shell { command = ["true"] } }`, 13},
	} {
		t.Run(shape.name, func(t *testing.T) {
			lengths := map[int]int{}
			for _, n := range []int{2, 12} {
				ref := subRunFiles(t.TempDir(), priced, callsInOrder(n, 1000, shape.between),
					phaseUnder("max_tokens = 1000000", "output { tokens = run.tokens }\n"))
				pb, diags := loader().Load(ref)
				if diags.HasErrors() {
					t.Fatal(diags)
				}
				id := fmt.Sprintf("per-call-%s-%d", strings.ReplaceAll(shape.name, " ", "-"), n)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				res, _, err := Run(ctx, c, "per-call", pb, ref, interp.Options{RunID: id})
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if got := string(res.OutputJSON); got != fmt.Sprintf(`{"tokens":%d}`, 1000*n) {
					t.Fatalf("%d calls: %s, output %s", n, res.Status, got)
				}
				lengths[n] = historyLength(t, c, id)
			}
			per := float64(lengths[12]-lengths[2]) / 10
			t.Logf("parent's history: %d events with 2 calls, %d with 12: %.1f events per call", lengths[2], lengths[12], per)
			if per > shape.most {
				t.Errorf("each call of the sub-run adds %.1f events to the parent's history, more than %.0f", per, shape.most)
			}
		})
	}
}

// A parent whose history reaches the worker's RelayLimit while a sub-run
// reserves from it (it cannot continue as new then) refuses the
// sub-run's calls, which stop the sub-run and the run as a cap does:
// both end failed with a reason that names the sub-run and the figure,
// and their finally steps run. Before, nothing bounded the parent's
// history: the sub-run made all its calls, and at Temporal's limit the
// server would have ended the run with no finally run.
func TestSubRunRefusedNearParentHistoryLimit(t *testing.T) {
	c := server(t)
	const limit = 150
	w, err := NewWorker(c, "guard", Config{Loader: loader(), Workdir: t.TempDir(), RelayLimit: limit}, worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	counted := strings.Replace(priced, "cat >/dev/null;", "cat >/dev/null; echo call >> "+log+";", 1)
	tidy := func(who string) string {
		return `finally {
  step "tidy" { shell { command = ["sh", "-c", "echo ` + who + `-finally >> ` + log + `"] } }
}
`
	}
	ref := subRunFiles(dir, counted, callsInOrder(40, 1000, "")+tidy("child"), phaseUnder("max_tokens = 1000000", tidy("parent")))
	pb, diags := loader().Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, _, err := Run(ctx, c, "guard", pb, ref, interp.Options{RunID: "guard"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"history holds", "limit for it is 150", "sub-run guard/phase-1 (step phase)"} {
		if res.Status != interp.StatusFailed || !strings.Contains(res.Reason, want) {
			t.Errorf("the run ended %s: %s; want failed, with %q", res.Status, res.Reason, want)
		}
	}
	data, _ := os.ReadFile(log)
	calls := strings.Count(string(data), "call")
	if calls >= 40 || !strings.Contains(string(data), "child-finally") || !strings.Contains(string(data), "parent-finally") {
		t.Errorf("the sub-run made %d of its 40 calls; the log:\n%s", calls, data)
	}
	if n := historyLength(t, c, "guard"); n > limit+60 {
		t.Errorf("the parent's history holds %d events, far past its limit of %d", n, limit)
	}
	t.Logf("%d calls; %s", calls, res.Reason)
}

// A sub-run whose call spends more than it reserved and crosses its
// parent's cap stops before its next step, as locally, though it no
// longer waits for the parent's answer to every call it settles: a call
// that spent more than its reservation allows still waits. Each call of
// step "do" spends 1,000 tokens more than the one before; the first
// finds out what a call spends (a probe), the second reserves those
// 1,000, spends 2,000 and crosses the parent's max_tokens of 2,500, and
// the shell step after it does not run, on either engine.
func TestSubRunCrossingParentCapStopsBeforeNextStep(t *testing.T) {
	c := server(t)
	startWorker(t, c, "cross", t.TempDir())
	dir := t.TempDir()
	log, count := filepath.Join(dir, "log"), filepath.Join(dir, "count")
	growing := `
driver "growing" {
  type    = "command"
  command = ["sh", "-c", "cat >/dev/null; echo >> ` + count + `; n=$(wc -l < ` + count + `); printf '{\"text\": \"ok\", \"usage\": {\"input_tokens\": %d000}}' $n"]
  output  = "json"
}
agent "a" { driver = driver.growing }
`
	ref := subRunFiles(dir, growing, callsInOrder(2, 0, "")+`
step "after" { shell { command = ["sh", "-c", "echo after >> `+log+`"] } }
`, phaseUnder("max_tokens = 2500", "output { tokens = run.tokens }\n"))
	ran := map[string]bool{}
	local, remote := bothStopped(t, c, "cross", ref, "cross", "limits.max_tokens", func(engine string) {
		_, err := os.Stat(log)
		ran[engine] = err == nil
		os.Remove(log)
		os.Remove(count)
	})
	if ran["local"] || ran["Temporal"] {
		t.Errorf("the step after the crossing call ran: locally %v, on Temporal %v", ran["local"], ran["Temporal"])
	}
	if local.Reason != remote.Reason || string(local.OutputJSON) != string(remote.OutputJSON) {
		t.Errorf("local %s: %s; Temporal %s: %s", local.OutputJSON, local.Reason, remote.OutputJSON, remote.Reason)
	}
	t.Logf("%s: %s", remote.OutputJSON, remote.Reason)
}

// A sub-run whose call is under way when a sibling's call crosses their
// parent's cap stops before its next step, as locally, though the
// parent no longer answers a call that spent within its reservation:
// the parent tells every sub-run it serves of the trip, unasked, before
// it answers the one that crossed it. "big" and "slow" run at once
// after "warm" found out what a call spends (1,000 tokens); slow's call
// waits until big's has started, big's spends 4,000 and crosses the
// parent's max_tokens of 4,500, and slow's ends only once big's sub-run
// has stopped. Neither runs its step after the call, on either engine.
func TestSiblingStopsBeforeNextStepWhenACapCloses(t *testing.T) {
	c := server(t)
	startWorker(t, c, "sibling", t.TempDir())
	dir := t.TempDir()
	log, started, stopped := filepath.Join(dir, "log"), filepath.Join(dir, "started"), filepath.Join(dir, "stopped")
	wait := func(f string) string {
		return `i=0; while [ ! -e ` + f + ` ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done;`
	}
	script := `p=$(cat); case "$p" in *slow*) touch ` + started + `; ` + wait(stopped) + ` n=1000;; *big*) ` + wait(started) +
		` n=4000;; *) n=1000;; esac; printf '{"text": "ok", "usage": {"input_tokens": %d}}' $n`
	driver := `
driver "modal" {
  type    = "command"
  command = ["sh", "-c", ` + strconv.Quote(script) + `]
  output  = "json"
}
agent "a" { driver = driver.modal }
`
	ref := subRunFiles(dir, driver, `
input "mode" { type = string }
step "do" { agent "a" { prompt = "Mode ${inputs.mode}." } }
step "after" { shell { command = ["sh", "-c", "echo after-${inputs.mode} >> `+log+`"] } }
finally {
  step "tidy" { shell { command = ["sh", "-c", "[ ${inputs.mode} != big ] || touch `+stopped+`"] } }
}
`, `
limits { max_tokens = 4500 }
step "warm" {
  playbook {
    source = "child"
    inputs = { mode = "warm" }
  }
}
step "both" {
  for_each    = "['big', 'slow']"
  concurrency = 2
  step "phase" {
    playbook {
      source = "child"
      inputs = { mode = item }
    }
  }
}
output { tokens = run.tokens }
`)
	logs := map[string]string{}
	local, remote := bothStopped(t, c, "sibling", ref, "sibling", "limits.max_tokens", func(engine string) {
		data, _ := os.ReadFile(log)
		logs[engine] = string(data)
		for _, f := range []string{log, started, stopped} {
			os.Remove(f)
		}
	})
	for engine, l := range logs {
		if l != "after-warm\n" {
			t.Errorf("%s: the steps after the calls that ran: %q, want only warm's", engine, l)
		}
	}
	if string(local.OutputJSON) != string(remote.OutputJSON) {
		t.Errorf("spent: local %s, Temporal %s", local.OutputJSON, remote.OutputJSON)
	}
}
