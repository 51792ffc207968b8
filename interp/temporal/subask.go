package temporal

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// A sub-playbook step runs as a child workflow, and an ask step of the
// sub-run waits in the child: its question is the child's (QueryWaiting
// there). A client sees it as the run's, under the step's name
// (STEP/SUBSTEP, as a local sub-run's waiting is reported), and an answer
// to STEP/SUBSTEP goes to the child as SUBSTEP.

// asked is a question a run waits on, in the run itself or in one of its
// sub-runs, at any depth.
type asked struct {
	// Question is the question as the run's client sees it: its step is
	// STEP/SUBSTEP for a sub-run's.
	Question
	// workflow is the workflow that asks it; prefix, what the run's
	// client puts before the question's key there (STEP/).
	workflow, prefix string
}

// subQuestions lists the questions that the sub-runs children (the
// workflows the run names in Events.Children) wait on, at any depth,
// under the names of the steps that run them. A sub-run that ended
// meanwhile has none.
func subQuestions(ctx context.Context, c client.Client, id, prefix string, children []string) []asked {
	var out []asked
	for _, child := range children {
		// The child's ID is the parent's and the sub-run's id:
		// STEP-ATTEMPT or STEP-ITEMKEY-ATTEMPT; a step name has no dash.
		step, _, ok := strings.Cut(strings.TrimPrefix(child, id+"/"), "-")
		if !ok || step == "" {
			continue
		}
		p, err := queryEvents(ctx, c, child, math.MaxInt)
		if err != nil {
			continue
		}
		pre := prefix + step + "/"
		for _, q := range p.Waiting {
			q.Step = pre + q.Step
			out = append(out, asked{Question: q, workflow: child, prefix: pre})
		}
		out = append(out, subQuestions(ctx, c, child, pre, p.Children)...)
	}
	return out
}

// ownQuestions are run id's own questions as asked ones.
func ownQuestions(id string, qs []Question) []asked {
	out := make([]asked, len(qs))
	for i, q := range qs {
		out[i] = asked{Question: q, workflow: id}
	}
	return out
}

// questionsOf are the questions of as.
func questionsOf(as []asked) []Question {
	out := make([]Question, len(as))
	for i, a := range as {
		out[i] = a.Question
	}
	return out
}

// Questions are the questions run id waits on: its own (as Waiting
// lists them), then its sub-runs', at any depth, under the names of the
// steps that run them (STEP/SUBSTEP). SendAnswer answers any of them.
func Questions(ctx context.Context, c client.Client, id string) ([]Question, error) {
	all, _, err := allAsked(ctx, c, id)
	return questionsOf(all), err
}

// allAsked are the questions run id and its sub-runs wait on, and the
// index of the run's next event.
func allAsked(ctx context.Context, c client.Client, id string) ([]asked, int, error) {
	if err := running(ctx, c, id); err != nil {
		return nil, 0, err
	}
	p, err := queryEvents(ctx, c, id, math.MaxInt)
	if err != nil {
		return nil, 0, fmt.Errorf("run %s on Temporal: %w", id, err)
	}
	return append(ownQuestions(id, p.Waiting), subQuestions(ctx, c, id, "", p.Children)...), p.Next, nil
}

// While a sub-run's question waits for a person, no new item starts in
// the parent's for_each steps around the step that runs it, as for a
// local sub-run. The sub-run signals its parent (SignalAskHold, named
// after the sub-run) when the question opens, and waits until the parent
// has the signal before it publishes the question; it signals again when
// the question closes. The parent's step that waits for the sub-run takes
// those signals (getChild) and holds its for_each steps (interp's
// SubRun.Hold), which relays the hold further up if the parent is a
// sub-run itself.
const (
	// SignalAskHold, followed by the sub-run's id, tells a run that a
	// question of that sub-run opened (true) or closed (false).
	SignalAskHold = "apl.ask-hold:"
	// askHoldVersion marks the workflows whose questions hold their
	// for_each steps and signal their parent: a workflow started before
	// replays without.
	askHoldVersion = "apl.ask-hold"
)

var _ interp.AskRelay = (*runEngine)(nil)

// AskAbove implements interp.AskRelay: it signals the parent's
// workflow, if the run is a sub-run, and waits until the signal is in the
// parent's history. A parent that ended takes none.
func (e *runEngine) AskAbove(open bool) {
	e.signalParent(askHoldVersion, SignalAskHold+e.in.RunID, open)
}

// getChild waits for sub's child workflow f to end and takes its output,
// holding meanwhile the for_each steps around the step while a question
// of the sub-run is open (subAsks), and serving the sub-run's
// reservations (k; nil: it makes none).
func (e *runEngine) getChild(c workflow.Context, k *kid, f workflow.Future, sub interp.SubRun, out *RunOutput) error {
	asks := watchAsks(c, sub)
	for {
		if e.await(c, func() bool { return f.IsReady() || asks.signalled() || e.signalled(k) }) != nil {
			// The workflow is cancelled (a workflow without the hub):
			// the child ends with it, and f.Get waits for that, as
			// e.get does.
			break
		}
		// A signal the sub-run sent before it ended is in the channel
		// once its end is seen: its calls' spends are counted first.
		ended := f.IsReady()
		asks.take()
		e.serveKid(c, k)
		if ended {
			break
		}
	}
	e.letGo(k)
	err := f.Get(c, out)
	asks.end(err != nil || out.Status != interp.StatusWaiting)
	return err
}

// subAsks are a sub-run's questions that wait for a person, as its
// SignalAskHold signals tell them: each holds the for_each steps around
// the step that runs the sub-run (interp's SubRun.Hold) until it closes.
type subAsks struct {
	ch   workflow.ReceiveChannel
	hold func() (letGo func())
	open []func()
}

// watchAsks takes sub's SignalAskHold signals.
func watchAsks(c workflow.Context, sub interp.SubRun) *subAsks {
	return &subAsks{ch: workflow.GetSignalChannel(c, SignalAskHold+sub.ID), hold: sub.Hold}
}

// signalled: a signal waits to be taken.
func (a *subAsks) signalled() bool { return a.ch.Len() > 0 }

// take applies the signals that came: a question that opened holds the
// for_each steps, one that closed lets them go.
func (a *subAsks) take() {
	var opened bool
	for a.ch.ReceiveAsync(&opened) {
		switch n := len(a.open); {
		case opened && a.hold != nil:
			a.open = append(a.open, a.hold())
		case !opened && n > 0:
			letGo := a.open[n-1]
			a.open = a.open[:n-1]
			letGo()
		}
	}
}

// end lets go the questions still open once the sub-run ended, if
// letGo: one that ended waiting makes its step come back waiting, and the
// for_each steps stay held.
func (a *subAsks) end(letGo bool) {
	if !letGo {
		return
	}
	for _, lg := range a.open {
		lg()
	}
	a.open = nil
}
