package temporal

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/workflow"
)

// The workflow's queries and signal: how a client follows a run and
// answers its questions.
const (
	// QueryWaiting returns the questions the run waits on, in the order
	// they were asked ([]Question; none when it waits on nobody).
	QueryWaiting = "apl.waiting"
	// QueryEvents returns the run's events from an index on (Events).
	QueryEvents = "apl.events"
	// SignalAnswer answers a question the run waits on (Answer).
	SignalAnswer = "apl.answer"
)

// Answer is SignalAnswer's payload: the decision for the question at
// Key, STEP or STEP[ITEM] inside a for_each (STEP answers every item of
// the step that waits now), as apl resume --answer gives it.
type Answer struct {
	Key    string
	Choice string
	// How is how the answer was given, for the run's event log
	// (interp.AnsweredAtTerminal); empty, as an older client sends it:
	// interp.AnswerGivenToResume.
	How string `json:",omitempty"`
}

// Question is a question a run waits on (QueryWaiting).
type Question struct {
	interp.Waiting
	// N numbers the run's questions in the order they were asked: a step
	// asked again (a loop) asks a question of its own.
	N int
}

// question is an ask step's question while the walk waits on it.
type question struct {
	Question
	answer *string
	how    string
}

// answers reports whether an answer given as key answers w: it names w
// (STEP[ITEM]), or its step.
func answers(key string, w interp.Waiting) bool {
	return key == w.Key() || key == w.Step
}

// signalAsker is the walk's interp.Asker on Temporal: an ask step's
// question is published (QueryWaiting) and the step waits, as long as it
// takes, for the SignalAnswer that answers it. The workflow stays alive
// meanwhile; a client that stops following it loses nothing. Answers
// given when the run started (interp.Options.Answers) are used before
// the asker is asked.
type signalAsker struct {
	e       *engine
	asked   int
	pending []*question
	// memo, when set, keeps the run's status in its workflow's memo:
	// waiting while a question waits, for lists (list.go).
	memo bool
	// how is how each answer Ask returned came, by its question, until
	// How tells it.
	how map[string]string
}

// setStatus puts status in the workflow's memo ("" while the run goes on).
func (a *signalAsker) setStatus(c workflow.Context, status string) {
	if a.memo {
		workflow.UpsertMemo(c, map[string]any{memoStatus: status})
	}
}

// newSignalAsker starts the coroutine that receives answers.
func newSignalAsker(ctx workflow.Context, e *engine) *signalAsker {
	a := &signalAsker{e: e}
	ch := workflow.GetSignalChannel(ctx, SignalAnswer)
	workflow.Go(ctx, func(c workflow.Context) {
		for {
			var ans Answer
			ch.Receive(c, &ans)
			a.take(c, ans)
		}
	})
	return a
}

// waiting is QueryWaiting's handler.
func (a *signalAsker) waiting() ([]Question, error) {
	out := []Question{}
	for _, q := range a.pending {
		if q.answer == nil {
			out = append(out, q.Question)
		}
	}
	return out, nil
}

// take gives an answer to the questions waiting now that it answers. An
// answer that is not one of a question's options (the client checks, so
// this is a client that did not) or that answers no question is left
// out, with a warning in the worker's log.
func (a *signalAsker) take(c workflow.Context, ans Answer) {
	used := false
	for _, q := range a.pending {
		if q.answer != nil || !answers(ans.Key, q.Waiting) {
			continue
		}
		if !q.Text && !slices.Contains(q.Options, ans.Choice) {
			workflow.GetLogger(c).Warn(fmt.Sprintf("answer %q to %s is not one of the options: %s; still waiting", ans.Choice, q.Waiting.Key(), strings.Join(q.Options, ", ")))
			continue
		}
		choice := ans.Choice
		q.answer, q.how, used = &choice, ans.How, true
	}
	if !used {
		workflow.GetLogger(c).Warn(fmt.Sprintf("answer to %s: the run waits on no such question", ans.Key))
	}
}

// questionKey names q as apl resume --answer does: STEP or STEP[ITEM].
// One question of a step and item waits at a time.
func questionKey(q interp.Question) string {
	return interp.Waiting{Step: q.Step, Item: q.Item}.Key()
}

// WaitsForPerson implements interp.PersonAsker: a question waits until
// an answer is sent to the run, and holds the for_each steps around it
// meanwhile, in this run and the runs above (AskAbove). A workflow that
// began before the hold existed replays without it.
func (a *signalAsker) WaitsForPerson() bool {
	c, back := a.e.hold()
	defer back()
	return workflow.GetVersion(c, askHoldVersion, workflow.DefaultVersion, 1) == 1
}

// How implements interp.AskerHow: as the answer's signal says (at the
// terminal of the client that follows the run), or with apl resume
// --answer (or apl ui), as for a local run.
func (a *signalAsker) How(q interp.Question) string {
	k := questionKey(q)
	how := a.how[k]
	delete(a.how, k)
	if how == "" {
		return interp.AnswerGivenToResume
	}
	return how
}

// Ask implements interp.Asker: it waits, on the workflow's clock, for the
// answer, or until ctx's deadline (the step's timeout).
func (a *signalAsker) Ask(ctx context.Context, q interp.Question) (string, error) {
	c, back := a.e.hold()
	defer back()
	a.asked++
	pq := &question{Question: Question{N: a.asked, Waiting: q.Waiting()}}
	a.pending = append(a.pending, pq)
	if len(a.pending) == 1 {
		a.setStatus(c, interp.StatusWaiting)
	}
	defer func() {
		a.pending = slices.DeleteFunc(a.pending, func(p *question) bool { return p == pq })
		if len(a.pending) == 0 {
			a.setStatus(c, "")
		}
	}()
	// A cancelled run stops waiting (cancel.go).
	answered := func() bool { return pq.answer != nil || ctx.Err() != nil }
	if d, ok := ctx.Deadline(); ok {
		left := d.Sub(workflow.Now(c))
		if left <= 0 {
			return "", context.DeadlineExceeded
		}
		ok, err := a.e.awaitWithTimeout(c, left, answered)
		if err != nil {
			return "", err
		}
		if !ok {
			if err := ctx.Err(); err != nil {
				return "", err
			}
			return "", context.DeadlineExceeded
		}
	} else if err := a.e.await(c, answered); err != nil {
		return "", err
	}
	if pq.answer == nil {
		return "", ctx.Err()
	}
	if pq.how != "" {
		if a.how == nil {
			a.how = map[string]string{}
		}
		a.how[questionKey(q)] = pq.how
	}
	return *pq.answer, nil
}
