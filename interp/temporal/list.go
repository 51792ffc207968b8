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
// whose checkout it works in, once one took it; its tokens and cost, as
// they change (spendMemo); and its status and reason, once it ended.
const (
	memoPlaybook = "playbook"
	memoName     = "name"
	memoWorker   = "worker"
	memoStatus   = "status"
	memoReason   = "reason"
	memoTokens   = "tokens"
	memoCost     = "cost_usd"
)

// memoVersion marks the workflows that keep their worker and their
// ending in their memo: a workflow started before replays without.
const memoVersion = "apl.memo"

// spendVersion marks the runs that keep what they spent so far in their
// memo while they go on (spendMemo), not only once they ended.
const spendVersion = "apl.memo-spend"

// spendMemo keeps a run's tokens and cost so far in its workflow's memo,
// for lists of runs that go on: an update each time a step's end changes
// them, so an agent step's end adds one event to the history and a
// command's none.
type spendMemo struct {
	ctx    workflow.Context
	tokens int
	cost   float64
}

// note updates the memo from the run's totals so far that a step's end
// event carries (on a nil spendMemo, nothing).
func (m *spendMemo) note(ev interp.Event) {
	if m == nil {
		return
	}
	tokens, hasTokens := ev.Details[interp.DetailRunTokens].(int)
	cost, hasCost := ev.Details[interp.DetailRunCost].(float64)
	if !hasTokens && !hasCost || tokens == m.tokens && cost == m.cost {
		// Not a step's end, or one that spent nothing.
		return
	}
	m.tokens, m.cost = tokens, cost
	memo := map[string]any{memoTokens: tokens}
	if hasCost {
		memo[memoCost] = cost
	}
	workflow.UpsertMemo(m.ctx, memo)
}

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
	// Tokens and CostUSD are what the run spent so far (a run started
	// before apl kept them as it goes: once it ended; one that ended
	// before apl kept them at all: none).
	Tokens  int      `json:"tokens,omitempty"`
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// List is the runs of the client's namespace, newest first, at most n;
// not their sub-runs. A run whose sub-run waits on a question is
// waiting, as a local one is.
func List(ctx context.Context, c client.Client, n int) ([]Summary, error) {
	var out []Summary
	var token []byte
	// asking are the runs with a sub-run, at any depth, that waits (a
	// sub-run's workflow ID is its run's, "/", and its own id).
	asking := map[string]bool{}
	dc := converter.GetDefaultDataConverter()
	for len(out) < n {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowType = '%s'", WorkflowName), PageSize: int32(min(n, 1000)), NextPageToken: token})
		if err != nil {
			return nil, err
		}
		for _, ex := range resp.GetExecutions() {
			memo := ex.GetMemo().GetFields()
			var st string
			if p := memo[memoStatus]; p != nil {
				dc.FromPayload(p, &st)
			}
			if ex.GetParentExecution() != nil {
				if root, _, _ := strings.Cut(ex.GetExecution().GetWorkflowId(), "/"); st == interp.StatusWaiting &&
					ex.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
					asking[root] = true
				}
				continue
			}
			s := Summary{RunID: ex.GetExecution().GetWorkflowId(), Status: statusWord(ex.GetStatus()),
				StartedAt: ex.GetStartTime().AsTime()}
			end := time.Now()
			if ex.GetCloseTime() != nil {
				end = ex.GetCloseTime().AsTime()
			}
			s.DurationS = end.Sub(s.StartedAt).Seconds()
			for k, v := range map[string]any{memoPlaybook: &s.Playbook, memoName: &s.Name, memoWorker: &s.Worker, memoReason: &s.Reason,
				memoTokens: &s.Tokens, memoCost: &s.CostUSD} {
				if p := memo[k]; p != nil {
					dc.FromPayload(p, v)
				}
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
	for i := range out {
		if out[i].Status == interp.StatusRunning && asking[out[i].RunID] {
			out[i].Status = interp.StatusWaiting
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
