package interp

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
	"github.com/google/go-cmp/cmp"
)

// sessionDriver answers every call, continuing the session a call names
// or starting "s-STEP-N". It keeps the session each call asked for, per
// step (and item). answers are per step; the last repeats, and "" is
// "ok". block, when set, makes a step's first call wait for ctx to end
// and report its session as a killed CLI does.
type sessionDriver struct {
	mu       sync.Mutex
	answers  map[string][]string
	block    string
	progress []agent.Progress
	calls    map[string]int
	asked    map[string][]string
}

func (d *sessionDriver) Call(ctx context.Context, req agent.Request) (agent.Response, error) {
	d.mu.Lock()
	if d.calls == nil {
		d.calls, d.asked = map[string]int{}, map[string][]string{}
	}
	name := req.Step
	if req.ItemKey != "" {
		name += "[" + req.ItemKey + "]"
	}
	d.calls[name]++
	n := d.calls[name]
	d.asked[name] = append(d.asked[name], req.SessionID)
	answer := "ok"
	if list := d.answers[req.Step]; len(list) > 0 {
		answer = list[min(n, len(list))-1]
	}
	d.mu.Unlock()
	session := req.SessionID
	if session == "" {
		session = fmt.Sprintf("s-%s-%d", name, n)
	}
	for _, p := range d.progress {
		req.Progress(p)
	}
	if req.Step == d.block && n == 1 {
		<-ctx.Done()
		return agent.Response{SessionID: session}, ctx.Err()
	}
	return agent.Response{Text: answer, SessionID: session}, nil
}

func TestAgentSessions(t *testing.T) {
	pb := load(t, `
playbook "s" {}
agent "a" {}
step "discovery" {
  returns = object({ n = number })
  agent "a" { prompt = "find" }
}
step "follow" {
  when = "steps.discovery.session_id != ''"
  agent "a" {
    prompt  = "go on from ${steps.discovery.session_id}"
    session = steps.discovery.session_id
  }
  check "twice" {
    condition = "steps.follow.attempts > 1 || steps.follow.output == 'second'"
    max       = 1
  }
}
step "fresh" {
  agent "a" { prompt = "anew" }
}
step "each" {
  for_each = "['x', 'y']"
  key      = "item"
  step "do" {
    agent "a" { prompt = "do ${item}" }
  }
  step "more" {
    agent "a" {
      prompt  = "more"
      session = steps.do.session_id
    }
  }
}
output {
  discovery = steps.discovery.session_id
  follow    = steps.follow.session_id
}
`)
	d := &sessionDriver{answers: map[string][]string{
		"discovery": {"not json", `{"n": 1}`},
		"follow":    {"first", "second"},
	}}
	res, _ := startWith(t, pb, Options{Drivers: drivers(d)})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	want := map[string][]string{
		// The re-prompt continues the session of the answer it rejects.
		"discovery": {"", "s-discovery-1"},
		// The session attribute, and the check's re-run continues it.
		"follow":  {"s-discovery-1", "s-discovery-1"},
		"fresh":   {""},
		"do[x]":   {""},
		"do[y]":   {""},
		"more[x]": {"s-do[x]-1"},
		"more[y]": {"s-do[y]-1"},
	}
	if diff := cmp.Diff(want, d.asked); diff != "" {
		t.Errorf("sessions asked for (-want +got):\n%s", diff)
	}
	if got := string(res.OutputJSON); got != `{"discovery":"s-discovery-1","follow":"s-discovery-1"}` {
		t.Errorf("output %s", got)
	}
	st, _, err := ReadRun(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Steps["fresh"].SessionID; got != "s-fresh-1" {
		t.Errorf("fresh's record has session %q", got)
	}
	if got := st.Items["each"]["y"].Steps["more"].SessionID; got != "s-do[y]-1" {
		t.Errorf("item y's record of more has session %q", got)
	}
	trace, err := os.ReadFile(filepath.Join(res.Dir, "trace.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(trace), `"step":"fresh","action":"agent_spawn"`) || !strings.Contains(string(trace), `"session_id":"s-fresh-1"`) {
		t.Errorf("trace lacks fresh's session:\n%s", trace)
	}
}

// A gate that goes back to an agent step starts a new session; the step
// may continue its last one by naming it.
func TestAgentSessionNewAttempt(t *testing.T) {
	pb := load(t, `
playbook "loop" {}
agent "a" {}
step "write" {
  agent "a" { prompt = "write" }
  gate {
    rule "again" {
      when = "steps.write.attempts < 2"
      goto = "write"
      max  = 2
      on_exhausted { fail = "halt" }
    }
    otherwise {}
  }
}
step "edit" {
  agent "a" {
    prompt  = "edit"
    session = steps.edit.session_id
  }
  gate {
    rule "again" {
      when = "steps.edit.attempts < 2"
      goto = "edit"
      max  = 2
      on_exhausted { fail = "halt" }
    }
    otherwise {}
  }
}
`)
	d := &sessionDriver{}
	res, _ := startWith(t, pb, Options{Drivers: drivers(d)})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	want := map[string][]string{"write": {"", ""}, "edit": {"", "s-edit-1"}}
	if diff := cmp.Diff(want, d.asked); diff != "" {
		t.Errorf("sessions asked for (-want +got):\n%s", diff)
	}
}

// An agent call cut off by an interrupt keeps the session it reported,
// and resume continues it.
func TestResumeContinuesAgentSession(t *testing.T) {
	pb := load(t, `
playbook "cut" {}
agent "a" {}
step "long" {
  agent "a" { prompt = "work" }
}
`)
	d := &sessionDriver{block: "long"}
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	obs := ObserverFunc(func(e Event) {
		if e.Type == EventStepStarted {
			cancel()
		}
	})
	res, err := Start(ctx, pb, "cut", Options{Workdir: work, Drivers: drivers(d), Observer: obs, NoSync: true})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	st, _, _ := ReadRun(res.Dir)
	if r := st.Steps["long"]; r.Status != StepPending || r.SessionID != "s-long-1" {
		t.Fatalf("record after the interrupt: %+v", r)
	}
	res, err = Resume(context.Background(), pb, res.Dir, Options{Drivers: drivers(d), NoSync: true})
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if diff := cmp.Diff([]string{"", "s-long-1"}, d.asked["long"]); diff != "" {
		t.Errorf("sessions asked for (-want +got):\n%s", diff)
	}
}

// beatingHost beats once as soon as a call begins.
type beatingHost struct{ *localHost }

func (h beatingHost) heartbeat(every time.Duration, beat func()) func() {
	beat()
	return func() {}
}

// What a driver learns during a call, and the heartbeat, reach the
// observer as agent_progress events, and stay out of the event log.
func TestAgentProgressEvents(t *testing.T) {
	pb := load(t, `
playbook "p" {}
agent "a" {}
step "think" {
  agent "a" { prompt = "think" }
}
`)
	d := &sessionDriver{progress: []agent.Progress{{Kind: agent.ProgressRetrying, Attempt: 1, Max: 10, Status: 529, Message: "overloaded"}}}
	res, rec := startWith(t, pb, Options{Drivers: drivers(d), host: func(h *localHost) host { return beatingHost{h} }})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	var got []string
	for _, e := range rec.events {
		if e.Type == EventAgentProgress {
			if e.Step != "think" {
				t.Errorf("event %+v does not name its step", e)
			}
			got = append(got, fmt.Sprintf("%v: %s", e.Details["kind"], e.Message))
		}
	}
	want := []string{"elapsed: still running after 0s", "retrying: retrying: attempt 1 of 10 after HTTP 529 (overloaded)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress events (-want +got):\n%s", diff)
	}
	st, _, _ := ReadRun(res.Dir)
	for _, e := range st.Events {
		if e.Type == EventAgentProgress {
			t.Errorf("the event log keeps %+v", e)
		}
	}
}
