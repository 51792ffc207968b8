//go:build !race

package temporal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/client"
)

// priced is a command driver whose every call reports 1,000 tokens and
// $1. A playbook declares it, and its sub-playbook too (a local sub-run
// is served by the drivers of the run that runs it).
const priced = `
driver "priced" {
  type    = "command"
  command = ["sh", "-c", "cat >/dev/null; printf '{\"text\": \"ok\", \"usage\": {\"input_tokens\": 1000}, \"cost_usd\": 1}'"]
  output  = "json"
}
agent "a" { driver = driver.priced }
`

// The parent's caps hold during a sub-run on Temporal as they do in a
// local one: in a sub-playbook step and in one inside a for_each item,
// a sub-run that would cross the parent's tokens, cost, retries or time
// is stopped there, and the parent stops with the same status,
// recommendation and reason, having spent the same.
func TestSubRunHeldToParentCaps(t *testing.T) {
	c := server(t)
	startWorker(t, c, "caps", t.TempDir())
	child := map[string]string{
		"spend": `
step "each" {
  for_each    = "[1, 2, 3, 4, 5, 6]"
  concurrency = 3
  step "do" { agent "a" { prompt = "Do ${item}." } }
}
step "after" { agent "a" { prompt = "After." } }
`,
		"retry": `
step "flaky" {
  retry {
    max     = 5
    backoff = "1ms"
  }
  shell { script = "exit 1" }
}
`,
		"sleep": `
step "slow" { shell { command = ["sleep", "30"] } }
`,
	}
	places := map[string]string{
		"sub-playbook": `
step "phase" {
  playbook { source = "child" }
}
`,
		"sub-playbook in a for_each item": `
step "items" {
  for_each    = "['a', 'b', 'c']"
  concurrency = 1
  step "phase" {
    when = "item == 'b'"
    playbook { source = "child" }
  }
}
`,
	}
	for _, p := range []string{"sub-playbook", "sub-playbook in a for_each item"} {
		for _, e := range []struct{ name, limits, child, reason string }{
			{"max_tokens", "max_tokens = 1500", "spend", "limits.max_tokens: a call of step do may use 1000 tokens"},
			{"max_cost_usd", "max_cost_usd = 1.5", "spend", "limits.max_cost_usd: a call of step do may cost $1.0000"},
			{"max_retries", "max_retries = 2", "retry", "limits.max_retries: a retry beyond the 2 this run may make"},
			{"timeout", `timeout = "3s"`, "sleep", "limits.timeout: the run took longer than 3s"},
		} {
			t.Run(p+"/"+e.name, func(t *testing.T) {
				dir := t.TempDir()
				os.MkdirAll(filepath.Join(dir, "child"), 0o755)
				os.WriteFile(filepath.Join(dir, "child", "main.hcl"), []byte("playbook \"child\" {}\n"+priced+child[e.child]), 0o644)
				ref := filepath.Join(dir, "parent.hcl")
				os.WriteFile(ref, []byte("playbook \"p\" {}\n"+priced+"limits { "+e.limits+" }\n"+places[p]+`
step "later" { agent "a" { prompt = "Later." } }
output { tokens = run.tokens }
`), 0o644)
				local, remote := bothStopped(t, c, "caps", ref, fmt.Sprintf("caps-%s-%s", strings.ReplaceAll(p, " ", "-"), e.name), e.reason, nil)
				if string(local.OutputJSON) != string(remote.OutputJSON) {
					t.Errorf("spent: local %s, Temporal %s", local.OutputJSON, remote.OutputJSON)
				}
			})
		}
	}
}

// A sub-run on Temporal that trips a cap of its parent's stops the
// parent at once, as a local sub-run does: no item of the parent's
// for_each starts after the trip, though the sub-run's result comes a
// second later (its finally step lingers). Before, the parent learned of
// the trip from that result, and went on starting items until it came.
func TestSubRunTripStopsParentAtOnce(t *testing.T) {
	c := server(t)
	startWorker(t, c, "trip", t.TempDir())
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	items := make([]string, 40)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	// The second call does not fit in what the parent leaves: the trip.
	ref := subRunFiles(dir, priced, `
step "spend" {
  for_each    = "[1, 2]"
  concurrency = 1
  step "call" { agent "a" { prompt = "Spend." } }
}
finally {
  step "linger" { shell { command = ["sh", "-c", "echo tripped >> `+log+`; sleep 1"] } }
}
`, `
limits { max_tokens = 1500 }
step "items" {
  for_each    = "[`+strings.Join(items, ", ")+`]"
  concurrency = 2
  step "phase" {
    when = "item == 1"
    playbook { source = "child" }
  }
  step "work" {
    when = "item != 1"
    shell { command = ["sh", "-c", "echo item >> `+log+`"] }
  }
}
`)
	pb, diags := loader().Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	// after is how many items logged after the trip. With concurrency 2,
	// one item may run beside the sub-run: started before the trip, it
	// can still write its line after the sub-run's finally wrote its
	// own (seen on a loaded machine), so one such line is allowed. Any
	// more started after the trip (9 did on Temporal before the fix).
	const inFlight = 1
	after := func() int {
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		os.Remove(log)
		_, rest, ok := strings.Cut(string(data), "tripped\n")
		if !ok {
			t.Fatalf("the sub-run did not trip: %s", data)
		}
		return strings.Count(rest, "item")
	}
	local, err := interp.Start(context.Background(), pb, ref, interp.Options{Workdir: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := after(); n > inFlight {
		t.Errorf("local: %d item(s) started after the trip", n-inFlight)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	remote, _, err := Run(ctx, c, "trip", pb, ref, interp.Options{RunID: "trip-at-once"})
	if err != nil {
		t.Fatal(err)
	}
	if n := after(); n > inFlight {
		t.Errorf("Temporal: %d item(s) started after the trip", n-inFlight)
	}
	for engine, res := range map[string]*interp.Result{"local": local, "Temporal": remote} {
		if res.Status != interp.StatusFailed || res.Recommendation != "halt" || !strings.Contains(res.Reason, "limits.max_tokens") {
			t.Errorf("%s: ended %s (%q): %s", engine, res.Status, res.Recommendation, res.Reason)
		}
	}
	if local.Reason != remote.Reason {
		t.Errorf("reason: local %q, Temporal %q", local.Reason, remote.Reason)
	}
}

// Sub-runs running at once on Temporal share what is left of their
// parent's caps, as local ones do: four sub-playbooks of a for_each at
// concurrency 4, each making two calls of 1,000 tokens, under a parent's
// max_tokens of 2,500, run by the parent itself or by a sub-playbook of
// it (their calls reserve from the parent through the run between).
// Each was held to a copy of the 2,500 left when it started, so together
// they spent 8,000. Now each call reserves from the parent as it goes:
// two calls fit, the third is refused, the parent's budget closes, and
// every sibling is refused at its next call. The run spends what the
// local run spends, within the cap, in as many calls.
func TestSubRunsShareParentCaps(t *testing.T) {
	c := server(t)
	startWorker(t, c, "share", t.TempDir())
	each := func(child string) string {
		return `
step "items" {
  for_each    = "['a', 'b', 'c', 'd']"
  concurrency = 4
  step "phase" { playbook { source = "` + child + `" } }
}
`
	}
	for _, shape := range []struct{ name, parent, middle string }{
		{"sub-playbooks", each("child"), ""},
		{"sub-playbooks of a sub-playbook", `
step "middle" { playbook { source = "middle" } }
`, each("../child")},
	} {
		t.Run(shape.name, func(t *testing.T) {
			dir := t.TempDir()
			log := filepath.Join(dir, "calls")
			counted := strings.Replace(priced, "cat >/dev/null;", "cat >/dev/null; echo call >> "+log+";", 1)
			for name, text := range map[string]string{
				"child": `
step "one" {
  max_tokens = 1000
  agent "a" { prompt = "One." }
}
step "two" {
  max_tokens = 1000
  agent "a" { prompt = "Two." }
}
`,
				"middle": shape.middle,
				"parent": `
limits { max_tokens = 2500 }
` + shape.parent + `
output { tokens = run.tokens }
`,
			} {
				decl := counted
				if name != "child" {
					// The driver serves a local sub-run's calls; no step
					// here uses the agent.
					decl, _, _ = strings.Cut(counted, "agent ")
				}
				file := filepath.Join(dir, name, "main.hcl")
				if name == "parent" {
					file = filepath.Join(dir, "parent.hcl")
				}
				os.MkdirAll(filepath.Dir(file), 0o755)
				os.WriteFile(file, []byte("playbook \""+name+"\" {}\n"+decl+text), 0o644)
			}
			calls := map[string]int{}
			local, remote := bothStopped(t, c, "share", filepath.Join(dir, "parent.hcl"), "share-"+strings.ReplaceAll(shape.name, " ", "-"), "limits.max_tokens",
				func(engine string) {
					data, _ := os.ReadFile(log)
					os.Remove(log)
					calls[engine] = strings.Count(string(data), "call")
				})
			localCalls, remoteCalls := calls["local"], calls["Temporal"]
			for engine, res := range map[string]*interp.Result{"local": local, "Temporal": remote} {
				if res.Metrics.TotalTokens > 2500 {
					t.Errorf("%s: spent %d tokens, over the parent's max_tokens of 2500", engine, res.Metrics.TotalTokens)
				}
			}
			if string(local.OutputJSON) != string(remote.OutputJSON) || localCalls != remoteCalls {
				t.Errorf("spent: local %s in %d calls, Temporal %s in %d calls", local.OutputJSON, localCalls, remote.OutputJSON, remoteCalls)
			}
		})
	}
}

// Sub-runs running at once on Temporal share their parent's
// max_retries, as local ones do: three sub-playbooks of a for_each at
// concurrency 3, each retrying a failing step up to 4 times, under a
// parent's max_retries of 3. Each was held to a copy of the 3 left when
// it started, so together they made 9 retries; now each retry is
// counted by the parent as it is made, and the run makes 3 at most, as
// the local run does (fewer when a sub-run's retry counted in time is
// not made because a sibling's tripped the cap during its backoff, or a
// sub-run had not made its first attempt when the cap tripped).
func TestSubRunsShareParentRetries(t *testing.T) {
	c := server(t)
	startWorker(t, c, "retries", t.TempDir())
	dir := t.TempDir()
	log := filepath.Join(dir, "attempts")
	ref := subRunFiles(dir, "", `
input "name" { type = string }
step "flaky" {
  retry {
    max     = 4
    backoff = "1ms"
  }
  shell { script = "echo ${inputs.name} >> `+log+`; exit 1" }
}
`, `
limits { max_retries = 3 }
step "items" {
  for_each    = "['a', 'b', 'c']"
  concurrency = 3
  step "phase" {
    playbook {
      source = "child"
      inputs = { name = item }
    }
  }
}
`)
	// retries are the attempts after each sub-run's first.
	retries := map[string]int{}
	bothStopped(t, c, "retries", ref, "share-retries", "limits.max_retries", func(engine string) {
		data, _ := os.ReadFile(log)
		os.Remove(log)
		for _, name := range []string{"a", "b", "c"} {
			retries[engine] += max(strings.Count(string(data), name+"\n")-1, 0)
		}
	})
	localRetries, remoteRetries := retries["local"], retries["Temporal"]
	if localRetries > 3 || remoteRetries > 3 || remoteRetries == 0 {
		t.Errorf("retries: local %d, Temporal %d, under a max_retries of 3", localRetries, remoteRetries)
	}
}

// bothStopped runs the playbook at ref locally, then on the workers of
// queue as run id, calls after (if set) once each run ended with which
// engine ran it, and checks that both stopped at a cap: failed, with
// recommendation halt and a reason that holds reason.
func bothStopped(t *testing.T, c client.Client, queue, ref, id, reason string, after func(engine string)) (local, remote *interp.Result) {
	t.Helper()
	pb, diags := loader().Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	local, err := interp.Start(context.Background(), pb, ref, interp.Options{Workdir: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if after != nil {
		after("local")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	remote, _, err = Run(ctx, c, queue, pb, ref, interp.Options{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	if after != nil {
		after("Temporal")
	}
	for engine, res := range map[string]*interp.Result{"local": local, "Temporal": remote} {
		if res.Status != interp.StatusFailed || res.Recommendation != "halt" || !strings.Contains(res.Reason, reason) {
			t.Errorf("%s: ended %s (%q): %s", engine, res.Status, res.Recommendation, res.Reason)
		}
	}
	return local, remote
}
