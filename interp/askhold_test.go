package interp

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/apl-lang/apl/interp/internal/heldtest"
)

// personAsker is a person at a terminal: Ask tells asked, then waits
// until the test answers.
type personAsker struct {
	asked  chan struct{}
	once   sync.Once
	answer chan string
}

func (p *personAsker) Ask(ctx context.Context, q Question) (string, error) {
	p.once.Do(func() { close(p.asked) })
	select {
	case a := <-p.answer:
		return a, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (p *personAsker) WaitsForPerson() bool { return true }

// TestForEachHeldWhileAPersonIsAsked: items a, b and c at concurrency 2;
// b asks a person (directly, in a sub-playbook run here, or in a nested
// for_each) and a ends while the question is open. c must not start
// until the person answered: it started as soon as a ended, as the
// scheduler held items back only for an item that came back waiting,
// and an Asker that waits for a person never comes back so.
func TestForEachHeldWhileAPersonIsAsked(t *testing.T) {
	for _, tc := range heldtest.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			pb := loadParentChild(t, `
playbook "held" {}
step "work" {
  for_each    = "['a', 'b', 'c']"
  key         = "item"
  concurrency = 2`+tc.Body+`
  step "build" {
    shell {
      command = ["build", item]
    }
  }
}
`, tc.Child)
			p := &personAsker{asked: make(chan struct{}), answer: make(chan string)}
			sh := &waitShell{key: "a", asked: p.asked}
			var rec recorder
			obs := ObserverFunc(func(e Event) {
				rec.Event(e)
				if e.Type == EventItemCompleted && e.Step == "work" && e.Item == "a" {
					// The person answers once a has ended.
					go func() { p.answer <- "yes" }()
				}
			})
			res, err := Start(context.Background(), pb, "held", Options{Workdir: t.TempDir(), Shell: sh, NoSync: true,
				Asker: p, Observer: obs})
			if err != nil || res.Status != StatusCompleted {
				t.Fatalf("%v %+v", err, res)
			}
			rec.mu.Lock()
			evs := rec.events
			rec.mu.Unlock()
			decided := slices.IndexFunc(evs, func(e Event) bool { return e.Type == EventHumanDecision })
			cStarted := slices.IndexFunc(evs, func(e Event) bool {
				return e.Type == EventItemStarted && e.Step == "work" && e.Item == "c"
			})
			if decided < 0 || cStarted < decided {
				for _, e := range evs {
					t.Logf("%s %s[%s] %s", e.Type, e.Step, e.Item, e.Message)
				}
				t.Errorf("item c started (event %d) before the person answered (event %d)", cStarted, decided)
			}
			if !slices.Contains(sh.ran, "c") {
				t.Errorf("c never ran after the answer: %v", sh.ran)
			}
		})
	}
}
