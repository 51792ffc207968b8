package temporal

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apl-lang/apl/interp"
)

// The workflow keeps a bounded tail of the run's events: a client that
// falls behind is told how many it missed, pages are bounded, long
// messages are cut, and a failed step's artifacts (files on the worker)
// are left out.
func TestEventLogBounded(t *testing.T) {
	var l eventLog
	n := 3 * eventsKept
	for i := range n {
		l.Event(interp.Event{Type: interp.EventLog, Message: fmt.Sprint(i)})
	}
	if len(l.events) > eventsKept+eventsKept/2 {
		t.Errorf("keeps %d events, want at most %d", len(l.events), eventsKept+eventsKept/2)
	}
	p := l.page(0)
	if p.Lost != l.first || p.Lost == 0 || len(p.Events) != eventsPage || p.Events[0].Message != fmt.Sprint(l.first) || p.Next != l.first+eventsPage {
		t.Errorf("page from 0: lost %d, %d events from %q, next %d (first kept %d)", p.Lost, len(p.Events), p.Events[0].Message, p.Next, l.first)
	}
	for from := p.Next; from < n; from = p.Next {
		p = l.page(from)
		if p.Lost != 0 || p.Events[0].Message != fmt.Sprint(from) {
			t.Fatalf("page from %d: lost %d, first %q", from, p.Lost, p.Events[0].Message)
		}
	}
	if p = l.page(n + 5); p.Next != n || len(p.Events) != 0 {
		t.Errorf("page past the end: %+v", p)
	}

	l.Event(interp.Event{Type: interp.EventStepFailed, Step: "build", Message: strings.Repeat("é", messageMax),
		Details: map[string]any{interp.DetailArtifacts: []string{"/tmp/x/build.1.stdout"}, interp.DetailTokens: 12}})
	e := l.events[len(l.events)-1]
	if len(e.Message) > messageMax+4 || !strings.HasSuffix(e.Message, "é ...") {
		t.Errorf("message of %d bytes ends %q", len(e.Message), e.Message[len(e.Message)-8:])
	}
	if _, ok := e.Details[interp.DetailArtifacts]; ok {
		t.Errorf("details keep the worker's artifacts: %v", e.Details)
	}
}

// Events that came as JSON get their details' types back, so that the
// CLI's printer reads them as it reads a local run's.
func TestFromWire(t *testing.T) {
	in := interp.Event{Type: interp.EventHumanDecision, Details: map[string]any{
		interp.DetailTokens: 1234, interp.DetailAgentCalls: 3, interp.DetailDuration: 2.0, interp.DetailCost: 0.5,
		"options": []string{"yes", "no"}, "mixed": []any{"a", 1}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var e interp.Event
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	fromWire(&e)
	if e.Details[interp.DetailTokens] != 1234 || e.Details[interp.DetailAgentCalls] != 3 {
		t.Errorf("ints: %#v", e.Details)
	}
	if e.Details[interp.DetailDuration] != 2.0 || e.Details[interp.DetailCost] != 0.5 {
		t.Errorf("floats: %#v", e.Details)
	}
	if o, ok := e.Details["options"].([]string); !ok || !slices.Equal(o, []string{"yes", "no"}) {
		t.Errorf("options: %#v", e.Details["options"])
	}
	if _, ok := e.Details["mixed"].([]any); !ok {
		t.Errorf("mixed: %#v", e.Details["mixed"])
	}
}

// A run's output JSON reads as a local run's: <, > and & as they are,
// other escapes kept.
func TestOutputAsLocal(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"x -\u003e y \u0026 \u003cz\u003e"}`: `{"a":"x -> y & <z>"}`,
		`{"a":"\\u003e","b":"\"\u00e9\n"}`:         `{"a":"\\u003e","b":"\"\u00e9\n"}`,
		`{"a":1}`:                                  `{"a":1}`,
	} {
		if got := string(asLocal([]byte(in))); got != want {
			t.Errorf("asLocal(%s) = %s; want %s", in, got, want)
		}
	}
}
