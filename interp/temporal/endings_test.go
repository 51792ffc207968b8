//go:build !race

package temporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/internal/endingstest"
)

// The Temporal counterpart of interp's TestEveryEndingEverywhere: the
// same endings in the same places, each playbook run locally and on
// Temporal. The playbooks are those of the local matrix, with one
// change: their agent is a command driver (a Temporal worker makes the
// driver a profile names, so a test's Go driver cannot serve it) that
// logs each call and prices the trigger's at 150 tokens and $2, every
// other at 1 token and $0.01, as the local matrix's driver does.

// loggingDriver declares agent "a": a command driver that appends each
// call's STEP[ITEM] to log, and answers the trigger's with 150 tokens
// and $2, every other with 1 token and $0.01.
func loggingDriver(log string) string {
	return fmt.Sprintf(`
driver "logged" {
  type    = "command"
  command = ["sh", "-c", "cat >/dev/null; echo \"$APL_STEP[$APL_ITEM_KEY]\" >> %s; if [ \"$APL_STEP\" = trigger ]; then printf '{\"text\": \"ok\", \"usage\": {\"input_tokens\": 150}, \"cost_usd\": 2}'; else printf '{\"text\": \"ok\", \"usage\": {\"input_tokens\": 1}, \"cost_usd\": 0.01}'; fi"]
  output  = "json"
}
agent "a" { driver = driver.logged }
`, log)
}

// TestEveryEndingEverywhereOnTemporal trips every ending in every place
// a step can stand, locally and on Temporal, and checks that both runs
// end as documented, with the same status, recommendation, error kind
// and reason, and that on neither engine anything starts once the end
// was decided: not the trigger's own frame's next step, not the step
// after the place for an ending that stops the run, and no for_each
// item.
func TestEveryEndingEverywhereOnTemporal(t *testing.T) {
	c := server(t)
	startWorker(t, c, "endings", t.TempDir())
	t.Run("cells", func(t *testing.T) {
		for _, p := range endingstest.Places {
			for _, e := range endingstest.Endings {
				t.Run(p.Name+"/"+e.Name, func(t *testing.T) {
					t.Parallel()
					e := e.In(p)
					dir := t.TempDir()
					log := filepath.Join(dir, "calls")
					mark := filepath.Join(dir, "ended")
					parent, child := p.Build(e, e.Frame(mark), loggingDriver(log))
					ref := endingstest.Write(t, dir, parent, child)
					pb, diags := loader().Load(ref)
					if diags.HasErrors() {
						t.Fatal(diags)
					}
					status, recommendation, kind, reason := endingstest.OutcomeOf(e, p)
					want := fmt.Sprintf("%s (%q, %q, %q)", status, recommendation, kind, reason)

					var lrec endingstest.Events
					began := time.Now()
					lctx, lcancel := context.WithCancel(context.Background())
					defer lcancel()
					var lobs interp.Observer = &lrec
					if e.Name == "interrupt" {
						lobs = endingstest.InterruptOn(&lrec, "trigger", lcancel)
					}
					local, err := interp.Start(lctx, pb, ref, interp.Options{Workdir: t.TempDir(), NoSync: true, Observer: lobs})
					if err != nil && !(e.Name == "interrupt" && errors.Is(err, interp.ErrInterrupted)) {
						t.Fatalf("local run: %v", err)
					}
					lcalls := calls(t, log)
					os.Remove(log)
					t.Logf("local run: %s", time.Since(began))
					began = time.Now()

					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
					defer cancel()
					id := "endings-" + strings.NewReplacer(" ", "-", "/", "-").Replace(p.Name+"-"+e.Name)
					if _, err := Start(ctx, c, "endings", pb, ref, interp.Options{RunID: id}); err != nil {
						t.Fatal(err)
					}
					var rrec endingstest.Events
					var robs interp.Observer = &rrec
					if e.Name == "interrupt" {
						// A child workflow's events are not the parent's:
						// a Temporal sub-run is interrupted when the step
						// that runs it starts.
						at := "trigger"
						if strings.HasPrefix(p.Name, "sub-playbook") {
							at = "phase"
						}
						robs = endingstest.InterruptOn(&rrec, at, func() {
							if err := c.CancelWorkflow(ctx, id, ""); err != nil {
								t.Errorf("cancelling %s: %v", id, err)
							}
						})
					}
					remote, _, err := Watch(ctx, c, id, 0, robs)
					if err != nil {
						t.Fatalf("Temporal run: %v", err)
					}
					if remote.Status == interp.StatusWaiting {
						// The workflow waits for an answer that never
						// comes: end it.
						if err := c.TerminateWorkflow(ctx, id, "", "the test is done"); err != nil {
							t.Logf("terminating %s: %v", id, err)
						}
					}
					rcalls := calls(t, log)
					t.Logf("Temporal run: %s", time.Since(began))

					for engine, res := range map[string]*interp.Result{"local": local, "Temporal": remote} {
						if res.Status != status || recommendation != "" && res.Recommendation != recommendation ||
							kind != "" && res.ErrorKind != kind || !strings.Contains(res.Reason, reason) {
							t.Errorf("%s: ended %s (recommendation %q, kind %q, reason %q); want %s",
								engine, res.Status, res.Recommendation, res.ErrorKind, res.Reason, want)
						}
					}
					if local.Status != remote.Status || local.Recommendation != remote.Recommendation ||
						local.ErrorKind != remote.ErrorKind || local.Reason != remote.Reason {
						t.Errorf("local ended %s (%q, %q, %q), Temporal %s (%q, %q, %q)",
							local.Status, local.Recommendation, local.ErrorKind, local.Reason,
							remote.Status, remote.Recommendation, remote.ErrorKind, remote.Reason)
					}
					endingstest.CheckNothingAfter(t, "local", lrec.List(), lcalls, e, p)
					endingstest.CheckNothingAfter(t, "Temporal", rrec.List(), rcalls, e, p)
					if e.Name == "ask" && p.Name != "sub-playbook in a for_each item" {
						noItemWhileAsked(t, rrec.List())
					}
					if _, err := os.Stat(mark); err == nil {
						// Only the Temporal run can have left it: the local
						// one ended, its command stopped, before it began.
						t.Errorf("Temporal: the step's command ran to its end after the run's end was decided")
					}
				})
			}
		}
	})
}

// noItemWhileAsked checks that no item started once the trigger began to
// ask a person: on Temporal the workflow waits for the answer, and holds
// the for_each around the question meanwhile (a local run without a
// person pauses instead, and the items under way may end first). A
// sub-run's question holds its parent once the parent has its signal,
// which the events, the parent's and the child's, do not place.
func noItemWhileAsked(t *testing.T, evs []interp.Event) {
	t.Helper()
	asked := false
	for _, ev := range evs {
		if ev.Type == interp.EventStepStarted && strings.HasSuffix(ev.Step, "trigger") {
			asked = true
		}
		if asked && ev.Type == interp.EventItemStarted {
			t.Errorf("Temporal: item %s[%s] started while a person was asked", ev.Step, ev.Item)
		}
	}
}

// calls are the agent calls logged, as STEP[ITEM].
func calls(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}
