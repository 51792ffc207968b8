package interp

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zclconf/go-cty/cty"
)

// requeuePlaybook runs four items one at a time; a and b are requeued
// once by their review's gate.
const requeuePlaybook = `
playbook "requeue" {}
step "work" {
  for_each = "['a', 'b', 'c', 'd']"
  key      = "item"
  step "do" {
    shell {
      script = "echo ${item}-${item_attempt} >> log.txt; sleep 0.02"
    }
  }
  step "review" {
    gate {
      rule "again" {
        when    = "item_attempt == 1 && item in ['a', 'b']"
        requeue = true
        max     = 1
        on_exhausted {
          fail = "stuck"
        }
      }
      otherwise {}
    }
  }
}
`

func TestRequeueRunsBehindFreshItems(t *testing.T) {
	res, rec, work := start(t, load(t, requeuePlaybook), nil)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	log, _ := os.ReadFile(filepath.Join(work, "log.txt"))
	// In place, a would have run twice before b started; requeued, the
	// fresh c and d go first.
	if got, want := strings.Fields(string(log)), []string{"a-1", "b-1", "c-1", "d-1", "a-2", "b-2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order %v, want %v", got, want)
	}
	var requeued []string
	for _, e := range rec.events {
		if e.Type == EventItemRequeued {
			requeued = append(requeued, e.Item)
		}
	}
	if fmt.Sprint(requeued) != "[a b]" {
		t.Errorf("item_requeued events for %v", requeued)
	}
	st, _, _ := ReadRun(res.Dir)
	if r := st.Items["work"]["a"]; r.Requeues != 1 || r.Status != StepCompleted {
		t.Errorf("a: %+v", r)
	}
}

// TestRequeueResumesAfterKill kills a run with requeued items at random
// moments and resumes it: every item runs its first and second attempt,
// each once except the one in flight, and none a third.
func TestRequeueResumesAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	pb := load(t, requeuePlaybook)
	names := []string{"a-1", "b-1", "c-1", "d-1", "a-2", "b-2"}
	for i := range 5 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			log := killAndResume(t, pb, 150*time.Millisecond, "APL_TEST_REQUEUE=1")
			ranOnce(t, log, names, 1)
			if strings.Contains(log, "-3") {
				t.Errorf("a third attempt ran:\n%s", log)
			}
		})
	}
}

func TestExhaustedKeepsTheCappedOutcomesSet(t *testing.T) {
	pb := load(t, `
playbook "keep" {}
step "try" {
  shell {
    command = ["echo", "no"]
  }
  gate {
    otherwise {
      set  = { last = "attempt ${steps.try.attempts}" }
      goto = "try"
      max  = 2
      on_exhausted {
        fail   = "gave_up"
        reason = "gave up after ${vars.last}"
      }
    }
  }
}
`)
	res, _, _ := start(t, pb, nil)
	if res.Status != StatusFailed || res.Reason != "gave up after attempt 3" {
		t.Errorf("status %s, reason %q", res.Status, res.Reason)
	}
}

func onItemFailurePlaybook(mode string) string {
	return strings.Replace(dagPlaybook, "concurrency = 3", "concurrency = 1\n  on_item_failure = \""+mode+"\"", 1)
}

func TestOnItemFailure(t *testing.T) {
	tasks := []map[string]any{
		{"id": "a", "blocked_by": []string{}, "model": "haiku"},
		{"id": "b", "blocked_by": []string{"a"}, "model": "haiku"},
		{"id": "c", "blocked_by": []string{}, "model": "haiku"},
		{"id": "d", "blocked_by": []string{}, "model": "haiku"},
	}
	for _, tt := range []struct {
		mode, status, output, reason string
	}{
		{"continue", StatusCompleted, `{"blocked":1,"completed":2,"failed":1}`, ""},
		{"at_end", StatusFailed, `{"blocked":1,"completed":2,"failed":1}`, `1 item(s) failed: "a": `},
		{"fail_fast", StatusFailed, `{"blocked":1,"completed":0,"failed":1}`, `item "a" failed; 2 item(s) not started (on_item_failure = "fail_fast")`},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			sh := newFakeShell(0)
			sh.fail["a"] = true
			res, err := Start(context.Background(), load(t, onItemFailurePlaybook(tt.mode)), "dag", Options{Workdir: t.TempDir(), Shell: sh, NoSync: true,
				Inputs: map[string]cty.Value{"tasks": tasksValue(tasks)}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != tt.status || string(res.OutputJSON) != tt.output || !strings.Contains(res.Reason, tt.reason) {
				t.Errorf("status %s output %s reason %q", res.Status, res.OutputJSON, res.Reason)
			}
		})
	}
}

// TestResumeRunsFailedItemsAgain resumes a run whose for_each failed for
// an item: the completed items are not run again, the failed one and
// those it blocked are.
func TestResumeRunsFailedItemsAgain(t *testing.T) {
	pb := load(t, onItemFailurePlaybook("at_end"))
	tasks := []map[string]any{
		{"id": "a", "blocked_by": []string{}, "model": "haiku"},
		{"id": "b", "blocked_by": []string{"a"}, "model": "haiku"},
		{"id": "c", "blocked_by": []string{}, "model": "haiku"},
	}
	sh := newFakeShell(0)
	sh.fail["a"] = true
	work := t.TempDir()
	res, err := Start(context.Background(), pb, "dag", Options{Workdir: work, Shell: sh, NoSync: true,
		Inputs: map[string]cty.Value{"tasks": tasksValue(tasks)}})
	if err != nil || res.Status != StatusFailed {
		t.Fatalf("first run: %v %+v", err, res)
	}
	sh2 := newFakeShell(0)
	res, err = Resume(context.Background(), pb, res.Dir, Options{Shell: sh2, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCompleted || string(res.OutputJSON) != `{"blocked":0,"completed":3,"failed":0}` {
		t.Fatalf("resumed: status %s output %s (%s)", res.Status, res.OutputJSON, res.Reason)
	}
	if _, ran := sh2.started["c"]; ran || len(sh2.started) != 2 {
		t.Errorf("resume ran %v; want a and b only", sh2.started)
	}
}

// TestLimitFollowsEscalatedModel escalates every item from haiku to
// sonnet on a requeue, with one implement step whose model is computed
// per call, and watches, through the files a real agent command writes,
// that no more sonnet calls run at once than the sonnet limit allows.
func TestLimitFollowsEscalatedModel(t *testing.T) {
	pb := load(t, `
playbook "escalate" {}
input "tasks" {
  type = list(object({ id = string, model = string }))
}
agent "impl" {}
step "tasks" {
  for_each    = "inputs.tasks"
  key         = "item.id"
  concurrency = 4
  limit "model" {
    key = "item_attempt > 1 ? 'sonnet' : item.model"
    max = { haiku = 3, sonnet = 1 }
  }
  step "implement" {
    agent "impl" {
      prompt = "do ${item.id}"
      model  = item_attempt > 1 ? "sonnet" : item.model
    }
  }
  step "review" {
    gate {
      rule "escalate" {
        when    = "item_attempt == 1"
        requeue = "implement"
        max     = 1
        on_exhausted {
          fail = "stuck"
        }
      }
      otherwise {}
    }
  }
}
`)
	work := t.TempDir()
	script := filepath.Join(work, "agent.sh")
	writeFile(t, script, `#!/bin/sh
m="$1"; mkdir -p "obs/$m"
touch "obs/$m/$APL_ITEM_KEY"
ls "obs/$m" | wc -l >> "obs/max-$m"
sleep 0.15
rm "obs/$m/$APL_ITEM_KEY"
echo done
`)
	var tasks []cty.Value
	for i := range 4 {
		tasks = append(tasks, cty.ObjectVal(map[string]cty.Value{"id": cty.StringVal(fmt.Sprintf("t%d", i)), "model": cty.StringVal("haiku")}))
	}
	res, err := Start(context.Background(), pb, "escalate", Options{Workdir: work, NoSync: true, AgentCommand: []string{"sh", script, "{model}"},
		Inputs: map[string]cty.Value{"tasks": cty.ListVal(tasks)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	counts := func(model string) []int {
		b, err := os.ReadFile(filepath.Join(work, "obs", "max-"+model))
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, f := range strings.Fields(string(b)) {
			n, _ := strconv.Atoi(f)
			out = append(out, n)
		}
		return out
	}
	haiku, sonnet := counts("haiku"), counts("sonnet")
	if len(haiku) != 4 || len(sonnet) != 4 {
		t.Fatalf("calls: haiku %v, sonnet %v; want 4 of each", haiku, sonnet)
	}
	if max(haiku[0], haiku[1], haiku[2], haiku[3]) > 3 || max(sonnet[0], sonnet[1], sonnet[2], sonnet[3]) > 1 {
		t.Errorf("at once: haiku %v (limit 3), sonnet %v (limit 1)", haiku, sonnet)
	}
	if max(haiku[0], haiku[1], haiku[2], haiku[3]) < 2 {
		t.Errorf("haiku calls never overlapped: %v", haiku)
	}
}
