package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/builtins/agent/fakeserver"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
)

// sessionPlaybook has a second step continue the first one's session.
const sessionPlaybook = `
playbook "sessions" {}
agent "tester" {}
step "first" {
  agent "tester" { prompt = "Say hello. FIRST-MARK" }
}
step "second" {
  agent "tester" {
    prompt  = "Again. SECOND-MARK"
    session = steps.first.session_id
  }
}
output {
  first  = steps.first.session_id
  second = steps.second.session_id
}
`

// sessionThroughRun runs sessionPlaybook through interp against the
// backend: a CLI keeps the session, and the second step's call sends the
// first one's conversation; an HTTP driver has no session to keep.
func sessionThroughRun(t *testing.T, b backend) {
	r := newRig(t, b)
	pb, diags := (&lang.Loader{}).LoadSources(map[string][]byte{"sessions.hcl": []byte(sessionPlaybook)}, ".")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	r.srv.Push(fakeserver.Reply{Text: "hello from the first step", InputTokens: 10, OutputTokens: 5},
		fakeserver.Reply{Text: "hello from the second step", InputTokens: 10, OutputTokens: 5})
	res, err := interp.Start(context.Background(), pb, "sessions.hcl", interp.Options{
		Workdir: r.work, NoSync: true,
		Drivers: func(*lang.Agent) (agent.Driver, error) { return r.d, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interp.StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	st, _, err := interp.ReadRun(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	first, second := st.Steps["first"].SessionID, st.Steps["second"].SessionID
	if !b.cli {
		if first != "" || second != "" {
			t.Errorf("sessions %q, %q from a driver without sessions", first, second)
		}
		return
	}
	if first == "" {
		t.Fatal("the first step's record has no session")
	}
	turn := r.lastTurn(t)
	if !strings.Contains(turn.Prompt, "SECOND-MARK") {
		t.Fatalf("the last turn is not the second step's: %q", turn.Prompt)
	}
	if !strings.Contains(strings.Join(turn.Texts, "\n"), "hello from the first step") {
		t.Errorf("the second step did not continue the first one's conversation: %q", turn.Texts)
	}
	if second == "" {
		t.Errorf("the second step's record has no session")
	}
}
