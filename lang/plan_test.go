package lang

import (
	"os"
	"strings"
	"testing"
	"time"
)

// planOpts are the defaults apl plan passes: a shell action's 60s, an
// agent call's 10m.
var planOpts = PlanOptions{
	ShellTimeout: time.Minute,
	AgentTimeout: func(string) time.Duration { return 10 * time.Minute },
}

func loadPlan(t *testing.T, src string, opts PlanOptions) *Plan {
	t.Helper()
	pb, diags := (&Loader{}).LoadSources(map[string][]byte{"p.hcl": []byte(src)}, ".")
	if diags.HasErrors() {
		t.Fatalf("load: %s", diags.Error())
	}
	return ComputePlan(pb, opts)
}

func n(v float64) Bound { return Exactly(v) }

// TestPlan checks plans of small playbooks, each worked out by hand in
// its comment.
func TestPlan(t *testing.T) {
	const agents = `
playbook "p" {}
agent "a" {}
`
	withDriver := `
playbook "p" {}
driver "d" {
  type       = "openai"
  model      = "m"
  max_tokens = 1000
  prices     = { m = { input = 3, output = 15 } }
}
agent "a" { driver = driver.d }
`
	tests := []struct {
		name    string
		src     string
		opts    func(*PlanOptions)
		want    Figures
		visits  map[string]Bound
		factors []string // "figure step", in order
		capped  []string // limits that capped a total
		path    string
	}{{
		// shell 60s; agent: 1 + 2 retries = 3 runs of 2 calls (returns:
		// one re-prompt) of 10m each, and backoff 1s + 2s.
		name: "retry and re-prompt",
		src: agents + `
step "build" {
  shell { command = ["make"] }
}
step "ask" {
  returns = object({ ok = bool })
  retry {
    max     = 2
    backoff = "1s"
  }
  agent "a" { prompt = "hi" }
}`,
		want:    Figures{Calls: n(6), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(60 + 6*600 + 3), Retries: n(2)},
		factors: []string{"tokens ask", "cost_usd ask"},
		path:    "build ask",
	}, {
		// A step timeout bounds each run: 3 runs of 90s.
		name: "step timeout",
		src: agents + `
step "ask" {
  timeout = "90s"
  returns = object({ ok = bool })
  retry { max = 2 }
  agent "a" { prompt = "hi" }
}`,
		want:    Figures{Calls: n(6), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(270), Retries: n(2)},
		factors: []string{"tokens ask", "cost_usd ask"},
	}, {
		// check goes back to plan 3 times: plan and check run 4 times;
		// plan makes 1 call, check 2; 3 retries (backward capped gotos).
		name: "capped loop",
		src: agents + `
step "plan" {
  agent "a" { prompt = "plan" }
}
step "check" {
  returns = object({ pass = bool })
  agent "a" { prompt = "check" }
  gate {
    rule "pass" {
      when = "steps.check.output.pass"
    }
    otherwise {
      goto = "plan"
      max  = 3
      on_exhausted { fail = "halt" }
    }
  }
}`,
		want:    Figures{Calls: n(12), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(12 * 600), Retries: n(3)},
		visits:  map[string]Bound{"plan": n(4), "check": n(4)},
		factors: []string{"tokens plan", "cost_usd plan", "tokens check", "cost_usd check"},
		path:    "plan check[otherwise] plan check[otherwise] plan check[otherwise] plan check[pass]",
	}, {
		// A constant list of 3 items, each making one call; the check
		// re-runs it once more.
		name: "for_each constant list",
		src: agents + `
step "each" {
  for_each = "['x', 'y', 'z']"
  step "do" {
    agent "a" { prompt = "do ${item}" }
    check "c" {
      condition = "steps.do.output != ''"
    }
  }
}`,
		want:    Figures{Calls: n(6), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(3600), Retries: n(3)},
		visits:  map[string]Bound{"each": n(1), "do": n(3)},
		factors: []string{"tokens do", "cost_usd do"},
	}, {
		name: "for_each unknown list",
		src: agents + `
input "tasks" { type = list(string) }
step "each" {
  for_each = "inputs.tasks"
  step "do" {
    agent "a" { prompt = "do ${item}" }
  }
}
step "after" {
  shell { command = ["true"] }
}`,
		want:    Figures{Calls: Unbounded, Tokens: Unbounded, CostUSD: Unbounded, Seconds: Unbounded, Retries: n(0)},
		factors: []string{"tokens do", "cost_usd do", "items each"},
	}, {
		// --items 5: 5 calls.
		name: "for_each with --items",
		src: agents + `
input "tasks" { type = list(string) }
step "each" {
  for_each = "inputs.tasks"
  step "do" {
    agent "a" { prompt = "do ${item}" }
  }
}`,
		opts:    func(o *PlanOptions) { o.Items = 5 },
		want:    Figures{Calls: n(5), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(3000), Retries: n(0)},
		visits:  map[string]Bound{"do": n(5)},
		factors: []string{"tokens do", "cost_usd do"},
	}, {
		// A call: 2000 prompt + 1000 answer tokens; $3 and $15 a million:
		// 0.006 + 0.015 = $0.021; 3 runs, 1 call each.
		name: "prices",
		src: withDriver + `
step "ask" {
  retry { max = 2 }
  agent "a" { prompt = "hi" }
}`,
		opts: func(o *PlanOptions) { o.PromptTokens = 2000 },
		want: Figures{Calls: n(3), Tokens: n(9000), CostUSD: n(0.063), Seconds: n(1800), Retries: n(2)},
	}, {
		// The same, within limits: tokens 5000, cost $0.05, 10 minutes.
		name: "limits cap the totals",
		src: withDriver + `
limits {
  max_tokens   = 5000
  max_cost_usd = 0.05
  timeout      = "10m"
  max_retries  = 1
}
step "ask" {
  retry { max = 2 }
  agent "a" { prompt = "hi" }
}`,
		opts:   func(o *PlanOptions) { o.PromptTokens = 2000 },
		want:   Figures{Calls: n(3), Tokens: n(5000), CostUSD: n(0.05), Seconds: n(600), Retries: n(1)},
		capped: []string{"limits.max_tokens", "limits.max_cost_usd", "limits.max_retries", "limits.timeout"},
	}, {
		// Without --prompt-tokens the step's own caps still hold.
		name: "step caps",
		src: withDriver + `
step "ask" {
  max_tokens   = 100000
  max_cost_usd = 2
  agent "a" { prompt = "hi" }
}`,
		want: Figures{Calls: n(1), Tokens: n(100000), CostUSD: n(2), Seconds: n(600), Retries: n(0)},
	}, {
		// The main step fails; on_failure's agent step runs: 2 calls.
		name: "on_failure",
		src: agents + `
step "work" {
  agent "a" { prompt = "work" }
}
on_failure {
  step "report" {
    agent "a" { prompt = "why" }
  }
}`,
		want:    Figures{Calls: n(2), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(1200), Retries: n(0)},
		factors: []string{"tokens work", "cost_usd work", "tokens report", "cost_usd report"},
		path:    "work! report",
	}, {
		// finally runs once after every ending: after a completed run
		// (work, then wrap_up) and after a failed one (work fails, report,
		// then wrap_up), whichever is worse: 3 calls.
		name: "finally after every ending",
		src: agents + `
step "work" {
  agent "a" { prompt = "work" }
}
on_failure {
  step "report" {
    agent "a" { prompt = "why" }
  }
}
finally {
  step "wrap_up" {
    agent "a" { prompt = "sum up" }
  }
}`,
		want:    Figures{Calls: n(3), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(1800), Retries: n(0)},
		visits:  map[string]Bound{"work": n(1), "report": n(1), "wrap_up": n(1)},
		factors: []string{"tokens work", "cost_usd work", "tokens report", "cost_usd report", "tokens wrap_up", "cost_usd wrap_up"},
		path:    "work! report wrap_up",
	}, {
		// finally runs once, even after a loop: check loops back to work
		// twice (3 visits of work, 3 calls), wrap_up once: 4 calls.
		name: "finally once after a loop",
		src: agents + `
step "work" {
  agent "a" { prompt = "work" }
}
step "check" {
  shell { command = ["true"] }
  continue_on_error = true
  gate {
    rule "again" {
      when = "steps.check.error != ''"
      goto = "work"
      max  = 2
      on_exhausted { finish = "gave_up" }
    }
    otherwise {}
  }
}
finally {
  step "wrap_up" {
    agent "a" { prompt = "sum up" }
  }
}`,
		want:    Figures{Calls: n(4), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(4*600 + 3*60), Retries: n(2)},
		visits:  map[string]Bound{"work": n(3), "check": n(3), "wrap_up": n(1)},
		factors: []string{"tokens work", "cost_usd work", "tokens wrap_up", "cost_usd wrap_up"},
		path:    "work check[again] work check[again] work check[again] wrap_up",
	}, {
		// limits.timeout holds the main steps to 10m; finally runs
		// without it: 10m + 10m.
		name: "finally outside limits.timeout",
		src: agents + `
limits { timeout = "10m" }
step "one" {
  agent "a" { prompt = "1" }
}
step "two" {
  agent "a" { prompt = "2" }
}
finally {
  step "wrap_up" {
    agent "a" { prompt = "sum up" }
  }
}`,
		want:    Figures{Calls: n(3), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(1200), Retries: n(0)},
		factors: []string{"tokens one", "cost_usd one", "tokens two", "cost_usd two", "tokens wrap_up", "cost_usd wrap_up"},
		capped:  []string{"limits.timeout"},
	}, {
		// 5 items, 2 at a time: every item's call counts (5), the wall
		// clock only ceil(5/2) = 3 items one after another (30m).
		name: "for_each concurrency",
		src: agents + `
step "each" {
  for_each    = "['a', 'b', 'c', 'd', 'e']"
  concurrency = 2
  step "do" {
    agent "a" { prompt = "do ${item}" }
  }
}`,
		want:    Figures{Calls: n(5), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(1800), Retries: n(0)},
		visits:  map[string]Bound{"do": n(5)},
		factors: []string{"tokens do", "cost_usd do"},
	}, {
		// A limit of 1 for some key: every item may have that key, so
		// they run one at a time (50m).
		name: "for_each limit lowers concurrency",
		src: agents + `
step "each" {
  for_each    = "['a', 'b', 'c', 'd', 'e']"
  concurrency = 4
  limit "model" {
    key = "item"
    max = { a = 1, b = 3 }
  }
  step "do" {
    agent "a" { prompt = "do ${item}" }
  }
}`,
		want:    Figures{Calls: n(5), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(3000), Retries: n(0)},
		factors: []string{"tokens do", "cost_usd do"},
	}, {
		// depends_on may chain every item: one at a time (50m).
		name: "for_each depends_on",
		src: agents + `
step "each" {
  for_each    = "['a', 'b', 'c', 'd', 'e']"
  concurrency = 4
  depends_on  = "item == 'a' ? [] : ['a']"
  step "do" {
    agent "a" { prompt = "do ${item}" }
  }
}`,
		want:    Figures{Calls: n(5), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(3000), Retries: n(0)},
		factors: []string{"tokens do", "cost_usd do"},
	}, {
		// An item runs do and check twice (one requeue): 2 calls and
		// 2×10m + 2×60s = 22m. 5 items, 2 at a time, requeued between
		// attempts: 5/2 + 1 = 3.5 items' time one after another (77m).
		name: "for_each requeue",
		src: agents + `
step "each" {
  for_each    = "['a', 'b', 'c', 'd', 'e']"
  concurrency = 2
  step "do" {
    agent "a" { prompt = "do ${item}" }
  }
  step "check" {
    shell { command = ["true"] }
    gate {
      rule "ok" {
        when = "steps.check.output == ''"
      }
      otherwise {
        requeue = true
        max     = 1
        on_exhausted { fail = "rejected" }
      }
    }
  }
}`,
		want:    Figures{Calls: n(10), Tokens: Unbounded, CostUSD: Unbounded, Seconds: n(3.5 * 1320), Retries: n(5)},
		visits:  map[string]Bound{"do": n(10), "check": n(10)},
		factors: []string{"tokens do", "cost_usd do"},
	}, {
		// An item's do runs 3 times (check loops back twice) at 3000
		// tokens a call, 9000, but its max_tokens holds each item's record
		// to 5000: 3 items, 15000 (not 3 × 3 × 5000).
		name: "step cap per for_each item",
		src: withDriver + `
step "each" {
  for_each = "['a', 'b', 'c']"
  step "do" {
    max_tokens = 5000
    agent "a" { prompt = "do ${item}" }
  }
  step "check" {
    shell { command = ["true"] }
    gate {
      rule "ok" {
        when = "steps.check.output == ''"
      }
      otherwise {
        goto = "do"
        max  = 2
        on_exhausted { fail = "rejected" }
      }
    }
  }
}`,
		opts:   func(o *PlanOptions) { o.PromptTokens = 2000 },
		want:   Figures{Calls: n(9), Tokens: n(15000), CostUSD: n(9 * 0.021), Seconds: n(9*600 + 9*60), Retries: n(6)},
		visits: map[string]Bound{"do": n(9)},
	}, {
		name: "ask waits",
		src: agents + `
step "choose" {
  ask {
    question = "Go on?"
    options  = ["yes", "no"]
  }
}`,
		want:    Figures{Calls: n(0), Tokens: n(0), CostUSD: n(0), Seconds: Unbounded, Retries: n(0)},
		factors: []string{"seconds choose"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := planOpts
			if tt.opts != nil {
				tt.opts(&opts)
			}
			p := loadPlan(t, tt.src, opts)
			if p.Total != tt.want {
				t.Errorf("total:\n got %+v\nwant %+v", p.Total, tt.want)
			}
			for name, want := range tt.visits {
				for _, sp := range p.Steps {
					if sp.Name == name && sp.Visits != want {
						t.Errorf("visits of %s: got %+v, want %+v", name, sp.Visits, want)
					}
				}
			}
			var factors []string
			for _, f := range p.Unbounded {
				factors = append(factors, f.Figure+" "+f.Step)
				if f.Range.Filename == "" {
					t.Errorf("factor %s %s has no range", f.Figure, f.Step)
				}
			}
			if strings.Join(factors, ", ") != strings.Join(tt.factors, ", ") {
				t.Errorf("factors:\n got %v\nwant %v", factors, tt.factors)
			}
			var capped []string
			for _, c := range p.Capped {
				capped = append(capped, c.Limit)
			}
			if strings.Join(capped, ", ") != strings.Join(tt.capped, ", ") {
				t.Errorf("capped: got %v, want %v", capped, tt.capped)
			}
			if tt.path != "" {
				if got := pathString(p.Path); got != tt.path {
					t.Errorf("path:\n got %s\nwant %s", got, tt.path)
				}
			}
		})
	}
}

// pathString writes a path as "step[rule]", with ! for a failing step.
func pathString(path []PathStep) string {
	var parts []string
	for _, ps := range path {
		s := ps.Step
		if ps.Rule != "" {
			s += "[" + ps.Rule + "]"
		}
		if ps.Fails {
			s += "!"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// TestPlanPhaseGates checks that examples/phase-gates, which forks
// stdlib:phase-runner to change an input's default, has its upstream's
// plan, which spec/plan-stdlib.md works through: a default that no cap
// reads changes no figure.
func TestPlanPhaseGates(t *testing.T) {
	ld := &Loader{Stdlib: os.DirFS("../stdlib/playbooks")}
	fork, diags := ld.Load("../examples/phase-gates")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	upstream, diags := ld.Load("stdlib:phase-runner")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	got, want := ComputePlan(fork, planOpts), ComputePlan(upstream, planOpts)
	if got.Total != want.Total {
		t.Errorf("total:\n got %+v\nwant %+v", got.Total, want.Total)
	}
	if len(got.Steps) != len(want.Steps) {
		t.Fatalf("%d steps, upstream %d", len(got.Steps), len(want.Steps))
	}
	for i, sp := range got.Steps {
		if w := want.Steps[i]; sp.Name != w.Name || sp.Visits != w.Visits || sp.Total != w.Total {
			t.Errorf("step %s: %+v %+v, upstream %s: %+v %+v", sp.Name, sp.Visits, sp.Total, w.Name, w.Visits, w.Total)
		}
	}
}

// TestPlanSearchFallback checks that a section with more cap combinations
// than the search takes gets the flow bound, which is no lower.
func TestPlanSearchFallback(t *testing.T) {
	var b strings.Builder
	b.WriteString("playbook \"p\" {}\nagent \"a\" {}\n")
	for i := range 8 {
		b.WriteString(strings.NewReplacer("N", string(rune('a'+i))).Replace(`
step "N" {
  returns = object({ ok = bool })
  agent "a" { prompt = "N" }
  gate {
    rule "ok" {
      when = "steps.N.output.ok"
    }
    otherwise {
      goto = "N"
      max  = 9
      on_exhausted { fail = "halt" }
    }
  }
}
`))
	}
	p := loadPlan(t, b.String(), planOpts)
	if !p.Approximate || len(p.Path) != 0 {
		t.Fatalf("want the flow bound, got approximate=%v path=%d", p.Approximate, len(p.Path))
	}
	// The flow bound lets each step pass on every visit: step k runs
	// 10 + 9(k-1) times (its own loop and every visit of the one before),
	// 80 + 9(0+1+...+7) = 332 visits of 2 calls. The search would find
	// 160 (10 visits each).
	if p.Total.Calls != n(664) {
		t.Errorf("calls: got %+v, want 664", p.Total.Calls)
	}
}
