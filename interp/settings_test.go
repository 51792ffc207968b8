package interp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins"
	"github.com/zclconf/go-cty/cty"
)

// settingsPlaybook takes its concurrency, per-model limits, a loop's cap
// and a step's timeout from inputs, which the mode "careful" changes.
const settingsPlaybook = `
playbook "settings" {}
input "tasks" {
  type = list(object({ id = string, blocked_by = list(string), model = string, retry = bool }))
}
input "parallel" {
  type    = number
  default = 3
}
input "model_limits" {
  type    = map(number)
  default = { haiku = 5, sonnet = 2, opus = 1 }
}
input "cycles" {
  type    = number
  default = 2
}
input "timeout_minutes" {
  type    = number
  default = 30
}
mode "careful" {
  inputs = { parallel = 1, cycles = 4, timeout_minutes = 5 }
}
step "work" {
  for_each    = "inputs.tasks"
  key         = "item.id"
  concurrency = inputs.parallel
  limit "model" {
    key     = "item.model"
    max     = inputs.model_limits
    default = 1
  }
  step "implement" {
    timeout = "${inputs.timeout_minutes}m"
    shell {
      command = ["implement", item.id]
      env     = { MODEL = item.model }
    }
  }
}
step "review" {
  shell { command = ["review"] }
  gate {
    rule "again" {
      when = "true"
      goto = "review"
      max  = inputs.cycles + 1
      on_exhausted { finish = "reviewed" }
    }
  }
}
`

// settingsShell records what the fake shell saw: items at once by model,
// reviews, and the time limits it was given.
type settingsShell struct {
	*fakeShell
	mu       sync.Mutex
	reviews  int
	timeouts map[time.Duration]bool
}

func (s *settingsShell) Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	s.mu.Lock()
	if spec.Timeout > 0 {
		s.timeouts[spec.Timeout] = true
	}
	review := spec.Step == "review" || spec.Step == "again"
	if review {
		s.reviews++
	}
	s.mu.Unlock()
	if review {
		return builtins.ShellResult{Output: cty.StringVal("")}, nil
	}
	return s.fakeShell.Run(ctx, spec)
}

// TestSettingsFollowInputsAndModes runs one playbook with its defaults,
// with its mode, and with --input values: concurrency, the per-model
// limits, the loop's cap and the time limit follow each.
func TestSettingsFollowInputsAndModes(t *testing.T) {
	var tasks []map[string]any
	for i := range 12 {
		tasks = append(tasks, map[string]any{"id": fmt.Sprintf("T%d", i), "blocked_by": []string{},
			"model": []string{"haiku", "sonnet", "opus"}[i%3]})
	}
	for _, tc := range []struct {
		name       string
		mode       string
		inputs     map[string]cty.Value
		parallel   int
		byModel    map[string]int
		reviews    int
		timeout    time.Duration
		atLeastTwo bool
	}{
		{name: "defaults", parallel: 3, byModel: map[string]int{"sonnet": 2, "opus": 1}, reviews: 4, timeout: 30 * time.Minute, atLeastTwo: true},
		{name: "mode", mode: "careful", parallel: 1, reviews: 6, timeout: 5 * time.Minute},
		{name: "inputs", inputs: map[string]cty.Value{
			"parallel":     cty.NumberIntVal(6),
			"model_limits": cty.MapVal(map[string]cty.Value{"haiku": cty.NumberIntVal(1), "sonnet": cty.NumberIntVal(1)}),
			"cycles":       cty.NumberIntVal(1),
		}, parallel: 6, byModel: map[string]int{"haiku": 1, "sonnet": 1, "opus": 1}, reviews: 3, timeout: 30 * time.Minute, atLeastTwo: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pb := load(t, settingsPlaybook)
			inputs := map[string]cty.Value{"tasks": tasksValue(tasks)}
			for k, v := range tc.inputs {
				inputs[k] = v
			}
			sh := &settingsShell{fakeShell: newFakeShell(3 * time.Millisecond), timeouts: map[time.Duration]bool{}}
			res, err := Start(context.Background(), pb, "settings", Options{Workdir: t.TempDir(), Shell: sh, NoSync: true,
				Mode: tc.mode, Inputs: inputs})
			if err != nil {
				t.Fatal(err)
			}
			if res.Status != "reviewed" {
				t.Fatalf("status %s (%s)", res.Status, res.Reason)
			}
			if sh.maxTotal > tc.parallel {
				t.Errorf("%d items ran at once; concurrency is %d", sh.maxTotal, tc.parallel)
			}
			if tc.atLeastTwo && sh.maxTotal < 2 {
				t.Errorf("items never ran in parallel")
			}
			for model, limit := range tc.byModel {
				if sh.maxBy[model] > limit {
					t.Errorf("%d %s items ran at once; the limit is %d", sh.maxBy[model], model, limit)
				}
			}
			if sh.reviews != tc.reviews {
				t.Errorf("%d reviews; want %d (the cap plus the first)", sh.reviews, tc.reviews)
			}
			if len(sh.timeouts) != 1 || !sh.timeouts[tc.timeout] {
				t.Errorf("time limits %v; want %s", sh.timeouts, tc.timeout)
			}
		})
	}
}

// TestSettingFromBadInputStopsTheRunAtStart: a value that makes a setting
// invalid is an input error before anything runs.
func TestSettingFromBadInputStopsTheRunAtStart(t *testing.T) {
	pb := load(t, settingsPlaybook)
	sh := &settingsShell{fakeShell: newFakeShell(0), timeouts: map[time.Duration]bool{}}
	_, err := Start(context.Background(), pb, "settings", Options{Workdir: t.TempDir(), Shell: sh, NoSync: true,
		Inputs: map[string]cty.Value{"tasks": tasksValue([]map[string]any{{"id": "a", "blocked_by": []string{}, "model": "haiku"}}), "parallel": cty.NumberIntVal(0)}})
	var ie *InputError
	if !errors.As(err, &ie) || ie.Input != "parallel" || !strings.Contains(err.Error(), "work.concurrency is 0; it must be a whole number of at least 1") {
		t.Fatalf("err %v", err)
	}
	if sh.reviews != 0 || sh.maxTotal != 0 {
		t.Errorf("something ran")
	}
}

// TestResumeKeepsTheSettingsTheRunStartedWith: a run resumed with a
// changed playbook (--force) keeps the caps it fixed when it started.
func TestResumeKeepsTheSettingsTheRunStartedWith(t *testing.T) {
	src := `
playbook "r" {}
input "cycles" {
  type    = number
  default = 2
}
step "review" {
  shell { command = ["review"] }
  gate {
    rule "again" {
      when = "true"
      goto = "review"
      max  = inputs.cycles
      on_exhausted { goto = "confirm" }
    }
  }
}
step "confirm" {
  ask {
    question = "Ship?"
    options  = ["yes", "no"]
  }
}
step "again" {
  shell { command = ["review"] }
  gate {
    rule "again" {
      when = "true"
      goto = "again"
      max  = inputs.cycles
      on_exhausted { finish = "shipped" }
    }
  }
}
`
	sh := &settingsShell{fakeShell: newFakeShell(0), timeouts: map[time.Duration]bool{}}
	work := t.TempDir()
	res, err := Start(context.Background(), load(t, src), "r", Options{Workdir: work, Shell: sh, NoSync: true})
	if err != nil || res.Status != StatusWaiting {
		t.Fatalf("start: %v %+v", err, res)
	}
	if sh.reviews != 3 {
		t.Fatalf("%d reviews before the question; want 3", sh.reviews)
	}
	changed := load(t, strings.ReplaceAll(src, "max  = inputs.cycles", "max  = inputs.cycles * 5"))
	res, err = Resume(context.Background(), changed, res.Dir, Options{Shell: sh, NoSync: true, Force: true,
		Answers: map[string]string{"confirm": "yes"}})
	if err != nil || res.Status != "shipped" {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if sh.reviews != 6 {
		t.Errorf("%d reviews in all; want 6: the resumed run keeps max 2", sh.reviews)
	}
}
