package interp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/apl-lang/apl/builtins/agent"
)

// An ending is a way a frame can end, as the step "trigger" brings it
// about: its playbook-level blocks (caps, breaker) and the trigger step's
// body. Every frame runs trigger, then after; after must never run.
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
	{name: "timeout", blocks: `limits { timeout = "2s" }`, stops: true, body: `
  shell { command = ["sleep", "30"] }`},
	{name: "ask", stops: true, body: `
  ask {
    question = "Go on?"
    options  = ["yes", "no"]
  }`},
	{name: "interrupt", stops: true, body: `
  shell { command = ["sleep", "10"] }`},
}

// A place is where a step can stand. It builds the playbooks of a run
// whose trigger step (in a frame that then runs after) ends with e.
type place struct {
	name string
	// parent and child (for a sub-playbook) are the playbooks' sources;
	// frame is the trigger and after steps.
	build func(e ending, frame string) (parent, child string)
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
	{name: "main walk", build: func(e ending, frame string) (string, string) {
		return head(e, true) + frame + later, ""
	}},
	{name: "for_each item", item: "b", build: func(e ending, frame string) (string, string) {
		return head(e, true) + `
step "items" {` + items + `
  step "work" {
    when = "item != 'b'"
    shell { command = ["sleep", "0.1"] }
  }` + indent(strings.Replace(strings.Replace(frame, `step "trigger" {`, `step "trigger" {
  when = "item == 'b'"`, 1), `step "after" {`, `step "after" {
  when = "item == 'b'"`, 1)) + `
}` + later, ""
	}},
	{name: "on_failure", build: func(e ending, frame string) (string, string) {
		return head(e, true) + broken + `
on_failure {` + indent(frame) + `
}`, ""
	}},
	{name: "finally", build: func(e ending, frame string) (string, string) {
		return head(e, true) + `
step "fine" {
  shell { command = ["true"] }
}
finally {` + indent(frame) + `
}`, ""
	}},
	{name: "sub-playbook", build: func(e ending, frame string) (string, string) {
		return head(e, false) + `
step "phase" {
  playbook { source = "child" }
}` + later, childHead(e) + frame
	}},
	{name: "sub-playbook in a for_each item", item: "b", build: func(e ending, frame string) (string, string) {
		return head(e, false) + `
step "items" {` + items + `
  step "work" {
    when = "item != 'b'"
    shell { command = ["sleep", "0.1"] }
  }
  step "phase" {
    when = "item == 'b'"
    playbook { source = "child" }
  }
}` + later, childHead(e) + frame
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
func head(e ending, own bool) string {
	blocks := e.blocks
	if !own && strings.HasPrefix(blocks, "circuit_breaker") {
		blocks = ""
	}
	return "playbook \"p\" {}\nagent \"a\" {}\n" + blocks + "\n"
}

func childHead(e ending) string {
	blocks := ""
	if strings.HasPrefix(e.blocks, "circuit_breaker") {
		blocks = e.blocks
	}
	return "playbook \"child\" {}\nagent \"a\" {}\n" + blocks + "\n"
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

// outcomeOf is the documented outcome of ending e in place p: the run's
// status, and, for a run that a cap, the breaker or the time stopped,
// its recommendation, error kind and a piece of its reason.
func outcomeOf(e ending, p place) (status, recommendation, kind, reason string) {
	switch e.name {
	case "ask":
		return StatusWaiting, "", "", ""
	case "interrupt":
		return StatusInterrupted, "", "", ""
	}
	switch p.name {
	case "on_failure":
		// The section's own endings end it, and do not change how the
		// run ended.
		return StatusFailed, "broken", "", ""
	case "finally":
		return StatusCompleted, "", "", ""
	}
	sub := strings.HasPrefix(p.name, "sub-playbook")
	switch e.name {
	case "fail value":
		if sub || p.item != "" {
			// The sub-run's or the item's failure fails the step that
			// holds it.
			return StatusFailed, "", "", ""
		}
		return StatusFailed, "stopped", "", ""
	case "finish":
		if sub || p.item != "" {
			// A sub-run's or an item's own finish ends only it.
			return StatusCompleted, "", "", ""
		}
		return "done", "", "", ""
	case "max_tokens", "max_cost_usd", "max_retries":
		return StatusFailed, "halt", agent.KindBudget, "limits." + e.name
	case "step cap":
		return StatusFailed, "", "", "max_tokens: step used 150 tokens (max 10)"
	case "open breaker":
		if sub {
			// The sub-playbook's own breaker fails its run: the step.
			return StatusFailed, "", "", "circuit breaker open"
		}
		return StatusFailed, "halt", "other", "circuit breaker open"
	case "timeout":
		return StatusFailed, "halt", agent.KindTimeout, "limits.timeout"
	}
	panic("no outcome for " + e.name)
}

// endingDriver answers every call, the trigger's with 150 tokens and $2,
// and records the calls it was given.
type endingDriver struct {
	mu    sync.Mutex
	steps []string
}

func (d *endingDriver) Call(ctx context.Context, req agent.Request) (agent.Response, error) {
	d.mu.Lock()
	d.steps = append(d.steps, req.Step+"["+req.ItemKey+"]")
	d.mu.Unlock()
	tokens, cost := 1, 0.01
	if req.Step == "trigger" {
		tokens, cost = 150, 2
	}
	return agent.Response{Text: "ok", Usage: agent.Usage{InputTokens: tokens}, CostUSD: &cost}, nil
}

// cancelOn cancels the run when the trigger starts.
type cancelOn struct {
	rec    *recorder
	cancel context.CancelFunc
}

func (c cancelOn) Event(e Event) {
	c.rec.Event(e)
	if e.Type == EventStepStarted && strings.HasSuffix(e.Step, "trigger") {
		c.cancel()
	}
}

// TestEveryEndingEverywhere trips every ending in every place a step can
// stand, and checks that the run ends as documented, without a crash, and
// that nothing starts once the end was decided: not the trigger's own
// frame's next step, not the step after the place for an ending that
// stops the run, and no for_each item.
func TestEveryEndingEverywhere(t *testing.T) {
	for _, p := range places {
		for _, e := range endings {
			t.Run(p.name+"/"+e.name, func(t *testing.T) {
				t.Parallel()
				if e.name == "timeout" && (p.name == "on_failure" || p.name == "finally") {
					// on_failure and finally steps run without the run's
					// timeout: the step's own ends the section there.
					e.body = `
  timeout = "100ms"
  shell { command = ["sleep", "30"] }`
				}
				if strings.HasPrefix(p.name, "sub-playbook") && e.name == "open breaker" {
					// The sub-playbook's own breaker fails its run, which
					// fails the step that runs it: the parent goes on.
					e.stops = false
				}
				frame := "\nstep \"trigger\" {" + e.body + "\n}" + after
				parent, child := p.build(e, frame)
				pb := loadParentChild(t, parent, child)
				d := &endingDriver{}
				rec := &recorder{}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				var obs Observer = rec
				if e.name == "interrupt" {
					obs = cancelOn{rec, cancel}
				}
				res, err := Start(ctx, pb, "p.hcl", Options{Workdir: t.TempDir(), NoSync: true, Observer: obs, Drivers: drivers(d)})
				if err != nil && !(e.name == "interrupt" && errors.Is(err, ErrInterrupted)) {
					t.Fatalf("run: %v", err)
				}
				status, recommendation, kind, reason := outcomeOf(e, p)
				if res.Status != status || recommendation != "" && res.Recommendation != recommendation ||
					kind != "" && res.ErrorKind != kind || !strings.Contains(res.Reason, reason) {
					t.Fatalf("ended %s (recommendation %q, kind %q, reason %q); want %s (%q, %q, %q)",
						res.Status, res.Recommendation, res.ErrorKind, res.Reason, status, recommendation, kind, reason)
				}
				checkNothingAfter(t, rec, d, e, p)
			})
		}
	}
}

// checkNothingAfter checks that nothing started once the end was decided.
func checkNothingAfter(t *testing.T, rec *recorder, d *endingDriver, e ending, p place) {
	t.Helper()
	rec.mu.Lock()
	events := append([]Event(nil), rec.events...)
	rec.mu.Unlock()
	ended := -1 // the event of the trigger's end
	for i, ev := range events {
		last := ev.Step[strings.LastIndex(ev.Step, "/")+1:]
		if last == "after" && ev.Type == EventStepStarted {
			t.Errorf("step %s started after the trigger's frame ended (item %q)", ev.Step, ev.Item)
		}
		if e.stops && ev.Step == "later" && ev.Type == EventStepStarted {
			t.Errorf("step later started after the run was stopped")
		}
		if ended < 0 && strings.HasSuffix(ev.Step, "trigger") && (ev.Type == EventStepFailed || ev.Type == EventStepCompleted) {
			ended = i
		}
		if ended < 0 && (ev.Type == EventRunWaiting || ev.Type == EventRunInterrupted) {
			ended = i
		}
		// While a person is asked, the items in flight go on (they are
		// not stopped, as for a cap); none starts.
		stepStops := e.name != "ask"
		if e.stops && ended >= 0 && i > ended && (ev.Type == EventItemStarted || stepStops && ev.Type == EventStepStarted && !isEnding(p)) {
			t.Errorf("%s %s[%s] started after the run was stopped", ev.Type, ev.Step, ev.Item)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.steps {
		if strings.HasPrefix(s, "after[") || e.stops && strings.HasPrefix(s, "later[") {
			t.Errorf("agent call of %s after the end", s)
		}
	}
}

// isEnding reports whether p is in the on_failure or finally steps of
// the run, which run after every ending.
func isEnding(p place) bool {
	return p.name == "on_failure" || p.name == "finally"
}
