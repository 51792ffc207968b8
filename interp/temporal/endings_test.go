//go:build !race

package temporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
)

// The Temporal counterpart of interp's TestEveryEndingEverywhere: the
// same endings in the same places, each playbook run locally and on
// Temporal. The playbooks are those of the local matrix, with one
// change: their agent is a command driver (a Temporal worker makes the
// driver a profile names, so a test's Go driver cannot serve it) that
// logs each call and prices the trigger's at 150 tokens and $2, every
// other at 1 token and $0.01, as the local matrix's driver does.

// ending is a way a frame can end, as the step "trigger" brings it
// about: its playbook-level blocks (caps, breaker) and the trigger
// step's body. Every frame runs trigger, then after; after must never
// run.
type ending struct {
	name   string
	blocks string // limits and circuit_breaker, in the playbook that holds them
	body   string // the trigger step's body
	// stops is set for an ending that stops the whole run: nothing runs
	// after it, not even the main step "later" after the place.
	stops bool
}

var endings = []ending{
	{name: "fail value", body: `
  shell { command = ["true"] }
  gate {
    rule "stop" {
      when = "true"
      fail = "stopped"
    }
    otherwise {}
  }`},
	{name: "finish", body: `
  shell { command = ["true"] }
  gate {
    rule "stop" {
      when   = "true"
      finish = "done"
    }
    otherwise {}
  }`},
	{name: "max_tokens", blocks: `limits { max_tokens = 100 }`, stops: true, body: `
  agent "a" { prompt = "Spend." }`},
	{name: "max_cost_usd", blocks: `limits { max_cost_usd = 1 }`, stops: true, body: `
  agent "a" { prompt = "Spend." }`},
	{name: "max_retries", blocks: `limits { max_retries = 1 }`, stops: true, body: `
  retry {
    max     = 3
    backoff = "1ms"
  }
  shell { script = "exit 1" }`},
	{name: "step cap", body: `
  max_tokens = 10
  agent "a" { prompt = "Spend." }`},
	{name: "open breaker", blocks: `circuit_breaker { open_on = ["timeout"] }`, stops: true, body: `
  timeout = "50ms"
  shell { command = ["sleep", "5"] }`},
	// The step's command leaves a mark when it ends (MARK is a file of
	// the cell's): the run's timeout must stop it before.
	{name: "timeout", blocks: `limits { timeout = "2s" }`, stops: true, body: `
  shell { command = ["sh", "-c", "sleep 30 && touch MARK"] }`},
	{name: "ask", stops: true, body: `
  ask {
    question = "Go on?"
    options  = ["yes", "no"]
  }`},
	// The run is interrupted (locally its context is cancelled, on
	// Temporal its workflow) when the trigger starts.
	{name: "interrupt", stops: true, body: `
  shell { command = ["sleep", "10"] }`},
}

// A place is where a step can stand. It builds the playbooks of a run
// whose trigger step (in a frame that then runs after) ends with e.
type place struct {
	name string
	// parent and child (for a sub-playbook) are the playbooks' sources;
	// frame is the trigger and after steps; drv declares the agent.
	build func(e ending, frame, drv string) (parent, child string)
	// item is the for_each item the trigger stands in ("" outside one).
	item string
}

const after = `
step "after" {
  agent "a" { prompt = "After." }
}`

const items = `
  for_each    = "['a', 'b', 'c', 'd']"
  concurrency = 2`

var places = []place{
	{name: "main walk", build: func(e ending, frame, drv string) (string, string) {
		return head(e, true, drv) + frame + later, ""
	}},
	{name: "for_each item", item: "b", build: func(e ending, frame, drv string) (string, string) {
		return head(e, true, drv) + `
step "items" {` + items + `
  step "work" {
    when = "item != 'b'"
    shell { command = ["sleep", "0.1"] }
  }` + indent(strings.Replace(strings.Replace(frame, `step "trigger" {`, `step "trigger" {
  when = "item == 'b'"`, 1), `step "after" {`, `step "after" {
  when = "item == 'b'"`, 1)) + `
}` + later, ""
	}},
	{name: "on_failure", build: func(e ending, frame, drv string) (string, string) {
		return head(e, true, drv) + broken + `
on_failure {` + indent(frame) + `
}`, ""
	}},
	{name: "finally", build: func(e ending, frame, drv string) (string, string) {
		return head(e, true, drv) + `
step "fine" {
  shell { command = ["true"] }
}
finally {` + indent(frame) + `
}`, ""
	}},
	{name: "sub-playbook", build: func(e ending, frame, drv string) (string, string) {
		return head(e, false, drv) + `
step "phase" {
  playbook { source = "child" }
}` + later, childHead(e, drv) + frame
	}},
	{name: "sub-playbook in a for_each item", item: "b", build: func(e ending, frame, drv string) (string, string) {
		return head(e, false, drv) + `
step "items" {` + items + `
  step "work" {
    when = "item != 'b'"
    shell { command = ["sleep", "0.1"] }
  }
  step "phase" {
    when = "item == 'b'"
    playbook { source = "child" }
  }
}` + later, childHead(e, drv) + frame
	}},
}

const later = `
step "later" {
  agent "a" { prompt = "Later." }
}`

// broken fails the main walk with a fail value, for on_failure to run.
const broken = `
step "broken" {
  shell { command = ["true"] }
  gate {
    rule "broken" {
      when = "true"
      fail = "broken"
    }
    otherwise {}
  }
}`

// head is a playbook's header; own says whether the ending's blocks
// belong to it. A sub-playbook's parent holds the run-wide caps and time
// (they must hold during the sub-run); the breaker is the child's own.
func head(e ending, own bool, drv string) string {
	blocks := e.blocks
	if !own && strings.HasPrefix(blocks, "circuit_breaker") {
		blocks = ""
	}
	return "playbook \"p\" {}\n" + drv + blocks + "\n"
}

func childHead(e ending, drv string) string {
	blocks := ""
	if strings.HasPrefix(e.blocks, "circuit_breaker") {
		blocks = e.blocks
	}
	return "playbook \"child\" {}\n" + drv + blocks + "\n"
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// loggingDriver declares agent "a": a command driver that appends each
// call's STEP[ITEM] to log, and answers the trigger's with 150 tokens
// and $2, every other with 1 token and $0.01.
func loggingDriver(log string) string {
	return fmt.Sprintf(`
driver "logged" {
  type    = "command"
  command = ["sh", "-c", "cat >/dev/null; echo \"$APL_STEP[$APL_ITEM_KEY]\" >> %s; if [ \"$APL_STEP\" = trigger ]; then printf '{\"text\": \"ok\", \"usage\": {\"input_tokens\": 150}, \"cost_usd\": 2}'; else printf '{\"text\": \"ok\", \"usage\": {\"input_tokens\": 1}, \"cost_usd\": 0.01}'; fi"]
  output  = "json"
}
agent "a" { driver = driver.logged }
`, log)
}

// outcomeOf is the documented outcome of ending e in place p: the run's
// status, and, for a run that a cap, the breaker or the time stopped,
// its recommendation, error kind and a piece of its reason.
func outcomeOf(e ending, p place) (status, recommendation, kind, reason string) {
	switch e.name {
	case "ask":
		return interp.StatusWaiting, "", "", ""
	case "interrupt":
		return interp.StatusInterrupted, "", "", ""
	}
	switch p.name {
	case "on_failure":
		// The section's own endings end it, and do not change how the
		// run ended.
		return interp.StatusFailed, "broken", "", ""
	case "finally":
		return interp.StatusCompleted, "", "", ""
	}
	sub := strings.HasPrefix(p.name, "sub-playbook")
	switch e.name {
	case "fail value":
		if sub || p.item != "" {
			// The sub-run's or the item's failure fails the step that
			// holds it.
			return interp.StatusFailed, "", "", ""
		}
		return interp.StatusFailed, "stopped", "", ""
	case "finish":
		if sub || p.item != "" {
			// A sub-run's or an item's own finish ends only it.
			return interp.StatusCompleted, "", "", ""
		}
		return "done", "", "", ""
	case "max_tokens", "max_cost_usd", "max_retries":
		return interp.StatusFailed, "halt", agent.KindBudget, "limits." + e.name
	case "step cap":
		return interp.StatusFailed, "", "", "max_tokens: step used 150 tokens (max 10)"
	case "open breaker":
		if sub {
			// The sub-playbook's own breaker fails its run: the step.
			return interp.StatusFailed, "", "", "circuit breaker open"
		}
		return interp.StatusFailed, "halt", "other", "circuit breaker open"
	case "timeout":
		return interp.StatusFailed, "halt", agent.KindTimeout, "limits.timeout"
	}
	panic("no outcome for " + e.name)
}

// events records a run's events.
type events struct {
	mu  sync.Mutex
	all []interp.Event
}

func (r *events) Event(e interp.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, e)
}

func (r *events) list() []interp.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]interp.Event(nil), r.all...)
}

// TestEveryEndingEverywhereOnTemporal trips every ending in every place
// a step can stand, locally and on Temporal, and checks that both runs
// end as documented, with the same status, recommendation, error kind
// and reason, and that on neither engine anything starts once the end
// was decided: not the trigger's own frame's next step, not the step
// after the place for an ending that stops the run, and no for_each
// item.
func TestEveryEndingEverywhereOnTemporal(t *testing.T) {
	c := server(t)
	startWorker(t, c, "endings", t.TempDir())
	t.Run("cells", func(t *testing.T) {
		for _, p := range places {
			for _, e := range endings {
				t.Run(p.name+"/"+e.name, func(t *testing.T) {
					t.Parallel()
					if e.name == "timeout" && (p.name == "on_failure" || p.name == "finally") {
						// on_failure and finally steps run without the
						// run's timeout: the step's own ends the section
						// there.
						e.body = `
  timeout = "100ms"
  shell { command = ["sleep", "30"] }`
					}
					if strings.HasPrefix(p.name, "sub-playbook") && e.name == "open breaker" {
						// The sub-playbook's own breaker fails its run,
						// which fails the step that runs it: the parent
						// goes on.
						e.stops = false
					}
					dir := t.TempDir()
					log := filepath.Join(dir, "calls")
					mark := filepath.Join(dir, "ended")
					frame := strings.ReplaceAll("\nstep \"trigger\" {"+e.body+"\n}"+after, "MARK", mark)
					parent, child := p.build(e, frame, loggingDriver(log))
					os.MkdirAll(filepath.Join(dir, "child"), 0o755)
					os.WriteFile(filepath.Join(dir, "child", "main.hcl"), []byte(child), 0o644)
					ref := filepath.Join(dir, "parent.hcl")
					os.WriteFile(ref, []byte(parent), 0o644)
					pb, diags := loader().Load(ref)
					if diags.HasErrors() {
						t.Fatal(diags)
					}
					status, recommendation, kind, reason := outcomeOf(e, p)
					want := fmt.Sprintf("%s (%q, %q, %q)", status, recommendation, kind, reason)

					var lrec events
					began := time.Now()
					lctx, lcancel := context.WithCancel(context.Background())
					defer lcancel()
					var lobs interp.Observer = &lrec
					if e.name == "interrupt" {
						lobs = interruptOn(&lrec, "trigger", lcancel)
					}
					local, err := interp.Start(lctx, pb, ref, interp.Options{Workdir: t.TempDir(), NoSync: true, Observer: lobs})
					if err != nil && !(e.name == "interrupt" && errors.Is(err, interp.ErrInterrupted)) {
						t.Fatalf("local run: %v", err)
					}
					lcalls := calls(t, log)
					os.Remove(log)
					t.Logf("local run: %s", time.Since(began))
					began = time.Now()

					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
					defer cancel()
					id := "endings-" + strings.NewReplacer(" ", "-", "/", "-").Replace(p.name+"-"+e.name)
					if _, err := Start(ctx, c, "endings", pb, ref, interp.Options{RunID: id}); err != nil {
						t.Fatal(err)
					}
					var rrec events
					var robs interp.Observer = &rrec
					if e.name == "interrupt" {
						// A child workflow's events are not the parent's:
						// a Temporal sub-run is interrupted when the step
						// that runs it starts.
						at := "trigger"
						if strings.HasPrefix(p.name, "sub-playbook") {
							at = "phase"
						}
						robs = interruptOn(&rrec, at, func() {
							if err := c.CancelWorkflow(ctx, id, ""); err != nil {
								t.Errorf("cancelling %s: %v", id, err)
							}
						})
					}
					remote, _, err := Watch(ctx, c, id, 0, robs)
					if err != nil {
						t.Fatalf("Temporal run: %v", err)
					}
					if remote.Status == interp.StatusWaiting {
						// The workflow waits for an answer that never
						// comes: end it.
						if err := c.TerminateWorkflow(ctx, id, "", "the test is done"); err != nil {
							t.Logf("terminating %s: %v", id, err)
						}
					}
					rcalls := calls(t, log)
					t.Logf("Temporal run: %s", time.Since(began))

					for engine, res := range map[string]*interp.Result{"local": local, "Temporal": remote} {
						if res.Status != status || recommendation != "" && res.Recommendation != recommendation ||
							kind != "" && res.ErrorKind != kind || !strings.Contains(res.Reason, reason) {
							t.Errorf("%s: ended %s (recommendation %q, kind %q, reason %q); want %s",
								engine, res.Status, res.Recommendation, res.ErrorKind, res.Reason, want)
						}
					}
					if local.Status != remote.Status || local.Recommendation != remote.Recommendation ||
						local.ErrorKind != remote.ErrorKind || local.Reason != remote.Reason {
						t.Errorf("local ended %s (%q, %q, %q), Temporal %s (%q, %q, %q)",
							local.Status, local.Recommendation, local.ErrorKind, local.Reason,
							remote.Status, remote.Recommendation, remote.ErrorKind, remote.Reason)
					}
					checkNothingAfter(t, "local", lrec.list(), lcalls, e, p)
					checkNothingAfter(t, "Temporal", rrec.list(), rcalls, e, p)
					if _, err := os.Stat(mark); err == nil {
						// Only the Temporal run can have left it: the local
						// one ended, its command stopped, before it began.
						t.Errorf("Temporal: the step's command ran to its end after the run's end was decided")
					}
				})
			}
		}
	})
}

// interruptOn records the events, and interrupts the run (once) when
// the step named at starts.
func interruptOn(rec *events, at string, interrupt func()) interp.Observer {
	var once sync.Once
	return interp.ObserverFunc(func(e interp.Event) {
		rec.Event(e)
		if e.Type == interp.EventStepStarted && strings.HasSuffix(e.Step, at) {
			once.Do(interrupt)
		}
	})
}

// calls are the agent calls logged, as STEP[ITEM].
func calls(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// checkNothingAfter checks that nothing started once the end was decided.
func checkNothingAfter(t *testing.T, engine string, evs []interp.Event, calls []string, e ending, p place) {
	t.Helper()
	ended := -1 // the event of the trigger's end
	for i, ev := range evs {
		last := ev.Step[strings.LastIndex(ev.Step, "/")+1:]
		if last == "after" && ev.Type == interp.EventStepStarted {
			t.Errorf("%s: step %s started after the trigger's frame ended (item %q)", engine, ev.Step, ev.Item)
		}
		if e.stops && ev.Step == "later" && ev.Type == interp.EventStepStarted {
			t.Errorf("%s: step later started after the run was stopped", engine)
		}
		if ended < 0 && strings.HasSuffix(ev.Step, "trigger") && (ev.Type == interp.EventStepFailed || ev.Type == interp.EventStepCompleted) {
			ended = i
		}
		if ended < 0 && (ev.Type == interp.EventRunWaiting || ev.Type == interp.EventRunInterrupted) {
			ended = i
		}
		// While a person is asked, the items in flight go on (they are
		// not stopped, as for a cap); none starts.
		stepStops := e.name != "ask"
		if e.stops && ended >= 0 && i > ended && (ev.Type == interp.EventItemStarted ||
			stepStops && ev.Type == interp.EventStepStarted && p.name != "on_failure" && p.name != "finally") {
			t.Errorf("%s: %s %s[%s] started after the run was stopped", engine, ev.Type, ev.Step, ev.Item)
		}
	}
	for _, s := range calls {
		if strings.HasPrefix(s, "after[") || e.stops && strings.HasPrefix(s, "later[") {
			t.Errorf("%s: agent call of %s after the end", engine, s)
		}
	}
	if t.Failed() {
		for _, ev := range evs {
			t.Logf("%s: %s %s[%s] %s", engine, ev.Type, ev.Step, ev.Item, ev.Message)
		}
	}
}
