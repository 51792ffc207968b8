package temporal

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/apl-lang/apl/interp"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"
)

// QueryHome returns the worker whose checkout a run works in (Home),
// once it has one.
const QueryHome = "apl.home"

// The memo fields of a run's workflow, for lists: the playbook as the
// command line named it and its name, set when it starts; the worker
// whose checkout it works in, once one took it; and its status and
// reason, once it ended.
const (
	memoPlaybook = "playbook"
	memoName     = "name"
	memoWorker   = "worker"
	memoStatus   = "status"
	memoReason   = "reason"
)

// memoVersion marks the workflows that keep their worker and their
// ending in their memo: a workflow started before replays without.
const memoVersion = "apl.memo"

// Summary is a run on the cluster as apl runs lists it.
type Summary struct {
	RunID    string `json:"run_id"`
	Name     string `json:"playbook,omitempty"`
	Playbook string `json:"playbook_ref"`
	// Status is the run's once it ended (completed, failed, interrupted,
	// a finish status), else its workflow's (running, or terminated,
	// timed_out: ended without a result).
	Status    string    `json:"status"`
	Reason    string    `json:"reason,omitempty"`
	Worker    string    `json:"worker,omitempty"`
	StartedAt time.Time `json:"started_at"`
	// DurationS is how long the run took, or has taken so far.
	DurationS float64 `json:"duration_s"`
}

// List is the runs of the client's namespace, newest first, at most n;
// not their sub-runs.
func List(ctx context.Context, c client.Client, n int) ([]Summary, error) {
	var out []Summary
	var token []byte
	for len(out) < n {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowType = '%s'", WorkflowName), PageSize: int32(min(n, 1000)), NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, ex := range resp.GetExecutions() {
			if ex.GetParentExecution() != nil {
				continue
			}
			s := Summary{RunID: ex.GetExecution().GetWorkflowId(), Status: statusWord(ex.GetStatus()),
				StartedAt: ex.GetStartTime().AsTime()}
			end := time.Now()
			if ex.GetCloseTime() != nil {
				end = ex.GetCloseTime().AsTime()
			}
			s.DurationS = end.Sub(s.StartedAt).Seconds()
			memo := ex.GetMemo().GetFields()
			for k, v := range map[string]*string{memoPlaybook: &s.Playbook, memoName: &s.Name, memoWorker: &s.Worker, memoReason: &s.Reason} {
				if p := memo[k]; p != nil {
					converter.GetDefaultDataConverter().FromPayload(p, v)
				}
			}
			var st string
			if p := memo[memoStatus]; p != nil {
				converter.GetDefaultDataConverter().FromPayload(p, &st)
			}
			switch ex.GetStatus() {
			case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
				s.Status = cmp.Or(st, s.Status)
			case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
				if st == interp.StatusWaiting {
					s.Status = st
				}
			}
			out = append(out, s)
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	return out, nil
}

// WorkflowStatus is the status of run id's workflow (running,
// completed, failed, canceled, terminated, timed_out), "" when the
// client's namespace has no run of that id.
func WorkflowStatus(ctx context.Context, c client.Client, id string) (string, error) {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return "", nil
	case err != nil:
		return "", err
	}
	return statusWord(d.GetWorkflowExecutionInfo().GetStatus()), nil
}

func statusWord(st enumspb.WorkflowExecutionStatus) string {
	return strings.ToLower(strings.TrimPrefix(st.String(), "WORKFLOW_EXECUTION_STATUS_"))
}

// Shown is a run on the cluster as apl show prints it.
type Shown struct {
	RunID    string `json:"run_id"`
	Playbook string `json:"playbook_ref"`
	// Status is the run's (completed, failed, interrupted, waiting,
	// running), or the workflow's when it ended without a result
	// (terminated, timed_out).
	Status string          `json:"status"`
	Reason string          `json:"reason,omitempty"`
	Home   *Home           `json:"home,omitempty"`
	Path   []string        `json:"path"`
	Output json.RawMessage `json:"output,omitempty"`
}

// Show says how run id went, or goes.
func Show(ctx context.Context, c client.Client, id string) (Shown, error) {
	in, err := StartedWith(ctx, c, id)
	if err != nil {
		return Shown{}, err
	}
	s := Shown{RunID: id, Playbook: in.Ref, Path: []string{}}
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return s, fmt.Errorf("run %s on Temporal: %w", id, err)
	}
	switch st := d.GetWorkflowExecutionInfo().GetStatus(); st {
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		var out RunOutput
		if err := c.GetWorkflow(ctx, id, "").Get(ctx, &out); err != nil {
			return s, fmt.Errorf("run %s on Temporal: %w", id, err)
		}
		h := out.Home
		s.Status, s.Reason, s.Home, s.Path, s.Output = out.Status, out.Reason, &h, out.Path, asLocal(out.OutputJSON)
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		s.Status = interp.StatusRunning
		evs, err := AllEvents(ctx, c, id)
		if err != nil {
			return s, err
		}
		for _, e := range evs {
			s.Path = append(s.Path, interp.PathEntry(e)...)
		}
		if qs, err := Waiting(ctx, c, id); err == nil && len(qs) > 0 {
			s.Status, s.Reason = interp.StatusWaiting, qs[0].Waiting.Reason()
		}
		if v, err := c.QueryWorkflow(ctx, id, "", QueryHome); err == nil {
			var h *Home
			if v.Get(&h) == nil {
				s.Home = h
			}
		}
	default:
		s.Status = statusWord(st)
	}
	return s, nil
}

// AllEvents is all the events run id keeps (the last eventsKept).
func AllEvents(ctx context.Context, c client.Client, id string) ([]interp.Event, error) {
	var out []interp.Event
	from := 0
	for {
		p, err := queryEvents(ctx, c, id, from)
		if err != nil {
			return nil, fmt.Errorf("run %s on Temporal: %w", id, err)
		}
		for _, e := range p.Events {
			fromWire(&e)
			out = append(out, e)
		}
		if len(p.Events) < eventsPage {
			return out, nil
		}
		from = p.Next
	}
}

// setHomeQuery answers QueryHome.
func setHomeQuery(ctx workflow.Context, h *Home) error {
	return workflow.SetQueryHandler(ctx, QueryHome, func() (*Home, error) { return h, nil })
}
