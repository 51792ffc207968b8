//go:build !race

package temporal

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apl-lang/apl/interp"
)

// eventLines are a run's events as a person follows them: kind, step,
// item and message, without times, durations and costs.
type eventLines []string

func (l *eventLines) Event(e interp.Event) {
	*l = append(*l, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", e.Type, e.Step, e.Item, e.Message)))
}

// The run's event log says how each answer came: at the terminal of the
// client that follows the run (the answer's signal says so), or given
// with apl resume --answer, as a local run's log says it.
func TestAskSignalSaysHowTheAnswerCame(t *testing.T) {
	ctx, c, _, id := startAsking(t, "testdata/ask.hcl", "ask-how", "ask-how")
	var events eventLines
	from := 0
	for _, a := range []struct{ key, choice, how string }{
		{"approve", "yes", interp.AnsweredAtTerminal},
		{"notes", "all good", ""},
	} {
		res, _, err := Watch(ctx, c, id, from, &events)
		if err != nil || res.Status != interp.StatusWaiting || res.Waiting.Step != a.key {
			t.Fatalf("before answering %s: %v %+v", a.key, err, res)
		}
		if from, err = SendAnswerAs(ctx, c, id, a.key, a.choice, a.how); err != nil {
			t.Fatal(err)
		}
	}
	if res, _, err := Watch(ctx, c, id, from, &events); err != nil || res.Status != interp.StatusCompleted {
		t.Fatalf("run ended %v %+v", err, res)
	}
	var decisions []string
	for _, e := range events {
		if strings.HasPrefix(e, interp.EventHumanDecision) {
			decisions = append(decisions, e)
		}
	}
	want := []string{
		interp.EventHumanDecision + " approve  Ship v1.2?: yes (answered at the terminal)",
		interp.EventHumanDecision + " notes  Release notes?: all good (answer given to resume)",
	}
	if !slices.Equal(decisions, want) {
		t.Errorf("decisions:\n%s\nwant\n%s", strings.Join(decisions, "\n"), strings.Join(want, "\n"))
	}
}

// An ask step on Temporal: the run waits for the signal, a client sees
// the question and its options, a choice that is not one of them is
// refused with a clear error, the answer goes on with the run, and the
// run ends as a local run answered the same way, having sent the same
// events.
func TestAskSignal(t *testing.T) {
	ref := "testdata/ask.hcl"
	ctx, c, pb, id := startAsking(t, ref, "ask", "ask-signal")
	var remote eventLines
	res, _, err := Watch(ctx, c, id, 0, &remote)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interp.StatusWaiting || res.Waiting == nil {
		t.Fatalf("run %s is %s, want waiting", id, res.Status)
	}
	w := *res.Waiting
	if w.Step != "approve" || w.Question != "Ship v1.2?" || !slices.Equal(w.Options, []string{"yes", "no"}) {
		t.Fatalf("waiting on %+v", w)
	}
	if want := "waiting for a decision at step approve: Ship v1.2? (options: yes, no)"; res.Reason != want {
		t.Errorf("reason %q, want %q", res.Reason, want)
	}
	// The workflow waits: it has not ended, and waits on one question.
	qs, err := Waiting(ctx, c, id)
	if err != nil || len(qs) != 1 || qs[0].Step != "approve" {
		t.Fatalf("Waiting: %+v, %v", qs, err)
	}

	// A choice that is not an option, or a step that does not wait, is
	// refused before it reaches the run.
	_, err = SendAnswer(ctx, c, id, "approve", "maybe")
	var we *interp.WaitingError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), `step approve takes one of: yes, no, not "maybe"; run ask-signal is still waiting`) {
		t.Errorf("answer maybe: %v", err)
	}
	_, err = SendAnswer(ctx, c, id, "aprove", "yes")
	var na *NotAskedError
	if !errors.As(err, &na) || !strings.Contains(err.Error(), "waits for no decision at step aprove (did you mean approve?); it is waiting for a decision at step approve: Ship v1.2?") {
		t.Errorf("answer to aprove: %v", err)
	}

	from, err := SendAnswer(ctx, c, id, "approve", "yes")
	if err != nil {
		t.Fatal(err)
	}
	res, _, err = Watch(ctx, c, id, from, &remote)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interp.StatusWaiting || res.Waiting.Step != "notes" || !res.Waiting.Text {
		t.Fatalf("after approve: %s %+v", res.Status, res.Waiting)
	}
	if from, err = SendAnswer(ctx, c, id, "notes", "all good"); err != nil {
		t.Fatal(err)
	}
	res, path, err := Watch(ctx, c, id, from, &remote)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"approved":"yes","shipped":"shipped v1.2: all good"}`
	if res.Status != interp.StatusCompleted || string(res.OutputJSON) != want {
		t.Errorf("run ended %s with %s, want completed with %s", res.Status, res.OutputJSON, want)
	}
	var ended *EndedError
	if _, err := SendAnswer(ctx, c, id, "notes", "again"); !errors.As(err, &ended) {
		t.Errorf("answer to an ended run: %v", err)
	}

	// A local run given the same answers ends the same, on the same path,
	// and a person following either sees the same events.
	var local eventLines
	var localPath []string
	answers := map[string]string{"approve": "yes", "notes": "all good"}
	lr, err := interp.Start(ctx, pb, ref, interp.Options{Workdir: t.TempDir(), NoSync: true, RunID: "ask-signal", Answers: answers,
		Observer: interp.ObserverFunc(func(e interp.Event) { local.Event(e); localPath = append(localPath, interp.PathEntry(e)...) })})
	if err != nil || string(lr.OutputJSON) != want || !slices.Equal(localPath, path) {
		t.Errorf("local run: %v %s %q; Temporal: %q", err, lr.OutputJSON, localPath, path)
	}
	// A run on Temporal says first whose checkout it works in.
	if len(remote) > 0 && strings.Contains(remote[0], "works in the checkout of worker") {
		remote = remote[1:]
	}
	if !slices.Equal(local, remote) {
		t.Errorf("events:\nlocal    %q\nTemporal %q", local, remote)
	}

	// Answers given when the run starts are used, as locally.
	ran := runTemporal(t, c, "ask", pb, ref, interp.Options{Answers: answers})
	if ran.output != want {
		t.Errorf("run with answers: %s", ran.output)
	}
	direct, _, err := Run(ctx, c, "ask", pb, ref, interp.Options{Answers: answers})
	if err != nil || direct.Status != interp.StatusCompleted || string(direct.OutputJSON) != want {
		t.Errorf("run given its answers at the start: %v %+v", err, direct)
	}
}

// An ask step of a sub-playbook waits in the sub-run's workflow; the
// client sees it as the run's, STEP/SUBSTEP as a local sub-run reports
// it, and the answer reaches the sub-run. The run ends as a local run
// given the same answers.
func TestSubRunAskSignal(t *testing.T) {
	ctx, c, pb, id := startSubask(t, "subask", "subask-signal")
	ref := "testdata/subask"
	res, _, err := Watch(ctx, c, id, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != interp.StatusWaiting || res.Waiting == nil || res.Waiting.Step != "release/approve" {
		t.Fatalf("run %s: %s, waiting %+v; want waiting at release/approve", id, res.Status, res.Waiting)
	}
	var bad *interp.WaitingError
	if _, err := SendAnswer(ctx, c, id, "release/approve", "maybe"); !errors.As(err, &bad) {
		t.Errorf("a choice not among the options: %v", err)
	}
	answers := map[string]string{"release/approve": "yes", "release/notes": "fixes the login bug"}
	for _, key := range []string{"release/approve", "release/notes"} {
		from, err := SendAnswer(ctx, c, id, key, answers[key])
		if err != nil {
			t.Fatalf("answering %s: %v", key, err)
		}
		if res, _, err = Watch(ctx, c, id, from, nil); err != nil {
			t.Fatal(err)
		}
	}
	if res.Status != interp.StatusCompleted {
		t.Fatalf("run %s: %s (%s)", id, res.Status, res.Reason)
	}
	local := runLocal(t, pb, ref, interp.Options{Answers: answers})
	if string(res.OutputJSON) != local.output || local.status != res.Status {
		t.Errorf("Temporal %s %s, local %s %s", res.Status, res.OutputJSON, local.status, local.output)
	}
}
