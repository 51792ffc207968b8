package interp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
)

// fakeDriver answers agent calls from a list per step; the last answer
// repeats. Every call reports tokens.
type fakeDriver struct {
	answers map[string][]string
	tokens  int
	calls   map[string]int
	prompts map[string][]string
}

func (d *fakeDriver) Call(ctx context.Context, req agent.Request) (agent.Response, error) {
	if d.calls == nil {
		d.calls, d.prompts = map[string]int{}, map[string][]string{}
	}
	d.calls[req.Step]++
	d.prompts[req.Step] = append(d.prompts[req.Step], req.Prompt)
	list := d.answers[req.Step]
	if len(list) == 0 {
		return agent.Response{}, errors.New("no answer")
	}
	n := min(d.calls[req.Step], len(list)) - 1
	return agent.Response{Text: list[n], Usage: agent.Usage{InputTokens: d.tokens}}, nil
}

func startWith(t *testing.T, pb *lang.Playbook, opts Options) (*Result, *recorder) {
	t.Helper()
	rec := &recorder{}
	if opts.Workdir == "" {
		opts.Workdir = t.TempDir()
	}
	opts.Observer = rec
	opts.NoSync = true
	res, err := Start(context.Background(), pb, "test.hcl", opts)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res, rec
}

func drivers(d agent.Driver) DriverFactory {
	return func(*lang.Agent) (agent.Driver, error) { return d, nil }
}

func TestRetryWithBackoff(t *testing.T) {
	pb := load(t, `
playbook "r" {}
step "flaky" {
  retry {
    max     = 2
    backoff = "10ms"
  }
  shell { script = "echo x >> n; [ $(wc -l < n) -ge 3 ]" }
}
`)
	res, rec := startWith(t, pb, Options{})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	if got := len(rec.steps(EventStepRetried)); got != 2 {
		t.Errorf("%d retries, want 2", got)
	}
	st, _, _ := ReadRun(res.Dir)
	if st.Metrics.Retries != 2 {
		t.Errorf("metrics.retries = %d", st.Metrics.Retries)
	}
}

func TestCheckRejectsAnswerAndFeedsBack(t *testing.T) {
	pb := load(t, `
playbook "c" {}
agent "rater" {}
step "rate" {
  returns = object({ alignment_score = number })
  agent "rater" { prompt = "rate it" }
  check "decimal" {
    condition = "steps.rate.output.alignment_score != floor(steps.rate.output.alignment_score)"
    message   = "scores use decimal precision (x.x/10); ${steps.rate.output.alignment_score} is an integer"
    max       = 2
  }
}
output { score = steps.rate.output.alignment_score }
`)
	d := &fakeDriver{answers: map[string][]string{"rate": {`{"alignment_score": 8}`, `{"alignment_score": 8.5}`}}}
	res, rec := startWith(t, pb, Options{Drivers: drivers(d)})
	if res.Status != StatusCompleted || string(res.OutputJSON) != `{"score":8.5}` {
		t.Fatalf("status %s output %s (%s)", res.Status, res.OutputJSON, res.Reason)
	}
	if len(rec.steps(EventCheckFailed)) != 1 {
		t.Errorf("check_failed events: %v", rec.steps(EventCheckFailed))
	}
	if p := d.prompts["rate"]; len(p) != 2 || !strings.Contains(p[1], "8 is an integer") {
		t.Errorf("the second prompt lacks the check's message: %q", p)
	}

	// Always an integer: the check gives up after max re-runs.
	d = &fakeDriver{answers: map[string][]string{"rate": {`{"alignment_score": 8}`}}}
	res, _ = startWith(t, pb, Options{Drivers: drivers(d)})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, `check "decimal" failed`) || d.calls["rate"] != 3 {
		t.Errorf("status %s, %d calls, reason %q", res.Status, d.calls["rate"], res.Reason)
	}
}

func TestCircuitBreakerOpensOnNoProgress(t *testing.T) {
	pb := load(t, `
playbook "cb" {}
circuit_breaker {
  no_progress = 3
  cooldown    = "1h"
}
step "work" {
  progress_when = "false"
  shell { command = ["true"] }
  gate {
    rule "again" {
      when = "true"
      goto = "work"
      max  = 10
      on_exhausted { fail = "halt" }
    }
    otherwise {}
  }
}
`)
	res, rec := startWith(t, pb, Options{})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "circuit breaker open: 3 consecutive steps without progress") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if n := len(rec.steps(EventStepStarted)); n != 3 {
		t.Errorf("ran %d steps; the breaker should stop the third", n)
	}
	st, _, _ := ReadRun(res.Dir)
	if st.Breaker.State != BreakerOpen || st.Breaker.CooldownUntil == nil {
		t.Fatalf("breaker %+v", st.Breaker)
	}
	// Cooling down: resume refuses, unless forced or the cooldown passed.
	if _, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true}); err == nil || !strings.Contains(err.Error(), "open until") {
		t.Errorf("resume during cooldown: %v", err)
	}
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	rec = &recorder{}
	res, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, Clock: later, Observer: rec})
	if err != nil {
		t.Fatal(err)
	}
	// Half-open: one step without progress opens it again at once.
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "half-open") || len(rec.steps(EventStepStarted)) != 1 {
		t.Errorf("half-open trial: status %s reason %q, %d steps", res.Status, res.Reason, len(rec.steps(EventStepStarted)))
	}
}

func TestCircuitBreakerOpensOnSameError(t *testing.T) {
	pb := load(t, `
playbook "cb" {}
circuit_breaker { same_error = 2 }
step "work" {
  continue_on_error = true
  shell { script = "echo 'disk full at block 42' >&2; exit 1" }
  gate {
    rule "again" {
      when = "true"
      goto = "work"
      max  = 10
      on_exhausted { fail = "halt" }
    }
    otherwise {}
  }
}
`)
	res, _ := startWith(t, pb, Options{})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "the same error 2 times in a row") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
}

func TestLimitsCapTokensAndRetries(t *testing.T) {
	pb := load(t, `
playbook "l" {}
limits { max_tokens = 100 }
agent "a" {}
step "one" {
  continue_on_error = true
  agent "a" { prompt = "x" }
}
step "two" {
  continue_on_error = true
  agent "a" { prompt = "y" }
}
step "three" {
  agent "a" { prompt = "z" }
}
`)
	d := &fakeDriver{answers: map[string][]string{"one": {"a"}, "two": {"b"}, "three": {"c"}}, tokens: 60}
	res, rec := startWith(t, pb, Options{Drivers: drivers(d)})
	if res.Status != StatusFailed || res.Recommendation != "halt" || !strings.Contains(res.Reason, "limits.max_tokens: the run used 120 tokens (max 100)") {
		t.Fatalf("status %s rec %s reason %q", res.Status, res.Recommendation, res.Reason)
	}
	if got := rec.steps(EventStepStarted); strings.Join(got, ",") != "one,two" {
		t.Errorf("ran %v; continue_on_error must not outlive a run cap", got)
	}

	pb = load(t, `
playbook "l" {}
limits { max_retries = 2 }
step "loop" {
  shell { command = ["true"] }
  gate {
    rule "again" {
      when = "true"
      goto = "loop"
      max  = 5
      on_exhausted { fail = "halt" }
    }
    otherwise {}
  }
}
`)
	res, _ = startWith(t, pb, Options{})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "limits.max_retries: a retry beyond the 2 this run may make") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
}

func TestLimitsWallClock(t *testing.T) {
	pb := load(t, `
playbook "w" {}
limits { timeout = "300ms" }
step "slow" { shell { command = ["sleep", "10"] } }
`)
	begin := time.Now()
	res, _ := startWith(t, pb, Options{})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "limits.timeout") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if time.Since(begin) > 8*time.Second {
		t.Errorf("the wall-clock cap did not stop the step (%s)", time.Since(begin))
	}
}

func TestStepTokenCap(t *testing.T) {
	pb := load(t, `
playbook "s" {}
agent "a" {}
step "big" {
  max_tokens = 50
  agent "a" { prompt = "x" }
}
`)
	d := &fakeDriver{answers: map[string][]string{"big": {"a"}}, tokens: 80}
	res, _ := startWith(t, pb, Options{Drivers: drivers(d)})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "max_tokens: step used 80 tokens (max 50)") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
}

const askPlaybook = `
playbook "esc" {}
step "review" {
  shell { command = ["echo", "high"] }
}
step "escalate" {
  ask {
    question = "Review found a high-severity issue. What now?"
    options  = ["retry", "skip", "abort"]
  }
  gate {
    rule "abort" {
      when = "steps.escalate.output == 'abort'"
      fail = "halt"
    }
    otherwise {}
  }
}
step "after" { shell { command = ["echo", "after"] } }
output { choice = steps.escalate.output }
`

type fixedAsker string

func (a fixedAsker) Ask(ctx context.Context, q Question) (string, error) { return string(a), nil }

func TestAskPausesAndResumesWithAnswer(t *testing.T) {
	pb := load(t, askPlaybook)
	res, rec := startWith(t, pb, Options{})
	if res.Status != StatusWaiting || res.Waiting == nil || res.Waiting.Step != "escalate" {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if len(rec.steps(EventStepStarted)) != 2 {
		t.Errorf("steps started: %v", rec.steps(EventStepStarted))
	}
	st, _, _ := ReadRun(res.Dir)
	if st.Waiting == nil || st.Waiting.Step != "escalate" || strings.Join(st.Waiting.Options, ",") != "retry,skip,abort" {
		t.Fatalf("waiting %+v", st.Waiting)
	}
	var we *WaitingError
	if _, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true}); !errors.As(err, &we) || we.Key != "escalate" || we.Given != "" {
		t.Errorf("resume without an answer: %v", err)
	}
	// A typo in the answer is refused before anything runs; the run still
	// waits.
	if _, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, Answers: map[string]string{"escalate": "maybe"}}); !errors.As(err, &we) || we.Given != "maybe" || !strings.Contains(err.Error(), `step escalate takes one of: retry, skip, abort`) {
		t.Fatalf("bad answer: %v", err)
	}
	if st, _, _ := ReadRun(res.Dir); st.Meta.Status != StatusWaiting {
		t.Fatalf("after a refused answer the run is %s", st.Meta.Status)
	}
	rec = &recorder{}
	res, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, Answers: map[string]string{"escalate": "skip"}, Observer: rec})
	if err != nil || res.Status != StatusCompleted || string(res.OutputJSON) != `{"choice":"skip"}` {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if got := rec.steps(EventStepReused); strings.Join(got, ",") != "review" {
		t.Errorf("reused %v", got)
	}
	st, _, _ = ReadRun(res.Dir)
	found := false
	for _, e := range st.Events {
		if e.Type == EventHumanDecision && e.Details["choice"] == "skip" {
			found = true
		}
	}
	if !found {
		t.Error("the decision is not in the event log")
	}

	res, _ = startWith(t, pb, Options{Asker: fixedAsker("abort")})
	if res.Status != StatusFailed || res.Recommendation != "halt" {
		t.Errorf("answered at the terminal: %+v", res)
	}
}

func TestSubPlaybook(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "child"), 0o755)
	os.WriteFile(filepath.Join(dir, "child", "main.hcl"), []byte(`
playbook "child" {}
input "phase" { type = string }
step "work" { shell { script = "echo child ${inputs.phase} >> ran.txt; echo -n done-${inputs.phase}" } }
output { result = steps.work.output }
`), 0o644)
	os.WriteFile(filepath.Join(dir, "parent.hcl"), []byte(`
playbook "parent" {}
step "phase" {
  playbook {
    source = "child"
    inputs = { phase = "6.3" }
  }
}
output { child = steps.phase.output.result }
`), 0o644)
	pb, diags := lang.Load(filepath.Join(dir, "parent.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	work := t.TempDir()
	res, rec := startWith(t, pb, Options{Workdir: work})
	if res.Status != StatusCompleted || string(res.OutputJSON) != `{"child":"done-6.3"}` {
		t.Fatalf("status %s output %s (%s)", res.Status, res.OutputJSON, res.Reason)
	}
	if got := strings.Join(rec.steps(EventStepStarted), ","); got != "phase,phase/work" {
		t.Errorf("steps %s", got)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "subruns", "phase-1", "state.json")); err != nil {
		t.Errorf("sub-run directory: %v", err)
	}

	os.WriteFile(filepath.Join(dir, "bad.hcl"), []byte(`
playbook "bad" {}
step "phase" {
  playbook {
    source = "child"
    inputs = { phse = "6.3" }
  }
}
`), 0o644)
	_, diags = lang.Load(filepath.Join(dir, "bad.hcl"))
	var all []string
	for _, d := range diags {
		all = append(all, d.Detail)
	}
	got := strings.Join(all, "\n")
	if !strings.Contains(got, `Playbook "child" has no input "phse". Did you mean "phase"?`) || !strings.Contains(got, `requires input "phase"`) {
		t.Errorf("diagnostics: %s", got)
	}
}

func TestResumeFrom(t *testing.T) {
	pb := load(t, `
playbook "f" {}
step "a" { shell { script = "echo a >> log" } }
step "b" { shell { script = "echo b >> log" } }
step "c" { shell { script = "echo c >> log" } }
`)
	res, _, work := start(t, pb, nil)
	res, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, From: "b"})
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("resume --from: %v %+v", err, res)
	}
	b, _ := os.ReadFile(filepath.Join(work, "log"))
	if string(b) != "a\nb\nc\nb\nc\n" {
		t.Errorf("log %q", b)
	}
	if _, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, From: "nope"}); err == nil {
		t.Error("resume --from an unknown step succeeded")
	}
}

func TestForEachResumeKeepsFinishedItems(t *testing.T) {
	pb := load(t, `
playbook "fr" {}
step "work" {
  for_each    = "['a', 'b', 'c']"
  key         = "item"
  concurrency = 1
  step "do" {
    shell { script = "echo ${item} >> log; [ ${item} != b ] || [ -f ok ]" }
  }
}
step "check" {
  when = "steps.work.output.failed > 0"
  shell { command = ["false"] }
}
`)
	res, _, work := start(t, pb, nil)
	if res.Status != StatusFailed {
		t.Fatalf("status %s", res.Status)
	}
	os.WriteFile(filepath.Join(work, "ok"), nil, 0o644)
	res, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, From: "work"})
	if err != nil {
		t.Fatal(err)
	}
	// --from work recomputes the items: all three run again.
	b, _ := os.ReadFile(filepath.Join(work, "log"))
	if string(b) != "a\nb\nc\na\nb\nc\n" || res.Status != StatusCompleted {
		t.Errorf("log %q status %s (%s)", b, res.Status, res.Reason)
	}
}

func TestStateBlockPutsStateWhereThePlaybookSays(t *testing.T) {
	pb := load(t, `
playbook "s" {}
state { path = ".autopilot/state.json" }
step "a" { shell { command = ["true"] } }
`)
	work := t.TempDir()
	res, _ := startWith(t, pb, Options{Workdir: work})
	st, used, err := ReadRun(res.Dir)
	if err != nil || used != "state.json" || st.Meta.Status != StatusCompleted {
		t.Fatalf("read: %v %s %+v", err, used, st)
	}
	if _, err := os.Stat(filepath.Join(work, ".autopilot", "state.json")); err != nil {
		t.Errorf("state not at .autopilot/state.json: %v", err)
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "state.json")); err == nil {
		t.Errorf("state also written in the run directory")
	}
	// apl made .autopilot/, so it keeps the state files out of git there.
	gi, err := os.ReadFile(filepath.Join(work, ".autopilot", ".gitignore"))
	if err != nil || !strings.Contains(string(gi), "\nstate.json\n") || !strings.Contains(string(gi), "state.journal\n") || strings.Contains(string(gi), "*\n") && !strings.Contains(string(gi), ".state-*.tmp") {
		t.Errorf(".autopilot/.gitignore: %q %v", gi, err)
	}
}

// TestSubPlaybookSpendCountsTowardLimits: tokens spent by a sub-run count
// toward the parent's limits, as the sub-run spends them: the second
// sub-run's call, which may use as much as the first (60), does not fit
// in the 40 left and is not made.
func TestSubPlaybookSpendCountsTowardLimits(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "child.hcl"), []byte(`
playbook "child" {}
agent "a" {}
step "ask" { agent "a" { prompt = "x" } }
`), 0o644)
	os.WriteFile(filepath.Join(dir, "parent.hcl"), []byte(`
playbook "parent" {}
limits { max_tokens = 100 }
step "one" {
  playbook { source = "child.hcl" }
}
step "two" {
  playbook { source = "child.hcl" }
}
`), 0o644)
	pb, diags := lang.Load(filepath.Join(dir, "parent.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	d := &fakeDriver{answers: map[string][]string{"ask": {"ok"}}, tokens: 60}
	res, rec := startWith(t, pb, Options{Drivers: drivers(d)})
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "limits.max_tokens: a call of step ask may use 60 tokens (the most one call of the step used so far), more than the 40 left of 100 (60 used)") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if res.Metrics.TotalTokens != 60 || d.calls["ask"] != 1 {
		t.Errorf("%d tokens in %d calls, want 60 in 1", res.Metrics.TotalTokens, d.calls["ask"])
	}
	if got := rec.steps(EventStepStarted); strings.Join(got, ",") != "one,one/ask,two,two/ask" {
		t.Errorf("steps %v", got)
	}
}

// TestSubPlaybookAskWaitsInTheParent: a sub-run waiting for a decision
// makes its parent wait; resume --answer STEP/SUBSTEP=CHOICE answers it
// and the sub-run goes on where it stopped.
func TestSubPlaybookAskWaitsInTheParent(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "child.hcl"), []byte(`
playbook "child" {}
step "prep" { shell { script = "echo prep >> log" } }
step "escalate" {
  ask {
    question = "Ship it?"
    options  = ["yes", "no"]
  }
}
output { choice = steps.escalate.output }
`), 0o644)
	os.WriteFile(filepath.Join(dir, "parent.hcl"), []byte(`
playbook "parent" {}
step "phase" {
  playbook { source = "child.hcl" }
}
output { choice = steps.phase.output.choice }
`), 0o644)
	pb, diags := lang.Load(filepath.Join(dir, "parent.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	work := t.TempDir()
	res, _ := startWith(t, pb, Options{Workdir: work})
	if res.Status != StatusWaiting || res.Waiting == nil || res.Waiting.Step != "phase/escalate" {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	res, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, Answers: map[string]string{"phase/escalate": "yes"}})
	if err != nil || res.Status != StatusCompleted || string(res.OutputJSON) != `{"choice":"yes"}` {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "log")); string(b) != "prep\n" {
		t.Errorf("the sub-run's first step ran again: %q", b)
	}
}

// A sub-playbook's agents use its own driver blocks, even where the
// parent has a driver block of the same name (the driver factory used to
// look names up in the top playbook only: "unknown driver type").
func TestSubPlaybookUsesItsOwnDrivers(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "child"), 0o755)
	os.WriteFile(filepath.Join(dir, "child", "main.hcl"), []byte(`
playbook "child" {}
driver "local" {
  type    = "command"
  command = ["printf", "child-agent"]
}
agent "worker" {
  driver = "local"
}
step "work" {
  agent "worker" { prompt = "work" }
}
output { said = steps.work.output }
`), 0o644)
	os.WriteFile(filepath.Join(dir, "parent.hcl"), []byte(`
playbook "parent" {}
driver "local" {
  type    = "command"
  command = ["printf", "parent-agent"]
}
agent "lead" {
  driver = "local"
}
step "plan" {
  agent "lead" { prompt = "plan" }
}
step "phase" {
  playbook {
    source = "child"
  }
}
output {
  parent = steps.plan.output
  child  = steps.phase.output.said
}
`), 0o644)
	pb, diags := lang.Load(filepath.Join(dir, "parent.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	res, _ := startWith(t, pb, Options{Workdir: t.TempDir()})
	if res.Status != StatusCompleted || string(res.OutputJSON) != `{"child":"child-agent","parent":"parent-agent"}` {
		t.Fatalf("status %s output %s (%s)", res.Status, res.OutputJSON, res.Reason)
	}
}
