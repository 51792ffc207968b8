package interp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
)

// TestStepMetadata reads what a run knows about a step beyond its output:
// the raw answer (so a check can tell 8.0 from 8), the model, tokens and
// times.
func TestStepMetadata(t *testing.T) {
	pb := load(t, `
playbook "m" {}
agent "rater" {}
step "rate" {
  returns = object({ score = number })
  agent "rater" {
    prompt = "rate it"
    model  = "small"
  }
  check "decimal" {
    condition = "steps.rate.raw matches 'score.: *[0-9]+[.][0-9]'"
    message   = "write the score with one decimal"
    max       = 2
  }
}
output {
  score   = steps.rate.output.score
  raw     = steps.rate.raw
  model   = steps.rate.model
  tokens  = steps.rate.tokens
  cost    = steps.rate.cost_usd
  started = steps.rate.started_at
  ended   = steps.rate.ended_at
  kind    = steps.rate.error_kind
}
`)
	d := &fakeDriver{answers: map[string][]string{"rate": {`{"score": 8}`, "I think:\n{\"score\": 8.0}"}}, tokens: 5}
	clock := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	res, _ := startWith(t, pb, Options{Drivers: drivers(d), Clock: func() time.Time { return clock }})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	want := `{"cost":null,"ended":"2026-11-23T09:30:00Z","kind":"","model":"small","raw":"I think:\n{\"score\": 8.0}","score":8,"started":"2026-11-23T09:30:00Z","tokens":10}`
	if got := string(res.OutputJSON); got != want {
		t.Errorf("output\n got %s\nwant %s", got, want)
	}
	// The state names the raw answer's artifact, not the text.
	st, _, err := ReadRun(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := st.Steps["rate"]
	b, err := os.ReadFile(filepath.Join(res.Dir, rec.RawFile))
	if err != nil || string(b) != "I think:\n{\"score\": 8.0}" {
		t.Errorf("raw file %q: %q, %v", rec.RawFile, b, err)
	}
	// A run that did not see the answer (a resumed one) reads it back.
	r := &run{dir: &runDir{path: res.Dir}, raws: map[*StepRecord]string{}}
	if v := r.rawValue(rec); v.IsNull() || v.AsString() != string(b) {
		t.Errorf("rawValue after resume = %#v", v)
	}
}

type errDriver struct{ err error }

func (d errDriver) Call(context.Context, agent.Request) (agent.Response, error) {
	return agent.Response{}, d.err
}

// TestErrorKindRoutes routes on the kind of a failure: an unavailable
// model finishes with its own status, whatever the driver's words.
func TestErrorKindRoutes(t *testing.T) {
	pb := load(t, `
playbook "k" {
  exit_codes = { model_unavailable = 3 }
}
agent "coder" {}
step "code" {
  agent "coder" { prompt = "code" }
  continue_on_error = true
  gate {
    rule "unavailable" {
      when   = "steps.code.error_kind in ['unavailable', 'rate_limited']"
      finish = "model_unavailable"
      reason = "${steps.code.error_kind}: ${steps.code.error}"
    }
    otherwise {}
  }
}
step "lint" {
  shell { script = "exit 3" }
  continue_on_error = true
}
step "slow" {
  timeout = "50ms"
  shell { script = "sleep 5" }
  continue_on_error = true
}
output {
  lint = steps.lint.error_kind
  slow = steps.slow.error_kind
}
`)
	for _, tc := range []struct {
		err    error
		status string
	}{
		{&agent.StatusError{Status: 503, Err: errors.New("driver openai: HTTP 503 after 3 attempts")}, "model_unavailable"},
		{&agent.StatusError{Status: 429, Err: errors.New("driver openai: HTTP 429")}, "model_unavailable"},
		{errors.New("something else"), StatusCompleted},
	} {
		res, _ := startWith(t, pb, Options{Drivers: drivers(errDriver{tc.err})})
		if res.Status != tc.status {
			t.Errorf("%v: status %s, want %s (%s)", tc.err, res.Status, tc.status, res.Reason)
		}
		if tc.status == StatusCompleted {
			if got := string(res.OutputJSON); got != `{"lint":"exit_status","slow":"timeout"}` {
				t.Errorf("output %s", got)
			}
		} else if !strings.HasPrefix(res.Reason, "unavailable: ") && !strings.HasPrefix(res.Reason, "rate_limited: ") {
			t.Errorf("reason %q", res.Reason)
		}
	}
}

// TestImpureFunctionsReadTheHost checks that timestamp() reads the run's
// clock and uuid() gives a version 4 UUID.
func TestImpureFunctionsReadTheHost(t *testing.T) {
	pb := load(t, `
playbook "f" {}
step "s" {
  shell { command = ["echo", timestamp()] }
}
output {
  at = trimspace(steps.s.output)
  id = uuid()
}
`)
	clock := time.Date(2026, 11, 23, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	res, _ := startWith(t, pb, Options{Clock: func() time.Time { return clock }})
	var out struct{ At, ID string }
	if err := json.Unmarshal(res.OutputJSON, &out); err != nil {
		t.Fatal(err)
	}
	if out.At != "2026-11-23T09:00:00Z" {
		t.Errorf("timestamp() = %q", out.At)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(out.ID) {
		t.Errorf("uuid() = %q", out.ID)
	}
}
