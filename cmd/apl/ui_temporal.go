//go:build !notemporal

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apl-lang/apl/cmd/internal/ui"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/temporal"
	"github.com/apl-lang/apl/lang"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// uiTemporal points apl ui at the runs of the Temporal namespace f
// names: they are read as apl runs, show and logs --engine temporal read
// them, a run's playbook is loaded from the sources it started with, as
// apl resume --engine temporal loads it, and an answer is the signal apl
// resume --answer --engine temporal sends. close ends the connection and
// removes the copies of run directories it fetched.
func (e *env) uiTemporal(f temporalFlags, opts *ui.Options) (close func(), err error) {
	cl, err := dialTemporal(f.TemporalAddress, f.Namespace)
	if err != nil {
		return nil, err
	}
	cache, err := os.MkdirTemp("", "apl-ui-temporal-*")
	if err != nil {
		cl.Close()
		return nil, exitWith(exitInternal, err)
	}
	t := &temporalUIRuns{c: cl, where: f.where(),
		cache: cache, dirs: map[string]fetchedDir{}, loader: e.loader, playbooks: map[string]*lang.Playbook{}}
	// A cluster that is not there, or a namespace it does not have, is
	// said now, not on the first page.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := temporal.List(ctx, cl, 1); err != nil {
		t.close()
		return nil, temporalError(f.TemporalAddress, f.Namespace, err)
	}
	// The project's own runs stay beside the namespace's: a run is the
	// namespace's when its directory is not in the project's runs.
	local, localAnswer := opts.Runs, opts.Answer
	isLocal := func(id string) bool {
		_, err := local.Stamp(id)
		return err == nil
	}
	opts.Runs = bothRuns{local: local, remote: t, isLocal: isLocal}
	opts.Answer = func(ctx context.Context, id, key, answer string) error {
		if isLocal(id) {
			return localAnswer(ctx, id, key, answer)
		}
		return t.answer(ctx, id, key, answer)
	}
	opts.LoadRun = func(run *ui.Run) (*lang.Playbook, error) {
		if isLocal(run.ID) {
			return opts.Load(run.State.Meta.PlaybookRef)
		}
		return t.playbook(run)
	}
	opts.Where = fmt.Sprintf("%s and namespace %s of Temporal at %s", opts.Where, f.Namespace, f.TemporalAddress)
	return t.close, nil
}

// bothRuns is a project's runs and a Temporal namespace's in one list,
// newest first; a run is opened where it is.
type bothRuns struct {
	local, remote ui.Runs
	isLocal       func(id string) bool
}

func (b bothRuns) List() ([]ui.Summary, error) {
	l, err := b.local.List()
	if err != nil {
		return nil, err
	}
	r, err := b.remote.List()
	if err != nil {
		return nil, err
	}
	all := append(l, r...)
	slices.SortStableFunc(all, func(x, y ui.Summary) int { return y.StartedAt.Compare(x.StartedAt) })
	return all, nil
}

func (b bothRuns) Open(id string) (*ui.Run, error) {
	if b.isLocal(id) {
		return b.local.Open(id)
	}
	return b.remote.Open(id)
}

func (b bothRuns) Stamp(id string) (string, error) {
	if st, err := b.local.Stamp(id); err == nil {
		return st, nil
	}
	return b.remote.Stamp(id)
}

// temporalUIRuns is ui.Runs over a Temporal namespace. A run there keeps
// its directory on the worker that walks it: Open fetches a copy each
// time the run changed, so the step pages read its artifacts as a local
// run's.
type temporalUIRuns struct {
	c     client.Client
	where string
	cache string

	loader *lang.Loader

	mu        sync.Mutex
	dirs      map[string]fetchedDir // by run id: the latest copy
	n         int
	playbooks map[string]*lang.Playbook // by run id
}

// fetchedDir is the latest copy of a run's directory, and the one
// before it, which a page being served may still read.
type fetchedDir struct{ stamp, dir, prev string }

// queryWait bounds the calls to the cluster for a page: it waits no
// longer. workerWait bounds the queries a worker answers (a run's events,
// its directory, its questions): with no worker up they would wait as
// long, and the page shows what the cluster keeps alone.
const (
	queryWait  = 15 * time.Second
	workerWait = 5 * time.Second
)

func (t *temporalUIRuns) List() ([]ui.Summary, error) {
	ctx, cancel := context.WithTimeout(context.Background(), queryWait)
	defer cancel()
	all, err := temporal.List(ctx, t.c, 1000)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.where, err)
	}
	out := make([]ui.Summary, 0, len(all))
	// The questions of the waiting runs, as far as workers answer within
	// workerWait for all of them.
	qctx, qcancel := context.WithTimeout(ctx, workerWait)
	defer qcancel()
	for _, r := range all {
		// Tokens and cost are in the list's own answer (the workflow's
		// memo, once the run ended): no call per run.
		s := ui.Summary{ID: r.RunID, Playbook: cmp.Or(r.Name, r.Playbook), Ref: r.Playbook, Status: r.Status, Reason: r.Reason, StartedAt: r.StartedAt,
			DurationS: r.DurationS, Tokens: r.Tokens, CostUSD: r.CostUSD}
		if r.Status == interp.StatusWaiting && qctx.Err() == nil {
			s.Waiting = firstQuestion(qctx, t.c, r.RunID)
		}
		out = append(out, s)
	}
	return out, nil
}

// Stamp is the workflow's status and the length of its history, which
// grows with each step it takes, each answer and each ending.
func (t *temporalUIRuns) Stamp(id string) (string, error) {
	stamp, _, err := t.describe(id)
	return stamp, err
}

// describe is run id's stamp, and whether its workflow runs.
func (t *temporalUIRuns) describe(id string) (stamp string, running bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), queryWait)
	defer cancel()
	d, err := t.c.DescribeWorkflowExecution(ctx, id, "")
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return "", false, ui.ErrNoRun
	case err != nil:
		return "", false, fmt.Errorf("%s: %w", t.where, err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetParentExecution() != nil {
		return "", false, ui.ErrNoRun // a sub-run is shown in its run
	}
	st := info.GetStatus()
	return fmt.Sprintf("%s:%d", st, info.GetHistoryLength()), st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

// Open reads run id as apl show --engine temporal does: its status from
// the cluster, its steps from its events, their artifacts from the run
// directory its worker keeps. When no worker answers, the run's status,
// reason and output alone.
func (t *temporalUIRuns) Open(id string) (*ui.Run, error) {
	stamp, running, err := t.describe(id)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), queryWait)
	defer cancel()
	s, evs, qerr, err := readTemporalRun(ctx, t.c, id, running, workerWait)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.where, err)
	}
	st := runState(s, evs)
	dir := t.none()
	if qerr == nil {
		// What its steps printed, from the directory its worker keeps.
		dir, _ = t.fetch(ctx, id, stamp)
	}
	// Its status is the cluster's: no process holds a run directory here.
	st.Meta.RunID, st.Meta.Status, st.Meta.Reason = id, s.Status, s.Reason
	if qerr != nil {
		st.Meta.Reason = strings.TrimPrefix(st.Meta.Reason+"; its steps are not shown: no worker answered for the run", "; ")
	}
	if running {
		// What it waits for, if it waits for a worker, as apl show says.
		for _, n := range temporal.Stalled(ctx, t.c, id) {
			st.Meta.Reason = strings.TrimPrefix(st.Meta.Reason+"; "+n, "; ")
		}
	}
	st.Meta.PlaybookRef = cmp.Or(st.Meta.PlaybookRef, s.Playbook)
	st.Waiting = nil
	if (s.Status == interp.StatusWaiting || s.Status == interp.StatusRunning) && qerr == nil {
		// A run whose sub-run asks waits too, as a local one does.
		if st.Waiting = firstQuestion(ctx, t.c, id); st.Waiting != nil {
			st.Meta.Status, st.Meta.Reason = interp.StatusWaiting, st.Waiting.Reason()
		}
	}
	if running && st.Metrics.DurationS == 0 && !st.Meta.StartedAt.IsZero() {
		// Its metrics come with its end: until then, the time since it
		// started, as the list gives it.
		st.Metrics.DurationS = time.Since(st.Meta.StartedAt).Seconds()
	}
	sum := ui.Summary{ID: id, Playbook: cmp.Or(st.Meta.Playbook, st.Meta.PlaybookRef), Ref: st.Meta.PlaybookRef, Status: st.Meta.Status, Reason: st.Meta.Reason,
		StartedAt: st.Meta.StartedAt, DurationS: st.Metrics.DurationS, Tokens: st.Metrics.TotalTokens, CostUSD: st.Metrics.TotalCostUSD, Waiting: st.Waiting}
	return &ui.Run{Summary: sum, State: st, Dir: dir}, nil
}

// readTemporalRun reads run id as apl show and apl ui show it: how it
// goes from the cluster, and its events, which a worker answers for
// (qerr says why none did, within wait when it is not 0: a worker
// replays an ended run's whole history to answer, which takes seconds on
// a loaded machine). A running run that no worker answers for is its
// status and playbook alone: Show would ask the workers again.
func readTemporalRun(ctx context.Context, c client.Client, id string, running bool, wait time.Duration) (s temporal.Shown, evs []interp.Event, qerr, err error) {
	qctx, qcancel := ctx, context.CancelFunc(func() {})
	if wait > 0 {
		qctx, qcancel = context.WithTimeout(ctx, wait)
	}
	evs, qerr = temporal.AllEvents(qctx, c, id)
	qcancel()
	if qerr != nil && running {
		in, err := temporal.StartedWith(ctx, c, id)
		if err != nil {
			return s, nil, qerr, err
		}
		return temporal.Shown{RunID: id, Playbook: in.Ref, Status: interp.StatusRunning, Path: []string{}}, nil, qerr, nil
	}
	s, err = temporal.Show(ctx, c, id)
	return s, evs, qerr, err
}

// firstQuestion is the first question run id waits on, its own or a
// sub-run's (STEP/SUBSTEP), which the page answers as apl resume
// --answer does; nil when none, or no worker answered.
func firstQuestion(ctx context.Context, c client.Client, id string) *interp.Waiting {
	qs, err := temporal.Questions(ctx, c, id)
	if err != nil || len(qs) == 0 {
		return nil
	}
	return &qs[0].Waiting
}

// fetch is the copy of run id's directory as of stamp (its artifacts),
// fetched unless it is there already; false when no worker answered.
func (t *temporalUIRuns) fetch(ctx context.Context, id, stamp string) (string, bool) {
	t.mu.Lock()
	have, ok := t.dirs[id]
	t.mu.Unlock()
	if !ok || have.stamp != stamp {
		t.mu.Lock()
		t.n++
		dir := filepath.Join(t.cache, fmt.Sprintf("run-%d", t.n))
		t.mu.Unlock()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return t.none(), false
		}
		if _, err := temporal.FetchRunDir(ctx, t.c, id, dir, true); err != nil {
			os.RemoveAll(dir)
			return t.none(), false
		}
		t.mu.Lock()
		old := t.dirs[id]
		have = fetchedDir{stamp, dir, old.dir}
		t.dirs[id] = have
		t.mu.Unlock()
		if old.prev != "" {
			os.RemoveAll(old.prev)
		}
	}
	return have.dir, true
}

// none is an empty directory: that of a run whose worker did not answer,
// so that no file of another run is served as its.
func (t *temporalUIRuns) none() string {
	dir := filepath.Join(t.cache, "none")
	os.MkdirAll(dir, 0o755)
	return dir
}

// playbook loads the playbook run runs from what it started with (its
// sources, or a stdlib reference), as apl resume --engine temporal does,
// once per run: they do not change.
func (t *temporalUIRuns) playbook(run *ui.Run) (*lang.Playbook, error) {
	t.mu.Lock()
	pb := t.playbooks[run.ID]
	t.mu.Unlock()
	if pb != nil {
		return pb, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), queryWait)
	defer cancel()
	in, err := temporal.StartedWith(ctx, t.c, run.ID)
	if err != nil {
		return nil, err
	}
	uiLoadMu.Lock()
	// Its sub-playbooks and prompt files are in its input, not here.
	pb, diags := temporal.LoadRun(t.loader, in)
	uiLoadMu.Unlock()
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s: %s", in.Ref, diags.Error())
	}
	t.mu.Lock()
	t.playbooks[run.ID] = pb
	t.mu.Unlock()
	return pb, nil
}

// answer is apl resume --answer --engine temporal's signal: the run's
// workflow takes it (or refuses it) and goes on on the cluster, whatever
// becomes of the ui.
func (t *temporalUIRuns) answer(ctx context.Context, id, key, answer string) error {
	_, err := temporal.SendAnswer(ctx, t.c, id, key, answer)
	return err
}

func (t *temporalUIRuns) close() {
	t.c.Close()
	os.RemoveAll(t.cache)
}
