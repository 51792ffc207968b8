package temporal

import (
	"context"
	"fmt"
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
	// workflow is the workflow that asks it; key, the question's key
	// there (SUBSTEP[ITEM]); prefix, what the run's client puts before
	// key (STEP/).
	workflow, prefix string
}

// subQuestions lists the questions the pending sub-runs of run id wait
// on, at any depth, under the names of the steps that run them.
func subQuestions(ctx context.Context, c client.Client, id, prefix string) ([]asked, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return nil, err
	}
	var out []asked
	for _, ch := range d.GetPendingChildren() {
		child := ch.GetWorkflowId()
		// The child's ID is the parent's and the sub-run's id:
		// STEP-ATTEMPT or STEP-ITEMKEY-ATTEMPT; a step name has no dash.
		step, _, ok := strings.Cut(strings.TrimPrefix(child, id+"/"), "-")
		if !ok || step == "" {
			continue
		}
		p := prefix + step + "/"
		var qs []Question
		v, err := c.QueryWorkflow(ctx, child, "", QueryWaiting)
		if err == nil {
			err = v.Get(&qs)
		}
		if err != nil {
			return nil, fmt.Errorf("sub-run %s: %w", child, err)
		}
		for _, q := range qs {
			q.Step = p + q.Step
			out = append(out, asked{Question: q, workflow: child, prefix: p})
		}
		deeper, err := subQuestions(ctx, c, child, p)
		if err != nil {
			return nil, err
		}
		out = append(out, deeper...)
	}
	return out, nil
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
