package interp

// Regression tests from a review of the runtime: each showed one defect
// and failed before its fix.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
)

// A gate that goes back to a for_each step must run its items again, as a
// goto back runs any other step again. items() finds the previous visit's
// records in r.st.Items and restores them (all finished), so nothing runs
// and the step returns the same output: retry loops around a for_each
// (e.g. "goto work while failed > 0") spin without doing anything. The
// same holds for a retry block or a check on_fail = "retry" on the
// for_each step.
func TestReviewForEachGotoBackRunsItemsAgain(t *testing.T) {
	pb := load(t, `
playbook "loop" {}
step "work" {
  for_each = "['a', 'b']"
  key      = "item"
  step "do" {
    shell { script = "echo ${item} >> log" }
  }
}
step "again" {
  gate {
    rule "twice" {
      when = "steps.work.attempts < 2"
      goto = "work"
      max  = 1
      on_exhausted { fail = "halt" }
    }
    otherwise {}
  }
}
`)
	res, _, work := start(t, pb, nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	b, _ := os.ReadFile(filepath.Join(work, "log"))
	if got := strings.Fields(string(b)); len(got) != 4 {
		t.Errorf("items ran %d times in all (%q); the goto back should run both again", len(got), b)
	}
}

// A failed shell step with a returns type keeps its unparsed output (here
// null) in the state. restore() decodes every recorded output with the
// step's returns type, so Resume fails with "output of step ... in the
// state" and the failed step can never be retried, though retrying it is
// what resume is for. Same in restoreItems/decodeOutput for item steps.
func TestReviewResumeAfterTypedShellStepFailed(t *testing.T) {
	pb := load(t, `
playbook "typed" {}
step "probe" {
  returns = object({ ok = bool })
  shell {
    script = "test -f ok.txt && echo '{\"ok\": true}'"
    parse  = "json"
  }
}
output { ok = steps.probe.output.ok }
`)
	res, _, work := start(t, pb, nil)
	if res.Status != StatusFailed {
		t.Fatalf("status %s", res.Status)
	}
	os.WriteFile(filepath.Join(work, "ok.txt"), nil, 0o644)
	res, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true})
	if err != nil {
		t.Fatalf("resume of a failed typed shell step: %v", err)
	}
	if res.Status != StatusCompleted || string(res.OutputJSON) != `{"ok":true}` {
		t.Errorf("status %s output %s (%s)", res.Status, res.OutputJSON, res.Reason)
	}
}

// Resume of a run interrupted in its on_failure steps resets every main
// step that failed to pending (the loop over pb.Steps in Resume runs even
// when inOnFailure). The run stays failed and will not re-run that step,
// so the on_failure steps see steps.boom.status == "pending", and the
// final state says the step that failed the run is pending.
func TestReviewResumeInOnFailureKeepsFailedStep(t *testing.T) {
	pb := load(t, `
playbook "of" {}
step "boom" { shell { script = "exit 3" } }
on_failure {
  step "report" {
    shell { script = "if [ -f go.txt ]; then printf %s ${steps.boom.status} > seen.txt; exit 0; fi; sleep 30" }
  }
}
`)
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := ObserverFunc(func(e Event) {
		if e.Type == EventStepStarted && e.Step == "report" {
			go func() { time.Sleep(50 * time.Millisecond); cancel() }()
		}
	})
	res, err := Start(ctx, pb, "of", Options{Workdir: work, Observer: obs, NoSync: true})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	os.WriteFile(filepath.Join(work, "go.txt"), nil, 0o644)
	res, err = Resume(context.Background(), pb, res.Dir, Options{NoSync: true})
	if err != nil || res.Status != StatusFailed {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "seen.txt")); string(b) != StepFailed {
		t.Errorf("on_failure saw steps.boom.status = %q, want failed", b)
	}
	st, _, _ := ReadRun(res.Dir)
	if got := st.Steps["boom"].Status; got != StepFailed {
		t.Errorf("final state: boom is %q, want failed", got)
	}
}

// An ask step in on_failure with no Asker and no answer returns
// errWaiting from runOnFailure; execute only maps ErrInterrupted to a
// checkpoint, so Start returns (nil, "waiting for a decision"): no Result,
// no waiting status, no st.Waiting persisted, no run_waiting event.
func TestReviewAskInOnFailureWaits(t *testing.T) {
	pb := load(t, `
playbook "ofask" {}
step "boom" { shell { script = "exit 3" } }
on_failure {
  step "decide" {
    ask {
      question = "Roll back?"
      options  = ["yes", "no"]
    }
  }
}
`)
	res, err := Start(context.Background(), pb, "ofask", Options{Workdir: t.TempDir(), NoSync: true})
	if err != nil {
		t.Fatalf("Start returned an error instead of a waiting run: %v", err)
	}
	if res.Status != StatusWaiting {
		t.Errorf("status %s, want waiting", res.Status)
	}
	st, _, _ := ReadRun(res.Dir)
	if st.Waiting == nil || st.Waiting.Step != "decide" {
		t.Errorf("waiting %+v", st.Waiting)
	}
}

// When limits.max_retries trips on a capped goto back, apply has already
// counted the goto (f.caps[key]++) and decide's tripRun sets failedInStep,
// so CurrentStep stays at the gate step, which completed. Resume reports
// that step as reused, then runs it again (its action too) and counts the
// goto a second time: the cap is exhausted after fewer gotos than max.
// Here max = 3 gotos should run work 4 times; it runs 3.
func TestReviewCapTripInGateCountsGotoTwiceOnResume(t *testing.T) {
	src := `
playbook "cap" {}
limits { max_retries = %d }
step "work" { shell { script = "echo w >> log" } }
step "check" {
  shell { script = "echo c >> log" }
  gate {
    rule "again" {
      when = "true"
      goto = "work"
      max  = 3
      on_exhausted { finish = "done" }
    }
  }
}
`
	pb := load(t, strings.Replace(src, "%d", "1", 1))
	res, _, work := start(t, pb, nil)
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "max_retries") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	raised := load(t, strings.Replace(src, "%d", "100", 1))
	rec := &recorder{}
	res, err := Resume(context.Background(), raised, res.Dir, Options{NoSync: true, Force: true, Observer: rec})
	if err != nil || res.Status != "done" {
		t.Fatalf("resume: %v %+v", err, res)
	}
	b, _ := os.ReadFile(filepath.Join(work, "log"))
	if n := strings.Count(string(b), "w"); n != 4 {
		t.Errorf("work ran %d times with max = 3 gotos, want 4; log %q", n, b)
	}
	if started := rec.steps(EventStepStarted); len(started) > 0 && started[0] == "check" {
		t.Errorf("resume re-ran check, which completed (and was reported reused: %v)", rec.steps(EventStepReused))
	}
}

// loadParentChild loads a parent playbook that runs child/main.hcl.
func loadParentChild(t *testing.T, parent, child string) *lang.Playbook {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "child"), 0o755)
	os.WriteFile(filepath.Join(dir, "child", "main.hcl"), []byte(child), 0o644)
	os.WriteFile(filepath.Join(dir, "parent.hcl"), []byte(parent), 0o644)
	pb, diags := lang.Load(filepath.Join(dir, "parent.hcl"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return pb
}

// subPlaybookAction copies the parent's Options whole (opts := r.opts), so
// a parent resumed with --from hands From (and Answers) to the sub-run's
// Resume: "--from prep: playbook "child" has no main step of that name",
// and the parent's step fails. (With a child step of the same name the
// child would silently restart from it.)
func TestReviewResumeFromDoesNotLeakIntoSubRun(t *testing.T) {
	pb := loadParentChild(t, `
playbook "parent" {}
step "prep" { shell { command = ["true"] } }
step "phase" {
  playbook { source = "child" }
}
`, `
playbook "child" {}
step "work" { shell { script = "if [ -f go.txt ]; then exit 0; fi; sleep 30" } }
`)
	work := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := ObserverFunc(func(e Event) {
		if e.Type == EventStepStarted && e.Step == "phase/work" {
			go func() { time.Sleep(50 * time.Millisecond); cancel() }()
		}
	})
	res, err := Start(ctx, pb, "parent", Options{Workdir: work, Observer: obs, NoSync: true})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err %v, want ErrInterrupted", err)
	}
	os.WriteFile(filepath.Join(work, "go.txt"), nil, 0o644)
	res, err = Resume(context.Background(), pb, res.Dir, Options{NoSync: true, From: "prep"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCompleted {
		t.Errorf("status %s: %s", res.Status, res.Reason)
	}
}

// Observer promises calls "from the goroutine running the playbook, in
// order". Item goroutines emit under r.mu, so they never overlap, but a
// sub-run emits through prefixObserver from inside r.unlocked: two items
// running sub-playbooks call the observer at the same time (a data race
// for any observer that is not itself synchronized, like the CLI's
// printer).
func TestReviewObserverNotCalledConcurrently(t *testing.T) {
	pb := loadParentChild(t, `
playbook "parent" {}
step "work" {
  for_each    = "['a', 'b', 'c']"
  concurrency = 3
  step "phase" {
    playbook { source = "child" }
  }
}
`, `
playbook "child" {}
step "one" { shell { script = "sleep 0.05" } }
step "two" { shell { script = "sleep 0.05" } }
`)
	var inside, overlaps atomic.Int32
	obs := ObserverFunc(func(e Event) {
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		time.Sleep(10 * time.Millisecond)
		inside.Add(-1)
	})
	res, err := Start(context.Background(), pb, "parent", Options{Workdir: t.TempDir(), Observer: obs, NoSync: true})
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("run: %v %+v", err, res)
	}
	if n := overlaps.Load(); n > 0 {
		t.Errorf("the observer was called concurrently %d times", n)
	}
}

// A crash after a gate failed the run but before the first on_failure
// step's commit loses Meta.OnFailure (runOnFailure sets it in memory only).
// The state says failed, current_step "", not in on_failure, so Resume
// refuses ("failed by its own decision") and the on_failure steps never
// run. The crash is simulated by an observer that panics at the
// on_failure step's step_started event, which comes before its commit.
func TestReviewCrashBeforeOnFailureCommit(t *testing.T) {
	pb := load(t, `
playbook "of" {}
step "work" {
  gate {
    otherwise {
      fail   = "rollback"
      reason = "judge said so"
    }
  }
}
on_failure {
  step "cleanup" { shell { script = "echo cleaned > cleaned.txt" } }
}
`)
	work := t.TempDir()
	crash := ObserverFunc(func(e Event) {
		if e.Type == EventStepStarted && e.Step == "cleanup" {
			panic("crash")
		}
	})
	func() {
		defer func() { recover() }()
		Start(context.Background(), pb, "of", Options{Workdir: work, RunID: "crashed", Observer: crash, NoSync: true})
	}()
	res, err := Resume(context.Background(), pb, filepath.Join(work, ".apl", "runs", "crashed"), Options{NoSync: true})
	if err != nil {
		t.Fatalf("resume after a crash before on_failure: %v", err)
	}
	if _, err := os.Stat(filepath.Join(work, "cleaned.txt")); err != nil || res.Status != StatusFailed {
		t.Errorf("on_failure did not run after resume (%v), status %s", err, res.Status)
	}
}

// scriptedDriver answers each call of a step from a list: a string is an
// answer, an error fails the call.
type scriptedDriver struct {
	mu    sync.Mutex
	calls int
	plan  []any
}

func (d *scriptedDriver) Call(ctx context.Context, req agent.Request) (agent.Response, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.plan[min(d.calls, len(d.plan)-1)]
	d.calls++
	if err, ok := p.(error); ok {
		return agent.Response{}, err
	}
	return agent.Response{Text: p.(string)}, nil
}

// A check rejects the first answer and asks again; the second call fails.
// The step failed and its last attempt produced nothing, but the rejected
// answer stays as steps.rate.output (attempt only calls setOutput when the
// action returned a value, and nothing clears rec.Output/f.outputs when an
// attempt starts), so a continue_on_error gate or the output block reads
// an answer the check threw out. The same happens on a goto back to a
// step whose second visit fails or is skipped.
func TestReviewFailedRetryDoesNotKeepRejectedOutput(t *testing.T) {
	pb := load(t, `
playbook "stale" {}
agent "rater" {}
step "rate" {
  returns           = object({ score = number })
  continue_on_error = true
  agent "rater" { prompt = "rate it" }
  check "high" {
    condition = "steps.rate.output.score >= 5"
    max       = 1
  }
}
output {
  status = steps.rate.status
  score  = steps.rate.output
}
`)
	d := &scriptedDriver{plan: []any{`{"score": 3}`, errors.New("backend down")}}
	res, _ := startWith(t, pb, Options{Drivers: drivers(d)})
	if d.calls != 2 {
		t.Fatalf("%d calls (%s)", d.calls, res.Reason)
	}
	if got := string(res.OutputJSON); got != `{"score":null,"status":"failed"}` {
		t.Errorf("output %s: the rejected answer outlived the failed retry", got)
	}
}

// askAction's doc says the choice "is recorded in the event log and the
// trace", but a choice given to resume (--answer) writes no span: only
// the Asker path calls r.trace.
func TestReviewAnswerGivenToResumeIsTraced(t *testing.T) {
	pb := load(t, askPlaybook)
	res, _ := startWith(t, pb, Options{})
	if res.Status != StatusWaiting {
		t.Fatalf("status %s", res.Status)
	}
	res, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, Answers: map[string]string{"escalate": "skip"}})
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("resume: %v %+v", err, res)
	}
	b, _ := os.ReadFile(filepath.Join(res.Dir, "trace.jsonl"))
	found := false
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var sp Span
		json.Unmarshal([]byte(line), &sp)
		if sp.Step == "escalate" && strings.Contains(sp.InputSummary, "What now?") && strings.HasPrefix(sp.OutputSummary, "skip ") {
			found = true
		}
	}
	if !found {
		t.Errorf("no decision span for the answer given to resume:\n%s", b)
	}
}

// Shell and call artifacts and spans are numbered by rec.Attempts, which a
// retry block does not change (only step() increments it): every retry
// writes STEP-1.stdout over the one before and its span repeats attempt 1,
// so the output of the failed tries is lost. Agent calls use rec.Calls and
// are fine.
func TestReviewRetriesKeepTheirArtifacts(t *testing.T) {
	pb := load(t, `
playbook "r" {}
step "flaky" {
  retry {
    max     = 2
    backoff = "1ms"
  }
  shell { script = "echo x >> n; c=$(wc -l < n); echo try $c; [ $c -ge 3 ]" }
}
`)
	res, _ := startWith(t, pb, Options{})
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	b, _ := os.ReadFile(filepath.Join(res.Dir, "trace.jsonl"))
	arts := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var sp Span
		json.Unmarshal([]byte(line), &sp)
		if sp.Action == "command_run" {
			arts[sp.Artifact] = true
		}
	}
	if len(arts) != 3 {
		t.Errorf("3 tries left %d distinct artifacts: %v", len(arts), arts)
	}
}

// resume --from b reports b and c as "completed earlier; not run again"
// (step_reused) and then runs them again: the reuse loop in Resume ignores
// From (and likewise reports a completed current step that will re-run).
func TestReviewResumeFromDoesNotReportRerunStepsReused(t *testing.T) {
	pb := load(t, `
playbook "f" {}
step "a" { shell { command = ["true"] } }
step "b" { shell { command = ["true"] } }
step "c" { shell { command = ["true"] } }
`)
	res, _, _ := start(t, pb, nil)
	rec := &recorder{}
	res, err := Resume(context.Background(), pb, res.Dir, Options{NoSync: true, From: "b", Observer: rec})
	if err != nil || res.Status != StatusCompleted {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if got := strings.Join(rec.steps(EventStepReused), ","); got != "a" {
		t.Errorf("reused %q, want a (b and c run again)", got)
	}
}

// Only apl marks an item "blocked" (its dependencies failed), so an item
// cannot finish as "blocked": validate rejects the constant, and the
// runtime a computed one, with the same list (lang.ReservedStatus). A run
// may still finish as "blocked".
func TestReservedStatusesAgreeBetweenValidateAndRun(t *testing.T) {
	const body = `
playbook "blk" {}
step "work" {
  for_each = "['a']"
  key      = "item"
  step "do" {
    gate {
      rule "stop" {
        when   = "true"
        finish = %s
      }
      otherwise {}
    }
  }
}
`
	_, diags := (&lang.Loader{}).LoadSources(map[string][]byte{"test.hcl": []byte(fmt.Sprintf(body, `"blocked"`))}, ".")
	if !diags.HasErrors() || !strings.Contains(diags.Error(), "Reserved status") {
		t.Fatalf("validate accepted an item finishing as blocked: %v", diags)
	}
	pb := load(t, fmt.Sprintf(body, `"${item == "a" ? "blocked" : "done"}"`))
	res, _, _ := start(t, pb, nil)
	st, _, err := ReadRun(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec := st.Items["work"]["a"]; rec.Status != StepFailed || !strings.Contains(rec.Error, `cannot finish as "blocked"`) {
		t.Errorf("item a: %s %q, want failed: cannot finish as blocked", rec.Status, rec.Error)
	}
	pb = load(t, `
playbook "top" {}
step "s" {
  gate {
    rule "stop" {
      when   = "true"
      finish = "blocked"
    }
  }
}
`)
	if res, _, _ := start(t, pb, nil); res.Status != "blocked" {
		t.Errorf("run status %q, want blocked", res.Status)
	}
}

// A cap that tripped the main steps does not stop a for_each step in
// on_failure (it once ran none of its items).
func TestReviewOnFailureForEachRunsAfterTrip(t *testing.T) {
	pb := load(t, `
playbook "trip" {}
limits { max_retries = 1 }
step "flaky" {
  retry {
    max     = 3
    backoff = "1ms"
  }
  shell { command = ["false"] }
}
on_failure {
  step "notify" {
    for_each = "['x']"
    step "say" { shell { script = "echo ${item} >> notified" } }
  }
}
`)
	res, _, work := start(t, pb, nil)
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "max_retries") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if _, err := os.Stat(filepath.Join(work, "notified")); err != nil {
		t.Errorf("the on_failure for_each ran no items: %v", err)
	}
}

// STYLE 10: runtime failures name the step and its source range. A run
// cap or breaker trip sets Meta.Reason to the capError's bare message
// (tripRun), and limits.timeout names no step at all, so the reason does
// not say where the run stopped.
func TestReviewTripReasonNamesStep(t *testing.T) {
	pb := load(t, `
playbook "l" {}
limits { max_retries = 1 }
step "loop" {
  shell { command = ["true"] }
  gate {
    rule "again" {
      when = "true"
      goto = "loop"
      max  = 5
      on_exhausted { fail = "halt" }
    }
  }
}
`)
	res, _, _ := start(t, pb, nil)
	if res.Status != StatusFailed || !strings.Contains(res.Reason, "max_retries") {
		t.Fatalf("status %s reason %q", res.Status, res.Reason)
	}
	if !strings.Contains(res.Reason, `step "loop" (test.hcl:`) {
		t.Errorf("reason %q does not name the step", res.Reason)
	}
}

// dirRemovingShell is a fakeShell that deletes a directory when item k2
// runs, so that the next compaction of a state kept there fails.
type dirRemovingShell struct {
	*fakeShell
	dir string
}

func (s dirRemovingShell) Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	if envOf(spec, "APL_ITEM_KEY") == "k2" {
		os.RemoveAll(s.dir)
	}
	return s.fakeShell.Run(ctx, spec)
}

// When a commit fails inside a for_each (here: compaction cannot create
// its temp file), forEach returns at once while other items still run.
// Their goroutines then block for ever on the unbuffered done channel
// (nobody receives any more): a goroutine leak per running item, in a
// process (a CLI or a parent run) that goes on. forEach should keep
// draining done until running == 0 before it returns an error.
func TestReviewForEachCommitErrorLeaksItemGoroutines(t *testing.T) {
	pb := load(t, `
playbook "leak" {}
state { path = "st/state.json" }
step "work" {
  for_each    = "map(1..40, 'k' + string(#))"
  key         = "item"
  concurrency = 3
  step "do" { shell { command = ["x"] } }
}
`)
	work := t.TempDir()
	sh := dirRemovingShell{newFakeShell(5 * time.Millisecond), filepath.Join(work, "st")}
	_, err := Start(context.Background(), pb, "leak", Options{Workdir: work, Shell: sh, NoSync: true})
	if err == nil {
		t.Fatal("the run did not see the failed commit")
	}
	time.Sleep(300 * time.Millisecond)
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	if n := strings.Count(stacks, "interp.(*localHost).spawn.func"); n > 0 {
		t.Errorf("%d item goroutines still blocked after Start returned (%v)", n, err)
	}
}
