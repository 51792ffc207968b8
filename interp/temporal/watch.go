package temporal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// PollInterval is how often a client following a run asks it for its
// events and questions.
var PollInterval = 300 * time.Millisecond

// queryTimeout bounds one query: a run whose workers are all gone cannot
// answer, and the client asks again at the next poll.
const queryTimeout = 10 * time.Second

// FromNow is Watch's from for a client that wants only the events to
// come.
const FromNow = -1

// Watch follows run id until it ends or waits for a person, giving obs
// (when not nil) the run's events from index from (FromNow: from the
// next) on, as they come. A run that waits comes back with status
// waiting, the first question it waits on and a reason worded as a
// local run's; it goes on waiting on the cluster for SendAnswer. The
// path is RunOutput.Path for a run that ended, else the steps seen.
func Watch(ctx context.Context, c client.Client, id string, from int, obs interp.Observer) (*interp.Result, []string, error) {
	return NewFollower(c, id, from).Watch(ctx, obs)
}

// A Follower follows one run. Each Watch goes on from where the last one
// stopped, for the run and for its sub-runs: a client that answers the
// question the run waits on watches again, and so shows what came while
// the question was on its screen, and nothing twice.
type Follower struct{ f *follower }

// NewFollower follows run id from its event from on (FromNow: from the
// next).
func NewFollower(c client.Client, id string, from int) *Follower {
	f := &follower{c: c, id: id, next: from}
	if from == FromNow {
		// The first poll finds where now is. A run that no worker
		// answers for (its workers are gone) is followed all the same:
		// the notes say what it waits for.
		f.next = math.MaxInt
	}
	return &Follower{f}
}

// Watch is the package's Watch, from where the last one stopped.
func (w *Follower) Watch(ctx context.Context, obs interp.Observer) (*interp.Result, []string, error) {
	w.f.obs = obs
	return w.f.follow(ctx)
}

func (f *follower) follow(ctx context.Context) (*interp.Result, []string, error) {
	c, id, obs := f.c, f.id, f.obs
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type ended struct {
		out RunOutput
		err error
	}
	done := make(chan ended, 1)
	go func() {
		var out RunOutput
		err := c.GetWorkflow(wctx, id, "").Get(wctx, &out)
		done <- ended{out, err}
	}()
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	notes := make(chan string, 8)
	go watchStalls(wctx, c, id, notes)
	for {
		select {
		case <-ctx.Done():
			return nil, f.path, ctx.Err()
		case n := <-notes:
			if obs != nil {
				obs.Event(interp.Event{Type: interp.EventLog, Message: n})
			}
		case end := <-done:
			if end.err != nil {
				if ctx.Err() != nil {
					return nil, f.path, ctx.Err()
				}
				return nil, f.path, fmt.Errorf("run %s on Temporal: %w", id, end.err)
			}
			// The events since the last poll; the run has ended, and a
			// worker replays it to answer.
			f.poll(ctx)
			res, err := end.out.result()
			return res, end.out.Path, err
		case <-tick.C:
			if f.poll(ctx) != nil || len(f.waiting) == 0 {
				continue
			}
			w := f.waiting[0].Waiting
			return &interp.Result{RunID: id, Status: interp.StatusWaiting, Reason: w.Reason(), Waiting: &w,
				OutputJSON: json.RawMessage("{}")}, f.path, nil
		}
	}
}

// StallCheck is how often a client following a run asks the cluster
// whether the run waits for a worker.
var StallCheck = 3 * time.Second

// watchStalls says, on notes, when run id waits for a worker: when no
// worker polls its task queue, and when a step's worker went silent and
// the step waits for it to serve again. Each is said once.
func watchStalls(ctx context.Context, c client.Client, id string, notes chan<- string) {
	said := map[string]bool{}
	t := time.NewTicker(StallCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, n := range Stalled(ctx, c, id) {
			if said[n] {
				continue
			}
			said[n] = true
			select {
			case notes <- n:
			case <-ctx.Done():
				return
			}
		}
	}
}

// Stalled says why run id waits for a worker, if it does: no worker
// polls the task queue it was started on; a step's worker went silent
// (the step waits on its home worker's queue for that worker to serve
// again: home.go); or a step has waited HomeWait on its home worker's
// queue without being taken, or the walk's next task TurnWait on the
// run's queue, which a worker that stopped (SIGTERM) leaves as it is, and
// a worker busy with --max-steps steps too.
func Stalled(ctx context.Context, c client.Client, id string) []string {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil || d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return nil
	}
	var out []string
	queue := d.GetExecutionConfig().GetTaskQueue().GetName()
	if tq, err := c.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW); err == nil && len(tq.GetPollers()) == 0 {
		out = append(out, fmt.Sprintf("no worker polls task queue %s: run %s waits for one (apl worker --task-queue %s)", queue, id, queue))
	} else if wt := d.GetPendingWorkflowTask(); wt.GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_SCHEDULED && waited(wt.GetScheduledTime(), TurnWait) {
		// The server lists a worker that stopped among the queue's
		// pollers for minutes: the walk's next task, not taken, tells.
		out = append(out, fmt.Sprintf("no worker of task queue %s has taken run %s's next turn for over %s: its workers stopped, or are all busy; it goes on when one serves (apl worker --task-queue %s)",
			queue, id, TurnWait, queue))
	}
	for _, pa := range d.GetPendingActivities() {
		if pa.GetState() != enumspb.PENDING_ACTIVITY_STATE_SCHEDULED {
			continue
		}
		home, ok := strings.CutPrefix(pa.GetActivityOptions().GetTaskQueue().GetName(), queue+"@")
		if !ok {
			continue
		}
		restart := fmt.Sprintf("if it is gone, restart it in its checkout (apl worker --name %s)", home)
		switch {
		case pa.GetAttempt() >= 2 && pa.GetLastFailure() != nil:
			out = append(out, fmt.Sprintf("a step waits for worker %s, the run's home (%s): it runs again when that worker serves again; %s",
				home, pa.GetLastFailure().GetMessage(), restart))
		case waited(pa.GetScheduledTime(), HomeWait):
			// As for the walk's task: how long the step has waited tells.
			out = append(out, fmt.Sprintf("a step has waited over %s for worker %s, the run's home, to take it: that worker stopped, or runs as many steps as its --max-steps allows; %s",
				HomeWait, home, restart))
		}
	}
	return out
}

// waited reports whether a task scheduled at t has waited d.
func waited(t *timestamppb.Timestamp, d time.Duration) bool {
	return t != nil && time.Since(t.AsTime()) >= d
}

// HomeWait is how long a step waits on its home worker's queue, not
// taken, before Stalled says so; TurnWait is how long the walk's next
// task waits on the run's queue. A worker that serves takes one in
// milliseconds when it has room. TurnWait is longer than the 5 seconds
// a walk's task waits for the worker that walked it last (Temporal's
// sticky queue) before any worker of the queue may take it.
var (
	HomeWait = 5 * time.Second
	TurnWait = 10 * time.Second
)

// follower reads a run's events and questions.
type follower struct {
	c       client.Client
	id      string
	next    int
	obs     interp.Observer
	path    []string
	waiting []Question
	// subs follow the run's sub-runs (child workflows) that run, by
	// workflow ID, for their events: obs gets them under the name of the
	// step that runs them, as a local sub-run's. sub is set for one.
	subs map[string]*follower
	sub  bool
	// held are the sub-runs' events of a poll, given after the run's own.
	held heldEvents
}

// poll gets the events since the last poll, page by page, and the
// questions the run waits on. Its sub-runs' events are held back until
// this run's events since are read again, and all are given in the order
// they happened (by their times on the cluster; the run's own first on a
// tie): an event of this run that came before a sub-run's is given before
// it (an item the parent started before a sub-run tripped a cap is not
// told after the trip), and a sub-run's last steps before the parent's
// step that ran it ends.
func (f *follower) poll(ctx context.Context) error {
	obs := f.obs
	var own heldEvents
	if obs != nil {
		f.obs = &own
	}
	p, err := f.read(ctx)
	if err == nil && f.followSubs(ctx, p.Children) {
		if again, err := f.read(ctx); err == nil {
			p = again
		}
	}
	if f.obs = obs; obs != nil {
		all := append(own, f.held...)
		slices.SortStableFunc(all, func(a, b interp.Event) int { return a.Time.Compare(b.Time) })
		for _, e := range all {
			obs.Event(e)
		}
		f.held = f.held[:0]
	}
	if err != nil {
		return err
	}
	if f.sub {
		return nil
	}
	if len(f.waiting) == 0 && len(p.Children) > 0 {
		// A sub-run may wait on a person.
		f.waiting = questionsOf(subQuestions(ctx, f.c, f.id, "", p.Children))
	}
	return nil
}

// read gives the run's own events since the last read, page by page, and
// returns the last page.
func (f *follower) read(ctx context.Context) (Events, error) {
	for {
		p, err := queryEvents(ctx, f.c, f.id, f.next)
		if err != nil {
			return p, err
		}
		if p.Lost > 0 && f.obs != nil {
			f.obs.Event(interp.Event{Type: interp.EventLog, Message: fmt.Sprintf("(%d events not shown: the workflow keeps the last %d)", p.Lost, eventsKept)})
		}
		for _, e := range p.Events {
			fromWire(&e)
			f.path = append(f.path, interp.PathEntry(e)...)
			if f.obs != nil {
				f.obs.Event(e)
			}
		}
		f.next, f.waiting = p.Next, p.Waiting
		if len(p.Events) < eventsPage {
			return p, nil
		}
	}
}

// followSubs holds the events of the run's sub-runs (held): those that
// run now (children), and, once more, those that ended since the last
// poll. A sub-run that starts and ends between two polls is not seen. It
// reports whether it followed any.
func (f *follower) followSubs(ctx context.Context, children []string) bool {
	if f.obs == nil || len(children) == 0 && len(f.subs) == 0 {
		return false
	}
	running := map[string]bool{}
	for _, child := range children {
		running[child] = true
		if f.subs[child] != nil {
			continue
		}
		// The child's ID is the parent's and the sub-run's id:
		// STEP-ATTEMPT or STEP-ITEMKEY-ATTEMPT; a step name has no dash.
		step, _, ok := strings.Cut(strings.TrimPrefix(child, f.id+"/"), "-")
		if !ok || step == "" {
			continue
		}
		if f.subs == nil {
			f.subs = map[string]*follower{}
		}
		f.subs[child] = &follower{c: f.c, id: child, obs: stepPrefix{&f.held, step}, sub: true}
	}
	for _, id := range slices.Sorted(maps.Keys(f.subs)) {
		f.subs[id].poll(ctx)
		if !running[id] {
			delete(f.subs, id)
		}
	}
	return true
}

// heldEvents keeps events to give later.
type heldEvents []interp.Event

func (h *heldEvents) Event(e interp.Event) { *h = append(*h, e) }

// stepPrefix passes a sub-run's events on, naming the step that runs
// it, as a local run's observer gets them.
type stepPrefix struct {
	obs  interp.Observer
	step string
}

func (p stepPrefix) Event(e interp.Event) {
	if e.Step != "" {
		e.Step = p.step + "/" + e.Step
	} else {
		e.Step = p.step
	}
	p.obs.Event(e)
}

func queryEvents(ctx context.Context, c client.Client, id string, from int) (Events, error) {
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var p Events
	v, err := c.QueryWorkflow(ctx, id, "", QueryEvents, from)
	if err == nil {
		err = v.Get(&p)
	}
	return p, err
}

// result is the run's interp.Result, as a local run's.
func (out RunOutput) result() (*interp.Result, error) {
	res := &interp.Result{RunID: out.RunID, Status: out.Status, Recommendation: out.Recommendation, Reason: out.Reason,
		ErrorKind: out.ErrorKind, OutputJSON: asLocal(out.OutputJSON), Waiting: out.Waiting, Metrics: out.Metrics, CapTrip: out.CapTrip, Spent: out.Spent}
	var err error
	if res.Output, err = out.Output.decode(); err != nil {
		return nil, fmt.Errorf("run %s: output: %w", out.RunID, err)
	}
	return res, nil
}

// asLocal is a run's output JSON as the local engine writes it: the
// workflow's result went through encoding/json, which writes <, > and &
// in strings as \u003c, \u003e and \u0026, and apl writes them as they
// are.
func asLocal(out json.RawMessage) json.RawMessage {
	if !bytes.Contains(out, []byte(`\u00`)) {
		return out
	}
	b := make([]byte, 0, len(out))
	for i := 0; i < len(out); i++ {
		c := out[i]
		if c != '\\' || i+1 >= len(out) {
			b = append(b, c)
			continue
		}
		switch string(out[i+1 : min(i+6, len(out))]) {
		case "u003c":
			b, i = append(b, '<'), i+5
			continue
		case "u003e":
			b, i = append(b, '>'), i+5
			continue
		case "u0026":
			b, i = append(b, '&'), i+5
			continue
		}
		// Another escape, \\ among them: kept whole.
		b = append(b, c, out[i+1])
		i++
	}
	return b
}

// Waiting is the questions run id waits on, in the order asked. A run
// that ended waits on none.
func Waiting(ctx context.Context, c client.Client, id string) ([]Question, error) {
	if err := running(ctx, c, id); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	var qs []Question
	v, err := c.QueryWorkflow(ctx, id, "", QueryWaiting)
	if err == nil {
		err = v.Get(&qs)
	}
	if err != nil {
		return nil, fmt.Errorf("run %s on Temporal: %w", id, err)
	}
	return qs, nil
}

// running says why run id is not running, if it is not.
func running(ctx context.Context, c client.Client, id string) error {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return fmt.Errorf("run %s on Temporal: %w", id, err)
	}
	if st := d.GetWorkflowExecutionInfo().GetStatus(); st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return &EndedError{RunID: id, Status: strings.ToLower(st.String())}
	}
	return nil
}

// EndedError says a run has ended: there is no question to answer.
type EndedError struct{ RunID, Status string }

func (e *EndedError) Error() string {
	return fmt.Sprintf("run %s has ended (the workflow is %s); it waits for no decision", e.RunID, e.Status)
}

// NotAskedError says a run waits on no question that an answer's key
// names.
type NotAskedError struct {
	RunID, Key string
	Waiting    []Question
}

func (e *NotAskedError) Error() string {
	if len(e.Waiting) == 0 {
		return fmt.Sprintf("run %s waits for no decision now", e.RunID)
	}
	var keys, asked []string
	for _, q := range e.Waiting {
		keys = append(keys, q.Waiting.Key())
		asked = append(asked, q.Waiting.Reason())
	}
	hint := ""
	if s := lang.Suggest(e.Key, keys); s != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", s)
	}
	return fmt.Sprintf("run %s waits for no decision at step %s%s; it is %s", e.RunID, e.Key, hint, strings.Join(asked, "; and "))
}

// SendAnswer answers the questions run id waits on at key (STEP[ITEM],
// or STEP for each of its items that waits; STEP/SUBSTEP for a
// sub-run's, which goes to the sub-run's workflow) with choice, once the
// question says it takes it: an *interp.WaitingError says it is not one
// of the options, a *NotAskedError that the run waits on no question of
// that key, an *EndedError that the run has ended. It returns once the
// run has taken the answer, with the index of the run's first event
// since it was sent: Watch from there to follow the run on.
func SendAnswer(ctx context.Context, c client.Client, id, key, choice string) (from int, err error) {
	return SendAnswerAs(ctx, c, id, key, choice, "")
}

// SendAnswerAs is SendAnswer for an answer given otherwise than with apl
// resume --answer: how says how (interp.AnsweredAtTerminal), for the
// run's event log.
func SendAnswerAs(ctx context.Context, c client.Client, id, key, choice, how string) (from int, err error) {
	all, next, err := allAsked(ctx, c, id)
	if err != nil {
		return 0, err
	}
	var hit []asked
	for _, q := range all {
		if !answers(key, q.Waiting) {
			continue
		}
		if !q.Text && !slices.Contains(q.Options, choice) {
			return 0, &interp.WaitingError{RunID: id, Key: q.Waiting.Key(), Waiting: q.Waiting, Given: choice}
		}
		hit = append(hit, q)
	}
	if len(hit) == 0 {
		return 0, &NotAskedError{RunID: id, Key: key, Waiting: questionsOf(all)}
	}
	signalled := map[string]bool{}
	for _, q := range hit {
		if signalled[q.workflow] {
			continue
		}
		signalled[q.workflow] = true
		ans := Answer{Key: strings.TrimPrefix(key, q.prefix), Choice: choice, How: how}
		if err := c.SignalWorkflow(ctx, q.workflow, "", SignalAnswer, ans); err != nil {
			return 0, fmt.Errorf("run %s on Temporal: %w", q.workflow, err)
		}
	}
	// Wait for the workflows to take it, so that a client that follows
	// the run next does not see the question it answered.
	for _, q := range hit {
		for {
			// A query alone; whether the workflow ended is asked only
			// when the query fails.
			w, err := queryEvents(ctx, c, q.workflow, math.MaxInt)
			if err != nil {
				var ended *EndedError
				if errors.As(running(ctx, c, q.workflow), &ended) {
					break
				}
				return 0, fmt.Errorf("run %s on Temporal: %w", q.workflow, err)
			}
			if !slices.ContainsFunc(w.Waiting, func(w Question) bool { return w.N == q.N }) {
				break
			}
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(PollInterval / 3):
			}
		}
	}
	return next, nil
}

// StartedWith is the input run id started with: the playbook it runs,
// which a client loads to print the run as apl run does.
func StartedWith(ctx context.Context, c client.Client, id string) (RunInput, error) {
	var in RunInput
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return in, fmt.Errorf("run %s on Temporal: no history", id)
	}
	ev, err := it.Next()
	if err != nil {
		return in, fmt.Errorf("run %s on Temporal: %w", id, err)
	}
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil || attrs.GetWorkflowType().GetName() != WorkflowName {
		return in, fmt.Errorf("run %s on Temporal: not an apl run", id)
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(attrs.GetInput(), &in); err != nil {
		return in, fmt.Errorf("run %s on Temporal: its input: %w", id, err)
	}
	return in, nil
}
