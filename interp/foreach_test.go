package interp

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/zclconf/go-cty/cty"
)

// fakeShell stands in for processes: it records which items run at once
// and in what order they finish.
type fakeShell struct {
	mu       sync.Mutex
	running  map[string]int // limit value → running now
	total    int
	maxTotal int
	maxBy    map[string]int
	started  map[string]time.Time
	finished map[string]time.Time
	delay    time.Duration
	fail     map[string]bool
}

func newFakeShell(delay time.Duration) *fakeShell {
	return &fakeShell{running: map[string]int{}, maxBy: map[string]int{}, started: map[string]time.Time{},
		finished: map[string]time.Time{}, delay: delay, fail: map[string]bool{}}
}

func envOf(spec builtins.ShellSpec, name string) string {
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func (f *fakeShell) Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	key, model := envOf(spec, "APL_ITEM_KEY"), envOf(spec, "MODEL")
	f.mu.Lock()
	f.total++
	f.running[model]++
	f.maxTotal = max(f.maxTotal, f.total)
	f.maxBy[model] = max(f.maxBy[model], f.running[model])
	f.started[key] = time.Now()
	f.mu.Unlock()
	time.Sleep(f.delay)
	f.mu.Lock()
	f.total--
	f.running[model]--
	f.finished[key] = time.Now()
	fail := f.fail[key]
	f.mu.Unlock()
	if fail {
		return builtins.ShellResult{ExitCode: 1, Stderr: "failed on purpose", Output: cty.StringVal("")}, nil
	}
	return builtins.ShellResult{Output: cty.StringVal("ok " + key)}, nil
}

const dagPlaybook = `
playbook "dag" {}
input "tasks" {
  type = list(object({ id = string, blocked_by = list(string), model = string, retry = bool }))
}
step "work" {
  for_each    = "inputs.tasks"
  key         = "item.id"
  depends_on  = "item.blocked_by"
  priority    = "item.retry ? 1 : 0"
  concurrency = 3
  limit "model" {
    key = "item.model"
    max = { haiku = 5, sonnet = 2, opus = 1 }
  }
  step "implement" {
    shell {
      command = ["implement", item.id]
      env     = { MODEL = item.model }
    }
  }
}
output {
  completed = steps.work.output.completed
  failed    = steps.work.output.failed
  blocked   = steps.work.output.blocked
}
`

func tasksValue(tasks []map[string]any) cty.Value {
	var vals []cty.Value
	for _, t := range tasks {
		var deps []cty.Value
		for _, d := range t["blocked_by"].([]string) {
			deps = append(deps, cty.StringVal(d))
		}
		dl := cty.ListValEmpty(cty.String)
		if len(deps) > 0 {
			dl = cty.ListVal(deps)
		}
		vals = append(vals, cty.ObjectVal(map[string]cty.Value{
			"id": cty.StringVal(t["id"].(string)), "blocked_by": dl,
			"model": cty.StringVal(t["model"].(string)), "retry": cty.BoolVal(t["retry"] == true),
		}))
	}
	return cty.ListVal(vals)
}

// TestForEachDAGRespectsLimitsAndDependencies runs random task graphs and
// checks that no more items ran at once than the limits allow and that no
// item started before the items it depends on finished.
func TestForEachDAGRespectsLimitsAndDependencies(t *testing.T) {
	pb := load(t, dagPlaybook)
	models := []string{"haiku", "sonnet", "opus"}
	for trial := range 4 {
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(trial), 7))
			var tasks []map[string]any
			for i := range 24 {
				var deps []string
				for j := 0; j < i; j++ {
					if rng.IntN(8) == 0 {
						deps = append(deps, fmt.Sprintf("T%d", j))
					}
				}
				tasks = append(tasks, map[string]any{"id": fmt.Sprintf("T%d", i), "blocked_by": deps,
					"model": models[rng.IntN(3)], "retry": rng.IntN(4) == 0})
			}
			sh := newFakeShell(3 * time.Millisecond)
			res, err := Start(context.Background(), pb, "dag", Options{Workdir: t.TempDir(), Shell: sh, NoSync: true,
				Inputs: map[string]cty.Value{"tasks": tasksValue(tasks)}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != StatusCompleted || string(res.OutputJSON) != `{"blocked":0,"completed":24,"failed":0}` {
				t.Fatalf("status %s output %s reason %s", res.Status, res.OutputJSON, res.Reason)
			}
			if sh.maxTotal > 3 {
				t.Errorf("%d items ran at once; concurrency is 3", sh.maxTotal)
			}
			for model, limit := range map[string]int{"haiku": 5, "sonnet": 2, "opus": 1} {
				if sh.maxBy[model] > limit {
					t.Errorf("%d %s items ran at once; the limit is %d", sh.maxBy[model], model, limit)
				}
			}
			if sh.maxTotal < 2 {
				t.Errorf("items never ran in parallel (max %d)", sh.maxTotal)
			}
			for _, task := range tasks {
				id := task["id"].(string)
				for _, d := range task["blocked_by"].([]string) {
					if sh.started[id].Before(sh.finished[d]) {
						t.Errorf("%s started before its dependency %s finished", id, d)
					}
				}
			}
		})
	}
}

func TestForEachFailureBlocksDependentsOnly(t *testing.T) {
	pb := load(t, dagPlaybook)
	tasks := []map[string]any{
		{"id": "a", "blocked_by": []string{}, "model": "haiku"},
		{"id": "b", "blocked_by": []string{"a"}, "model": "haiku"},
		{"id": "c", "blocked_by": []string{"b"}, "model": "haiku"},
		{"id": "d", "blocked_by": []string{}, "model": "haiku"},
	}
	sh := newFakeShell(0)
	sh.fail["a"] = true
	res, err := Start(context.Background(), pb, "dag", Options{Workdir: t.TempDir(), Shell: sh, NoSync: true,
		Inputs: map[string]cty.Value{"tasks": tasksValue(tasks)}})
	if err != nil {
		t.Fatal(err)
	}
	// on_item_failure = "at_end": every item that can run runs, then the
	// step fails; its output still counts them.
	if res.Status != StatusFailed || string(res.OutputJSON) != `{"blocked":2,"completed":1,"failed":1}` || !strings.Contains(res.Reason, `1 item(s) failed: "a"`) {
		t.Fatalf("status %s output %s (%s)", res.Status, res.OutputJSON, res.Reason)
	}
	st, _, _ := ReadRun(res.Dir)
	if got := st.Items["work"]["c"].Error; !strings.Contains(got, `blocked: item "b" blocked`) {
		t.Errorf("c's error: %q", got)
	}
	if st.Items["work"]["d"].Status != StepCompleted {
		t.Errorf("d: %+v", st.Items["work"]["d"])
	}
}

func TestForEachDeadlockIsReported(t *testing.T) {
	pb := load(t, dagPlaybook)
	tasks := []map[string]any{
		{"id": "x", "blocked_by": []string{"y"}, "model": "haiku"},
		{"id": "y", "blocked_by": []string{"x"}, "model": "haiku"},
		{"id": "z", "blocked_by": []string{"ghost"}, "model": "haiku"},
		{"id": "ok", "blocked_by": []string{}, "model": "haiku"},
	}
	done := make(chan struct{})
	var res *Result
	var err error
	go func() {
		defer close(done)
		res, err = Start(context.Background(), pb, "dag", Options{Workdir: t.TempDir(), Shell: newFakeShell(0), NoSync: true,
			Inputs: map[string]cty.Value{"tasks": tasksValue(tasks)}})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a deadlocked task graph hung the run")
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusFailed {
		t.Fatalf("status %s", res.Status)
	}
	for _, want := range []string{"deadlock", `item "x" waits on "y" (pending)`, `item "z" waits on "ghost" (no such item)`, "needs intervention"} {
		if !strings.Contains(res.Reason, want) {
			t.Errorf("reason %q lacks %q", res.Reason, want)
		}
	}
	st, _, _ := ReadRun(res.Dir)
	var out map[string]any
	json.Unmarshal(st.Steps["work"].Output, &out)
	if fmt.Sprint(out["deadlocked"]) != "[x y z]" || out["completed"] != 1.0 {
		t.Errorf("output %s", st.Steps["work"].Output)
	}
}

func TestForEachItemKeyReachesAgents(t *testing.T) {
	pb := load(t, `
playbook "keys" {}
agent "worker" {}
step "work" {
  for_each = "['a', 'b']"
  step "ask" {
    returns = object({ key = string })
    agent "worker" { prompt = "do ${item}" }
  }
}
output { items = { for k, v in steps.work.output.items : k => v.outputs.ask.key } }
`)
	script := t.TempDir() + "/agent.sh"
	writeFile(t, script, "#!/bin/sh\nprintf '{\"key\": \"%s\"}' \"$APL_ITEM_KEY\"\n")
	res, err := Start(context.Background(), pb, "keys", Options{Workdir: t.TempDir(), NoSync: true, AgentCommand: []string{"sh", script}})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.OutputJSON) != `{"items":{"0":"0","1":"1"}}` {
		t.Errorf("output %s (%s)", res.OutputJSON, res.Reason)
	}
}

// An item's record says which fail value failed it (its recommendation),
// so a later step can tell an escalated task from a broken one without
// keeping its own table.
func TestForEachItemRecommendation(t *testing.T) {
	pb := load(t, `
playbook "rec" {}
input "tasks" {
  type = list(string)
}
step "work" {
  for_each        = "inputs.tasks"
  key             = "item"
  on_item_failure = "continue"
  step "implement" {
    shell {
      command = ["implement", item]
    }
    gate {
      rule "escalate" {
        when   = "item == 'hard'"
        fail   = "escalated"
        reason = "too hard"
      }
      rule "skip" {
        when   = "item == 'dull'"
        finish = "skipped"
      }
      otherwise {}
    }
  }
}
output {
  status         = { for k, it in steps.work.output.items : k => it.status }
  recommendation = { for k, it in steps.work.output.items : k => it.recommendation }
  escalated      = "${join(",", [for k, it in steps.work.output.items : k if it.recommendation == "escalated"])}"
}
`)
	sh := newFakeShell(0)
	sh.fail["broken"] = true
	res, err := Start(context.Background(), pb, "rec", Options{Workdir: t.TempDir(), Shell: sh, NoSync: true,
		Inputs: map[string]cty.Value{"tasks": cty.ListVal([]cty.Value{cty.StringVal("hard"), cty.StringVal("dull"), cty.StringVal("broken"), cty.StringVal("fine")})}})
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Status, Recommendation map[string]string
		Escalated              string
	}
	if err := json.Unmarshal(res.OutputJSON, &out); err != nil {
		t.Fatalf("%v: %s", err, res.OutputJSON)
	}
	want := map[string][2]string{"hard": {"failed", "escalated"}, "dull": {"skipped", ""}, "broken": {"failed", ""}, "fine": {"completed", ""}}
	for k, w := range want {
		if out.Status[k] != w[0] || out.Recommendation[k] != w[1] {
			t.Errorf("item %s: status %q recommendation %q, want %q %q", k, out.Status[k], out.Recommendation[k], w[0], w[1])
		}
	}
	if out.Escalated != "hard" {
		t.Errorf("escalated = %q", out.Escalated)
	}
}

// stepShell records when each step of each item runs.
type stepShell struct {
	mu    sync.Mutex
	spans []stepSpan
	delay map[string]time.Duration
}

type stepSpan struct {
	step, key  string
	start, end time.Time
}

func (f *stepShell) Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	start := time.Now()
	time.Sleep(f.delay[spec.Step])
	f.mu.Lock()
	f.spans = append(f.spans, stepSpan{spec.Step, envOf(spec, "APL_ITEM_KEY"), start, time.Now()})
	f.mu.Unlock()
	return builtins.ShellResult{Output: cty.StringVal("ok")}, nil
}

// overlaps counts the pairs of spans of steps a and b, of different
// items, that ran at the same time.
func (f *stepShell) overlaps(a, b string) int {
	n := 0
	for _, x := range f.spans {
		for _, y := range f.spans {
			if x.step == a && y.step == b && x.key != y.key && x.start.Before(y.end) && y.start.Before(x.end) {
				n++
			}
		}
	}
	return n
}

// An item that reaches its release_slot step gives back its slot: with
// concurrency 1, the next item implements while the first is reviewed
// (the conductor's rule: a task under review is no longer a running implementer).
// Without release_slot the review holds the slot and nothing overlaps.
func TestForEachReleaseSlot(t *testing.T) {
	const src = `
playbook "review_queue" {}
input "tasks" {
  type = list(string)
}
step "work" {
  for_each    = "inputs.tasks"
  key         = "item"
  concurrency = 1
  step "implement" {
    shell {
      command = ["implement", item]
    }
  }
  step "review" {
    serial = true
    RELEASE
    shell {
      command = ["review", item]
    }
  }
}
`
	run := func(release string) *stepShell {
		pb := load(t, strings.Replace(src, "RELEASE", release, 1))
		sh := &stepShell{delay: map[string]time.Duration{"implement": 20 * time.Millisecond, "review": 100 * time.Millisecond}}
		res, err := Start(context.Background(), pb, "rq", Options{Workdir: t.TempDir(), Shell: sh, NoSync: true,
			Inputs: map[string]cty.Value{"tasks": cty.ListVal([]cty.Value{cty.StringVal("a"), cty.StringVal("b"), cty.StringVal("c")})}})
		if err != nil || res.Status != StatusCompleted {
			t.Fatalf("%v %+v", err, res)
		}
		return sh
	}
	sh := run("release_slot = true")
	if n := sh.overlaps("implement", "implement"); n != 0 {
		t.Errorf("%d implementations overlapped; concurrency is 1", n)
	}
	if n := sh.overlaps("review", "review"); n != 0 {
		t.Errorf("%d reviews overlapped; review is serial", n)
	}
	if n := sh.overlaps("implement", "review"); n == 0 {
		t.Errorf("no item implemented while another was reviewed: the review held the slot (%+v)", sh.spans)
	}
	held := run("")
	if n := held.overlaps("implement", "review"); n != 0 {
		t.Errorf("without release_slot, %d implementations ran beside a review", n)
	}
}

// Many items that give back their slots at once, with steps that take no
// time: the scheduler's channel must never block an item that holds the
// walk (a deadlock found by the conductor's dry run).
func TestForEachReleaseSlotManyItems(t *testing.T) {
	pb := load(t, `
playbook "many" {}
input "n" {
  type = number
}
step "work" {
  for_each    = "map(1..int(inputs.n), string(#))"
  key         = "item"
  concurrency = 2
  step "implement" {
    shell {
      command = ["implement", item]
    }
  }
  step "queued" {
    release_slot = true
    shell {
      command = ["queued", item]
    }
  }
  step "review" {
    serial = true
    shell {
      command = ["review", item]
    }
  }
}
output { completed = steps.work.output.completed }
`)
	for i := range 20 {
		sh := &stepShell{}
		done := make(chan *Result, 1)
		go func() {
			res, err := Start(context.Background(), pb, "many", Options{Workdir: t.TempDir(), Shell: sh, NoSync: true,
				Inputs: map[string]cty.Value{"n": cty.NumberIntVal(60)}})
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		select {
		case res := <-done:
			if res == nil || string(res.OutputJSON) != `{"completed":60}` {
				t.Fatalf("run %d: %+v", i, res)
			}
		case <-time.After(time.Minute):
			t.Fatalf("run %d did not end within a minute: deadlock", i)
		}
	}
}

// askThenDecline tells asked when an item asks, and leaves the question
// unanswered.
type askThenDecline struct{ asked chan struct{} }

func (a askThenDecline) Ask(ctx context.Context, q Question) (string, error) {
	close(a.asked)
	return "", ErrNoAnswer
}

// waitShell holds item key's command until an item has asked, and
// linger more (so that an asking item that does not wait for a person has
// ended its walk before key frees its slot).
type waitShell struct {
	key    string
	linger time.Duration
	asked  chan struct{}
	mu     sync.Mutex
	ran    []string
}

func (w *waitShell) Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	key := envOf(spec, "APL_ITEM_KEY")
	if key == w.key {
		select {
		case <-w.asked:
			time.Sleep(w.linger)
		case <-time.After(time.Minute):
		}
	}
	w.mu.Lock()
	w.ran = append(w.ran, key)
	w.mu.Unlock()
	return builtins.ShellResult{Output: cty.StringVal("ok")}, nil
}

// Once an item waits for a person, no new item starts: a slot that frees
// stays free until the run is resumed with the answer (the conductor's
// rule: a high severity stops new spawns and asks a person).
func TestForEachNoNewItemWhileWaiting(t *testing.T) {
	pb := load(t, `
playbook "wait" {}
step "work" {
  for_each    = "['a', 'b', 'c']"
  key         = "item"
  concurrency = 2
  step "decide" {
    when = "item == 'a'"
    ask {
      question = "Go on with ${item}?"
      options  = ["yes", "no"]
    }
  }
  step "build" {
    shell {
      command = ["build", item]
    }
  }
}
`)
	work := t.TempDir()
	sh := &waitShell{key: "b", linger: 500 * time.Millisecond, asked: make(chan struct{})}
	res, err := Start(context.Background(), pb, "wait", Options{Workdir: work, Shell: sh, NoSync: true, RunID: "w1",
		Asker: askThenDecline{asked: sh.asked}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusWaiting || res.Waiting == nil || res.Waiting.Item != "a" {
		t.Fatalf("status %s, waiting %+v", res.Status, res.Waiting)
	}
	if !slices.Equal(sh.ran, []string{"b"}) {
		t.Errorf("items that ran while a waited: %v, want only b (c must not start)", sh.ran)
	}
	res, err = Resume(context.Background(), pb, res.Dir, Options{Workdir: work, Shell: sh, NoSync: true,
		Answers: map[string]string{"decide[a]": "yes"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCompleted || !slices.Contains(sh.ran, "c") || !slices.Contains(sh.ran, "a") {
		t.Errorf("after the answer: %s, ran %v", res.Status, sh.ran)
	}
}
