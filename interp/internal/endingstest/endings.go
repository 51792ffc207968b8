// Package endingstest holds the endings matrix that interp's and
// interp/temporal's tests share: every way a frame can end (Endings),
// tripped in every place a step can stand (Places), with the outcome the
// documentation gives for each (OutcomeOf) and the check that nothing
// starts once the end was decided (CheckNothingAfter). Each engine's
// test runs the cells its own way.
package endingstest

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
)

// An Ending is a way a frame can end, as the step "trigger" brings it
// about: its playbook-level blocks (caps, breaker) and the trigger step's
// body. Every frame runs trigger, then after; after must never run.
type Ending struct {
	Name   string
	blocks string // limits and circuit_breaker, in the playbook that holds them
	body   string // the trigger step's body
	// Stops is set for an ending that stops the whole run: nothing runs
	// after it, not even the main step "later" after the place.
	Stops bool
}

// Endings are every way a frame can end.
var Endings = []Ending{
	{Name: "fail value", body: `
  shell { command = ["true"] }
  gate {
    rule "stop" {
      when = "true"
      fail = "stopped"
    }
    otherwise {}
  }`},
	{Name: "finish", body: `
  shell { command = ["true"] }
  gate {
    rule "stop" {
      when   = "true"
      finish = "done"
    }
    otherwise {}
  }`},
	{Name: "max_tokens", blocks: `limits { max_tokens = 100 }`, Stops: true, body: `
  agent "a" { prompt = "Spend." }`},
	{Name: "max_cost_usd", blocks: `limits { max_cost_usd = 1 }`, Stops: true, body: `
  agent "a" { prompt = "Spend." }`},
	{Name: "max_retries", blocks: `limits { max_retries = 1 }`, Stops: true, body: `
  retry {
    max     = 3
    backoff = "1ms"
  }
  shell { script = "exit 1" }`},
	{Name: "step cap", body: `
  max_tokens = 10
  agent "a" { prompt = "Spend." }`},
	{Name: "open breaker", blocks: `circuit_breaker { open_on = ["timeout"] }`, Stops: true, body: `
  timeout = "50ms"
  shell { command = ["sleep", "5"] }`},
	// The step's command leaves a mark when it ends (MARK, which Frame
	// replaces with a file of the cell's): the run's timeout must stop it
	// before.
	{Name: "timeout", blocks: `limits { timeout = "2s" }`, Stops: true, body: `
  shell { command = ["sh", "-c", "sleep 30 && touch MARK"] }`},
	{Name: "ask", Stops: true, body: `
  ask {
    question = "Go on?"
    options  = ["yes", "no"]
  }`},
	// The run is interrupted (locally its context is cancelled, on
	// Temporal its workflow) when the trigger starts.
	{Name: "interrupt", Stops: true, body: `
  shell { command = ["sleep", "10"] }`},
}

// In is e as it is tripped in place p.
func (e Ending) In(p Place) Ending {
	if e.Name == "timeout" && p.IsEnding() {
		// on_failure and finally steps run without the run's timeout:
		// the step's own ends the section there.
		e.body = `
  timeout = "100ms"
  shell { command = ["sleep", "30"] }`
	}
	if strings.HasPrefix(p.Name, "sub-playbook") && e.Name == "open breaker" {
		// The sub-playbook's own breaker fails its run, which fails the
		// step that runs it: the parent goes on.
		e.Stops = false
	}
	return e
}

// Frame is the trigger and after steps for e; mark is the file the
// trigger's command leaves when it runs to its end.
func (e Ending) Frame(mark string) string {
	return strings.ReplaceAll("\nstep \"trigger\" {"+e.body+"\n}"+after, "MARK", mark)
}

// A Place is where a step can stand. It builds the playbooks of a run
// whose trigger step (in a frame that then runs after) ends with e.
type Place struct {
	Name string
	// Build returns the playbooks' sources: parent, and child for a
	// sub-playbook; frame is the trigger and after steps, drv declares
	// the agent "a".
	Build func(e Ending, frame, drv string) (parent, child string)
	// Item is the for_each item the trigger stands in ("" outside one).
	Item string
}

// IsEnding reports whether p is in the on_failure or finally steps of
// the run, which run after every ending.
func (p Place) IsEnding() bool { return p.Name == "on_failure" || p.Name == "finally" }

const after = `
step "after" {
  agent "a" { prompt = "After." }
}`

const items = `
  for_each    = "['a', 'b', 'c', 'd']"
  concurrency = 2`

// Places are every place a step can stand.
var Places = []Place{
	{Name: "main walk", Build: func(e Ending, frame, drv string) (string, string) {
		return head(e, true, drv) + frame + later, ""
	}},
	{Name: "for_each item", Item: "b", Build: func(e Ending, frame, drv string) (string, string) {
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
	{Name: "on_failure", Build: func(e Ending, frame, drv string) (string, string) {
		return head(e, true, drv) + broken + `
on_failure {` + indent(frame) + `
}`, ""
	}},
	{Name: "finally", Build: func(e Ending, frame, drv string) (string, string) {
		return head(e, true, drv) + `
step "fine" {
  shell { command = ["true"] }
}
finally {` + indent(frame) + `
}`, ""
	}},
	{Name: "sub-playbook", Build: func(e Ending, frame, drv string) (string, string) {
		return head(e, false, drv) + `
step "phase" {
  playbook { source = "child" }
}` + later, childHead(e, drv) + frame
	}},
	{Name: "sub-playbook in a for_each item", Item: "b", Build: func(e Ending, frame, drv string) (string, string) {
		its, child := items, childHead(e, drv)+frame
		if e.runWide() {
			// The sub-run's result comes a while after its trip (its
			// finally step lingers), and more items are left to start
			// meanwhile: none may.
			its = strings.Replace(items, "'d']", "'d', 'e', 'f', 'g', 'h', 'i', 'j']", 1)
			child += linger
		}
		return head(e, false, drv) + `
step "items" {` + its + `
  step "work" {
    when = "item != 'b'"
    shell { command = ["sleep", "0.1"] }
  }
  step "phase" {
    when = "item == 'b'"
    playbook { source = "child" }
  }
}` + later, child
	}},
}

// runWide says whether e trips a cap of the whole run (the parent's,
// in a sub-run).
func (e Ending) runWide() bool {
	return e.Name == "max_tokens" || e.Name == "max_cost_usd" || e.Name == "max_retries"
}

// linger is a sub-playbook's finally step, which runs after every ending
// and delays the sub-run's result.
const linger = `
finally {
  step "linger" {
    shell { command = ["sleep", "0.5"] }
  }
}`

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
func head(e Ending, own bool, drv string) string {
	blocks := e.blocks
	if !own && strings.HasPrefix(blocks, "circuit_breaker") {
		blocks = ""
	}
	return "playbook \"p\" {}\n" + drv + blocks + "\n"
}

func childHead(e Ending, drv string) string {
	blocks := ""
	if strings.HasPrefix(e.blocks, "circuit_breaker") {
		blocks = e.blocks
	}
	return "playbook \"child\" {}\n" + drv + blocks + "\n"
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// Write writes a cell's playbooks into dir, the child as the directory
// child the parent's playbook step names, and returns the parent's path.
func Write(t *testing.T, dir, parent, child string) string {
	t.Helper()
	ref := filepath.Join(dir, "parent.hcl")
	if err := os.MkdirAll(filepath.Join(dir, "child"), 0o755); err != nil {
		t.Fatal(err)
	}
	for path, src := range map[string]string{filepath.Join(dir, "child", "main.hcl"): child, ref: parent} {
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ref
}

// OutcomeOf is the documented outcome of ending e in place p: the run's
// status, and, for a run that a cap, the breaker or the time stopped,
// its recommendation, error kind and a piece of its reason.
func OutcomeOf(e Ending, p Place) (status, recommendation, kind, reason string) {
	switch e.Name {
	case "ask":
		return interp.StatusWaiting, "", "", ""
	case "interrupt":
		return interp.StatusInterrupted, "", "", ""
	}
	switch p.Name {
	case "on_failure":
		// The section's own endings end it, and do not change how the
		// run ended.
		return interp.StatusFailed, "broken", "", ""
	case "finally":
		return interp.StatusCompleted, "", "", ""
	}
	sub := strings.HasPrefix(p.Name, "sub-playbook")
	switch e.Name {
	case "fail value":
		if sub || p.Item != "" {
			// The sub-run's or the item's failure fails the step that
			// holds it.
			return interp.StatusFailed, "", "", ""
		}
		return interp.StatusFailed, "stopped", "", ""
	case "finish":
		if sub || p.Item != "" {
			// A sub-run's or an item's own finish ends only it.
			return interp.StatusCompleted, "", "", ""
		}
		return "done", "", "", ""
	case "max_tokens", "max_cost_usd", "max_retries":
		return interp.StatusFailed, "halt", agent.KindBudget, "limits." + e.Name
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
	panic("no outcome for " + e.Name)
}

// Events records a run's events.
type Events struct {
	mu  sync.Mutex
	all []interp.Event
}

// Event records e.
func (r *Events) Event(e interp.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.all = append(r.all, e)
}

// List is the events recorded so far.
func (r *Events) List() []interp.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]interp.Event(nil), r.all...)
}

// InterruptOn records the events in rec, and interrupts the run (once)
// when the step named at starts.
func InterruptOn(rec *Events, at string, interrupt func()) interp.Observer {
	var once sync.Once
	return interp.ObserverFunc(func(e interp.Event) {
		rec.Event(e)
		if e.Type == interp.EventStepStarted && strings.HasSuffix(e.Step, at) {
			once.Do(interrupt)
		}
	})
}

// CheckNothingAfter checks that nothing started once the end was
// decided, in the events evs and the agent calls (STEP[ITEM]) of a run
// on engine.
func CheckNothingAfter(t *testing.T, engine string, evs []interp.Event, calls []string, e Ending, p Place) {
	t.Helper()
	ended := -1 // the event of the trigger's end
	for i, ev := range evs {
		last := ev.Step[strings.LastIndex(ev.Step, "/")+1:]
		decides := strings.HasSuffix(ev.Step, "trigger")
		if last == "after" && ev.Type == interp.EventStepStarted {
			t.Errorf("%s: step %s started after the trigger's frame ended (item %q)", engine, ev.Step, ev.Item)
		}
		if e.Stops && ev.Step == "later" && ev.Type == interp.EventStepStarted {
			t.Errorf("%s: step later started after the run was stopped", engine)
		}
		if ended < 0 && decides && (ev.Type == interp.EventStepFailed || ev.Type == interp.EventStepCompleted) {
			ended = i
		}
		if ended < 0 && (ev.Type == interp.EventRunWaiting || ev.Type == interp.EventRunInterrupted) {
			ended = i
		}
		// While a person is asked, the items in flight go on (they are
		// not stopped, as for a cap); none starts.
		stepStops := e.Name != "ask"
		if e.Stops && ended >= 0 && i > ended && (ev.Type == interp.EventItemStarted ||
			stepStops && ev.Type == interp.EventStepStarted && !p.IsEnding() && last != "linger") {
			t.Errorf("%s: %s %s[%s] started after the run was stopped", engine, ev.Type, ev.Step, ev.Item)
		}
	}
	for _, s := range calls {
		if strings.HasPrefix(s, "after[") || e.Stops && strings.HasPrefix(s, "later[") {
			t.Errorf("%s: agent call of %s after the end", engine, s)
		}
	}
	if t.Failed() {
		for _, ev := range evs {
			t.Logf("%s: %s %s[%s] %s", engine, ev.Type, ev.Step, ev.Item, ev.Message)
		}
	}
}
