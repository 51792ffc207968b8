//go:build !race

package temporal

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/internal/endingstest"
	"github.com/apl-lang/apl/interp/internal/heldtest"
	"go.temporal.io/sdk/client"
)

// TestForEachHeldWhileAPersonIsAskedOnTemporal: items a, b and c at
// concurrency 2; b asks a person, directly or in a sub-playbook (a child
// workflow, in its main walk or one of its own for_each's items), and a
// ends only once the question can be seen. c must not
// start until the answer is sent; then it does. It started as soon as a
// ended: the scheduler held items back only for an item that came back
// waiting, and the workflow's asker waits for the answer instead.
func TestForEachHeldWhileAPersonIsAskedOnTemporal(t *testing.T) {
	c := server(t)
	startWorker(t, c, "askhold", t.TempDir())
	for _, tc := range heldtest.Cases {
		t.Run(tc.Name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mark := filepath.Join(dir, "asked")
			ref := endingstest.Write(t, dir, `
playbook "held" {}
step "work" {
  for_each    = "['a', 'b', 'c']"
  key         = "item"
  concurrency = 2
  step "wait" {
    when = "item == 'a'"
    shell { command = ["sh", "-c", "while [ ! -e `+mark+` ]; do sleep 0.05; done"] }
  }`+tc.Body+`
  step "build" {
    shell { command = ["true"] }
  }
}
`, tc.Child)
			pb, diags := loader().Load(ref)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			id, err := Start(ctx, c, "askhold", pb, ref, interp.Options{RunID: "askhold-" + strings.ReplaceAll(tc.Name, " ", "-")})
			if err != nil {
				t.Fatal(err)
			}
			res, _, err := Watch(ctx, c, id, 0, nil)
			if err != nil || res.Status != interp.StatusWaiting {
				t.Fatalf("run %s: %v %+v; want waiting", id, err, res)
			}
			// The question can be seen: a ends now.
			if err := os.WriteFile(mark, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			// The scheduler takes a's end and decides what starts in the
			// same turn: c's start would be among the events that tell a
			// ended.
			var evs []interp.Event
			for !slices.ContainsFunc(evs, isItem(interp.EventItemCompleted, "a")) {
				if ctx.Err() != nil {
					t.Fatalf("item a did not end: %v", ctx.Err())
				}
				time.Sleep(100 * time.Millisecond)
				evs = allEvents(ctx, t, c, id)
			}
			if slices.ContainsFunc(evs, isItem(interp.EventItemStarted, "c")) {
				t.Errorf("item c started while b's question waited for its answer")
			}
			from, err := SendAnswer(ctx, c, id, res.Waiting.Key(), "yes")
			if err != nil {
				t.Fatal(err)
			}
			if res, _, err = Watch(ctx, c, id, from, nil); err != nil || res.Status != interp.StatusCompleted {
				t.Fatalf("after the answer: %v %+v", err, res)
			}
			if evs := allEvents(ctx, t, c, id); !slices.ContainsFunc(evs, isItem(interp.EventItemCompleted, "c")) {
				t.Errorf("item c did not run after the answer")
			}
		})
	}
}

// isItem matches the event of kind for item key of step work.
func isItem(kind, key string) func(interp.Event) bool {
	return func(e interp.Event) bool { return e.Type == kind && e.Step == "work" && e.Item == key }
}

// allEvents are run id's own events so far.
func allEvents(ctx context.Context, t *testing.T, c client.Client, id string) []interp.Event {
	t.Helper()
	var out []interp.Event
	for from := 0; ; {
		p, err := queryEvents(ctx, c, id, from)
		if err != nil {
			t.Fatalf("events of %s: %v", id, err)
		}
		out = append(out, p.Events...)
		if len(p.Events) < eventsPage {
			return out
		}
		from = p.Next
	}
}
