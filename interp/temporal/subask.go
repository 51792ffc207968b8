package temporal

import (
	"context"
	"fmt"
	"math"
	"strings"

	"go.temporal.io/sdk/client"
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
