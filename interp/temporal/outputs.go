package temporal

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"
)

// QueryOutputs asks a run for its main steps' outputs, by step (apl show).
const QueryOutputs = "apl.outputs"

// outputMax is the size of a step's output from which QueryOutputs
// leaves it out: apl logs prints it.
const outputMax = 64 << 10

// runState is the run's state as the walk last handed it
// (interp.StateKeeper), for QueryOutputs.
type runState struct{ st *interp.State }

// setOutputsQuery answers QueryOutputs from the run's state: each main
// step's output as its record holds it, those over outputMax and those
// kept in a file of the run directory left out.
func setOutputsQuery(ctx workflow.Context, s *runState) error {
	return workflow.SetQueryHandler(ctx, QueryOutputs, func() (map[string]json.RawMessage, error) {
		out := map[string]json.RawMessage{}
		if s.st == nil {
			return out, nil
		}
		for name, rec := range s.st.Steps {
			if len(rec.Output) > 0 && len(rec.Output) <= outputMax {
				out[name] = rec.Output
			}
		}
		return out, nil
	})
}

// StepOutputs are run id's main steps' outputs, by step, as the run
// holds them now (a worker answers: one walking the run, or any,
// replaying one that ended); outputs over 64 KB are left out.
func StepOutputs(ctx context.Context, c client.Client, id string) (map[string]json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := c.QueryWorkflow(ctx, id, "", QueryOutputs)
	if err != nil {
		return nil, fmt.Errorf("run %s on Temporal: %w", id, err)
	}
	var out map[string]json.RawMessage
	return out, v.Get(&out)
}
