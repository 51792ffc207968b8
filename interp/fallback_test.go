package interp

import (
	"errors"
	"strings"
	"testing"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
)

// An agent action with fallback agents asks the next one, with the same
// prompt and returns, when a call fails with a kind it falls back on; the
// step records which agent answered.
func TestAgentFallback(t *testing.T) {
	const src = `
playbook "f" {}
agent "primary" {}
agent "backup" {}
step "fix" {
  returns = object({ fixed = bool })
  agent "primary" {
    prompt   = "Fix it. Answer {\"fixed\": true} when it is fixed."
    fallback = ["backup"]
    %s
  }
}
output {
  fixed = steps.fix.output.fixed
  agent = steps.fix.agent
}
`
	unavailable := &agent.StatusError{Status: 503, Err: errors.New("HTTP 503")}
	exit := &agent.KindError{Kind: agent.KindExitStatus, Err: errors.New("claude exited 1")}
	for _, tc := range []struct {
		name, on    string
		primaryErr  error
		status      string
		output      string
		backupCalls int
	}{
		{"unavailable falls back by default", "", unavailable, StatusCompleted, `{"agent":"backup","fixed":true}`, 1},
		{"an exit status does not by default", "", exit, StatusFailed, "", 0},
		{"an exit status does when listed", `fallback_on = ["exit_status"]`, exit, StatusCompleted, `{"agent":"backup","fixed":true}`, 1},
		{"the primary answering asks no fallback", "", nil, StatusCompleted, `{"agent":"primary","fixed":true}`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pb := load(t, strings.Replace(src, "%s", tc.on, 1))
			backup := &fakeDriver{answers: map[string][]string{"fix": {`{"fixed": true}`}}, tokens: 10}
			var primary agent.Driver = errDriver{tc.primaryErr}
			if tc.primaryErr == nil {
				primary = &fakeDriver{answers: map[string][]string{"fix": {`{"fixed": true}`}}}
			}
			res, rec := startWith(t, pb, Options{Drivers: func(a *lang.Agent) (agent.Driver, error) {
				if a.Name == "backup" {
					return backup, nil
				}
				return primary, nil
			}})
			if res.Status != tc.status {
				t.Fatalf("status %s (%s), want %s", res.Status, res.Reason, tc.status)
			}
			if tc.output != "" && string(res.OutputJSON) != tc.output {
				t.Errorf("output %s, want %s", res.OutputJSON, tc.output)
			}
			if backup.calls["fix"] != tc.backupCalls {
				t.Errorf("backup asked %d times, want %d", backup.calls["fix"], tc.backupCalls)
			}
			if tc.backupCalls > 0 {
				if !strings.HasPrefix(backup.prompts["fix"][0], "Fix it.") {
					t.Errorf("backup's prompt %q, want the step's", backup.prompts["fix"][0])
				}
				logged := false
				for _, e := range rec.events {
					if e.Type == EventLog && strings.Contains(e.Message, "falling back to agent backup") {
						logged = true
					}
				}
				if !logged {
					t.Error("no event says the step fell back")
				}
			}
		})
	}
}
