package interp

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins"
)

// fakeHost runs the walk on a virtual clock: sleeping advances it at
// once, and time limits never fire on their own. Coroutines and
// persistence are the local host's.
type fakeHost struct {
	*localHost
	mu    sync.Mutex
	t     time.Time
	slept []time.Duration
}

func (h *fakeHost) now() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.t
}

func (h *fakeHost) advance(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.t = h.t.Add(d)
}

func (h *fakeHost) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.mu.Lock()
	h.slept = append(h.slept, d)
	h.mu.Unlock()
	h.advance(d)
	return nil
}

func (h *fakeHost) withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// clockShell is a shell whose commands each take a minute of the fake
// host's time; "flaky" fails twice, "do" fails once for item b.
type clockShell struct {
	host  *fakeHost
	mu    sync.Mutex
	calls map[string]int
}

func (s *clockShell) Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	s.host.advance(time.Minute)
	name := spec.Command[0] + envOf(spec, "APL_ITEM_KEY")
	s.mu.Lock()
	s.calls[name]++
	n := s.calls[name]
	s.mu.Unlock()
	code := 0
	if name == "flaky" && n <= 2 || name == "dob" && n == 1 {
		code = 1
	}
	return builtins.ShellResult{ExitCode: code}, nil
}

// The walk is a function of step results and the host: on a fake host,
// a whole run with retries, a time limit, a gate loop and a for_each
// takes no real time, and every time it records is the host's.
func TestWalkOnFakeHost(t *testing.T) {
	pb := load(t, `
playbook "fake" {}
limits { timeout = "10h" }
step "flaky" {
  timeout = "30m"
  retry {
    max     = 2
    backoff = "1h"
  }
  shell { command = ["flaky"] }
}
step "work" {
  for_each    = "['a', 'b', 'c']"
  key         = "item"
  concurrency = 2
  step "do" {
    retry {
      max     = 1
      backoff = "2h"
    }
    shell { command = ["do"] }
  }
}
step "review" {
  shell { command = ["review"] }
  gate {
    rule "again" {
      when = "steps.review.attempts < 2"
      goto = "review"
      max  = 3
      on_exhausted { fail = "halt" }
    }
    otherwise {}
  }
}
`)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var fh *fakeHost
	sh := &clockShell{calls: map[string]int{}}
	opts := Options{Workdir: t.TempDir(), NoSync: true, Shell: sh,
		host: func(h *localHost) host {
			fh = &fakeHost{localHost: h, t: t0}
			sh.host = fh
			return fh
		}}
	res, rec := startWith(t, pb, opts)
	if res.Status != StatusCompleted {
		t.Fatalf("status %s: %s", res.Status, res.Reason)
	}
	slices.Sort(fh.slept)
	if want := []time.Duration{time.Hour, 2 * time.Hour, 2 * time.Hour}; !slices.Equal(fh.slept, want) {
		t.Errorf("slept %v, want %v (two retries of flaky, one of item b)", fh.slept, want)
	}
	st, _, err := ReadRun(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	// 3 × flaky, 4 × do, 2 × review, a minute each, and 5 h of backoff.
	if want := (5*time.Hour + 9*time.Minute).Seconds(); st.Metrics.DurationS != want {
		t.Errorf("duration %v s, want %v s", st.Metrics.DurationS, want)
	}
	if got := st.Steps["review"].Attempts; got != 2 {
		t.Errorf("review ran %d times, want 2", got)
	}
	for _, e := range rec.events {
		if e.Time.Before(t0) || e.Time.After(t0.Add(6*time.Hour)) {
			t.Fatalf("event %s at %v: not the host's time", e.Type, e.Time)
		}
	}
	if st.Meta.StartedAt != t0 {
		t.Errorf("started at %v, want %v", st.Meta.StartedAt, t0)
	}
}

// partEngine is an Engine that supplies the parts its fields hold; any
// other call panics (the embedded Engine is nil).
type partEngine struct {
	Engine
	shell   ShellRunner
	funcs   builtins.Registry
	drivers DriverFactory
}

func (e partEngine) Shell() ShellRunner       { return e.shell }
func (e partEngine) Funcs() builtins.Registry { return e.funcs }
func (e partEngine) Drivers() DriverFactory   { return e.drivers }

// TestEngineMustSupplyEveryPart: a run on an engine that leaves one of
// the actions' ways to the world unsupplied, or whose Options set one
// beside the engine, does not start: a local default in its place would
// run commands, builtins or agents inside the workflow.
func TestEngineMustSupplyEveryPart(t *testing.T) {
	pb := load(t, `
playbook "p" {}
step "a" {
  shell { command = ["true"] }
}
`)
	full := partEngine{shell: &builtins.Shell{}, funcs: builtins.Registry{}, drivers: defaultDrivers(nil)}
	noShell, noFuncs, noDrivers := full, full, full
	noShell.shell, noFuncs.funcs, noDrivers.drivers = nil, nil, nil
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"no shell", Options{Engine: noShell}, "supplies no Shell"},
		{"no funcs", Options{Engine: noFuncs}, "supplies no Funcs"},
		{"no drivers", Options{Engine: noDrivers}, "supplies no Drivers"},
		{"shell beside it", Options{Engine: full, Shell: &builtins.Shell{}}, "beside an Engine"},
		{"funcs beside it", Options{Engine: full, Funcs: builtins.Funcs()}, "beside an Engine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Workdir, tc.opts.RunsDir = t.TempDir(), t.TempDir()
			_, err := Start(context.Background(), pb, "p", tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// after's timers are armed again once stopped before they fired: a
// stopped one never calls its old function, a re-armed one calls only
// its new one, and one that fired is not handed out again.
func TestAfterTimersArmedAgain(t *testing.T) {
	h := newLocalHost(Options{})
	var mu sync.Mutex
	calls := map[string]int{}
	call := func(name string) func() {
		return func() {
			mu.Lock()
			calls[name]++
			mu.Unlock()
		}
	}
	h.walk(func() {
		stop := h.after(time.Hour, call("stopped"))
		stop()
		if len(h.idle) != 1 {
			t.Fatalf("%d idle timers after a stop, want 1", len(h.idle))
		}
		stop = h.after(5*time.Millisecond, call("again"))
		if len(h.idle) != 0 {
			t.Fatal("the stopped timer was not armed again")
		}
		h.block(func() {
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				mu.Lock()
				n := calls["again"]
				mu.Unlock()
				if n > 0 {
					return
				}
			}
		})
		stop() // after it fired: not reused
		if len(h.idle) != 0 {
			t.Fatal("a timer that fired was kept to be armed again")
		}
	})
	mu.Lock()
	defer mu.Unlock()
	if calls["stopped"] != 0 || calls["again"] != 1 {
		t.Errorf("calls %v, want again once and stopped never", calls)
	}
}
