//go:build !race

package temporal

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"go.temporal.io/sdk/client"
)

// A client that answers a sub-run's questions as they come (apl run at a
// terminal) follows the run with one Follower: after each answer it goes
// on from where it stopped, so it shows each of the sub-run's events
// once, those of a sub-run that ended while the question was on the
// screen included.
func TestFollowerShowsSubRunEventsOnce(t *testing.T) {
	ctx, c, _, id := startSubask(t, "follow", "follow-subask")
	var seen eventLines
	f := NewFollower(c, id, 0)
	answers := map[string]string{"release/approve": "yes", "release/notes": "fixes the login bug"}
	var (
		res *interp.Result
		err error
	)
	for range 3 {
		if res, _, err = f.Watch(ctx, &seen); err != nil {
			t.Fatal(err)
		}
		if res.Status != interp.StatusWaiting {
			break
		}
		key := res.Waiting.Key()
		if _, err := SendAnswer(ctx, c, id, key, answers[key]); err != nil {
			t.Fatalf("answering %s: %v", key, err)
		}
	}
	if res.Status != interp.StatusCompleted {
		t.Fatalf("run %s: %s (%s)", id, res.Status, res.Reason)
	}
	count := func(prefix string) int {
		return len(slices.DeleteFunc(slices.Clone(seen), func(l string) bool { return l != prefix && !strings.HasPrefix(l, prefix+" ") }))
	}
	for _, want := range []string{
		"run_started release",
		"step_completed release/prepare",
		"human_decision release/approve",
		"step_completed release/approve",
		"human_decision release/notes",
		"step_completed release/notes",
		"step_completed release/ship",
		"step_completed release",
	} {
		if n := count(want); n != 1 {
			t.Errorf("%q seen %d times, want once; the events:\n%s", want, n, strings.Join(seen, "\n"))
		}
	}
}

// startSubask starts testdata/subask (a sub-playbook that asks twice) as
// run id on a worker of queue (startAsking).
func startSubask(t *testing.T, queue, id string) (context.Context, client.Client, *lang.Playbook, string) {
	return startAsking(t, "testdata/subask", queue, id)
}

// startAsking starts the playbook at ref as run id on a worker of queue,
// on a server of its own, and returns a context that ends with the test
// (two minutes at most), the client, the playbook and the run's id.
func startAsking(t *testing.T, ref, queue, id string) (context.Context, client.Client, *lang.Playbook, string) {
	t.Helper()
	c := server(t)
	startWorker(t, c, queue, t.TempDir())
	pb, diags := loader().Load(ref)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	id, err := Start(ctx, c, queue, pb, ref, interp.Options{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	return ctx, c, pb, id
}
