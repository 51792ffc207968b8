package interp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// subPlaybookAction runs another playbook as a step, as a run of its own
// under this run's directory (subruns/STEP-ATTEMPT, plus the item key in a
// for_each). If this run is resumed while the sub-run was unfinished, the
// sub-run is resumed too, so its completed steps are not run again. On
// an engine, the sub-run is a run on the engine (Engine.SubRun). The sub-run's output object is the step's output; its
// failure fails the step. This run's caps (tokens, cost, retries, time)
// hold during the sub-run, beside the sub-playbook's own limits: a
// sub-run here spends from this run's budget as it goes; one on an
// engine is given what is left of it (Caps), and what it spent is
// charged when it ends.
func (r *run) subPlaybookAction(ctx context.Context, f *frame, s *lang.Step, a *lang.SubPlaybook, rec *StepRecord) outcome {
	inputs := map[string]cty.Value{}
	if a.Inputs != nil {
		v, diags := a.Inputs.Value(r.evalCtx(f, nil, a.Inputs))
		if diags.HasErrors() {
			return failWith(diagsError(diags))
		}
		if v.IsNull() || !v.CanIterateElements() {
			return failWith(fmt.Errorf("%s: inputs must be an object", a.Inputs.Range()))
		}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			inputs[k.AsString()] = ev
		}
	}
	if r.playbooks != nil {
		if out, ok, err := r.playbooks(ctx, s.Name); ok {
			return done(out, err)
		}
	}
	id := fmt.Sprintf("%s-%d", s.Name, rec.Runs)
	if k := f.key(); k != "" {
		id = fmt.Sprintf("%s-%s-%d", s.Name, safeName(k), rec.Runs)
	}
	// Answers reach the sub-run under this step's name: --answer
	// STEP/SUBSTEP=CHOICE.
	var answers map[string]string
	for k, v := range r.opts.Answers {
		if sub, ok := strings.CutPrefix(k, s.Name+"/"); ok {
			if answers == nil {
				answers = map[string]string{}
			}
			answers[sub] = v
		}
	}
	start := r.now()
	var res *Result
	var err error
	var lent *Lender
	if e := r.opts.Engine; e != nil {
		lent = r.lender()
		r.host.block(func() {
			res, err = e.SubRun(ctx, SubRun{ID: id, Parent: r.st.Meta.RunID, Step: s.Name, Item: f.key(), Attempt: rec.Runs,
				Playbook: a, Inputs: inputs, Answers: answers, Caps: r.budget().left(), Budget: lent,
				Hold: func() func() { return r.holdItems(ctx) }})
		})
	} else {
		var ended bool
		if res, ended, err = r.subRunHere(ctx, s, a, id, inputs, answers); ended {
			// It ended before this run stopped: what it spent is counted.
			out, err := r.subResult(a, res)
			if t := r.budget().stopped(); t != nil {
				return tripWith(t).withOut(out)
			}
			return done(out, err)
		}
	}
	r.trace(Span{Step: s.Name, Item: f.key(), Action: "agent_spawn", Attempt: rec.Runs,
		InputSummary: "playbook " + a.Source, OutputSummary: resultSummary(res, err)}, start, err)
	if errors.Is(err, ErrInterrupted) {
		return interrupted
	}
	if err != nil {
		// The sub-run's bad inputs, or its refusal to resume, are this
		// step's failure, not a usage error of this run: %v drops the type.
		return failWith(fmt.Errorf("playbook %s: %v", a.Source, err))
	}
	if res.Status == StatusWaiting && res.Waiting != nil {
		// The decision the sub-run waits for is this run's to wait for.
		w := *res.Waiting
		w.Step = s.Name + "/" + w.Step
		return waitFor(&w)
	}
	// What the sub-run spent counts toward this step's and this run's
	// metrics and caps. A sub-run here charged this run's budget as it
	// spent; one on an engine is charged now.
	r.st.Metrics.AgentCalls += res.Metrics.AgentCalls
	r.account(rec, agent.Response{Usage: agent.Usage{InputTokens: res.Metrics.TotalTokens}, CostUSD: res.Metrics.TotalCostUSD})
	if r.opts.Engine != nil {
		if res.CapTrip != "" {
			// The sub-run stopped at a cap of this run, in the copy of
			// this run's budget it was given: this run stops too.
			r.budget().close(&trip{res.CapTrip, agent.KindBudget})
		}
		cost := 0.0
		if c := res.Metrics.TotalCostUSD; c != nil {
			cost = *c
		}
		tokens, retries := res.Metrics.TotalTokens, res.Metrics.Retries
		if lent != nil {
			// What its calls spent, and its retries, through the
			// lender are counted.
			t, c, n := lent.lent()
			tokens, cost, retries = tokens-t, cost-c, retries-n
		}
		r.budget().charge(tokens, cost, retries)
		r.budget().learn(res.Spent)
	}
	if spent := r.checkSpend(s, rec); spent.kind != outNext {
		return spent
	}
	out, err := r.subResult(a, res)
	return done(out, err)
}

// subRunHere runs a sub-playbook step's run in this process, under this
// run's directory (subruns/ID). Each run of the step has its own sub-run.
// One that exists already was started before this run stopped: it is
// resumed, or, if it ended, its result is taken (ended).
func (r *run) subRunHere(ctx context.Context, s *lang.Step, a *lang.SubPlaybook, id string, inputs map[string]cty.Value, answers map[string]string) (res *Result, ended bool, err error) {
	runsDir := filepath.Join(r.dir.path, "subruns")
	resume := false
	if st, _, err := readState(filepath.Join(runsDir, id)); err == nil {
		switch st.Meta.Status {
		case StatusRunning, StatusInterrupted, StatusWaiting:
			resume = true
		default:
			return &Result{RunID: id, Dir: filepath.Join(runsDir, id), Status: st.Meta.Status,
				Recommendation: st.Meta.Recommendation, Reason: st.Meta.Reason, ErrorKind: st.Meta.ErrorKind, OutputJSON: st.Output}, true, nil
		}
	}
	opts := r.opts
	opts.Workdir = r.workdir
	opts.RunsDir = runsDir
	opts.RunID = id
	opts.Inputs = inputs
	opts.Mode = a.Mode
	opts.Observer = prefixObserver{r.opts.Observer, s.Name}
	if out := r.opts.Output; out != nil {
		opts.Output = func(step, item string, stderr bool, line string) { out(s.Name+"/"+step, item, stderr, line) }
	}
	// --from is for this run.
	opts.From, opts.Answers = "", answers
	opts.Shell, opts.Funcs, opts.Drivers, opts.Playbooks = r.shell, r.funcs, r.drivers, r.playbooks
	// This run's caps hold during the sub-run.
	opts.outer = r.budget()
	// A question the sub-run asks a person holds this run's for_each
	// steps around the step.
	ctx = r.crossAskLinks(ctx)
	r.host.block(func() {
		if resume {
			res, err = Resume(ctx, a.Playbook, filepath.Join(runsDir, id), opts)
		} else {
			res, err = Start(ctx, a.Playbook, a.Source, opts)
		}
	})
	return res, false, err
}

// SubRun is a sub-playbook step's run on an engine (Engine.SubRun).
type SubRun struct {
	// ID is the sub-run's run id, as a local sub-run's (STEP-ATTEMPT,
	// STEP-ITEMKEY-ATTEMPT in a for_each); Parent is the id of the run
	// that runs it. Together they name the sub-run uniquely and the same
	// on every replay.
	ID, Parent string
	// Step, Item and Attempt are the step that runs it, its for_each
	// item's key ("" outside one) and the step's run count.
	Step, Item string
	Attempt    int
	// Playbook is the step's playbook block: the playbook, its source and
	// mode. Inputs are its inputs as the step evaluated them; Answers the
	// decisions given to this run for the sub-run's ask steps.
	Playbook *lang.SubPlaybook
	Inputs   map[string]cty.Value
	Answers  map[string]string
	// Caps are what this run leaves the sub-run of its caps and those of
	// the runs that run it; nil: none. The engine holds the sub-run to
	// them (Options.OuterCaps) beside its own limits.
	Caps *Caps
	// Hold holds the for_each steps around the step, in this run and the
	// runs above, while a question of the sub-run waits for a person; the
	// engine calls it when the sub-run tells it one opened (AskRelay), and
	// what it returns when that question closes. It is called in the
	// walk's turn, from the engine's SubRun.
	Hold func() (letGo func())
	// Budget, when the engine lends this run's budget to its sub-runs
	// (BudgetRelay), serves the sub-run's reservations: its calls and
	// retries reserve from this run's budget as they go, and Caps gives
	// it only this run's playbook and what its steps' calls spent.
	Budget *Lender
}

// subResult turns a sub-run's result into the step's output or error.
func (r *run) subResult(a *lang.SubPlaybook, res *Result) (cty.Value, error) {
	out := res.Output
	if out == cty.NilVal {
		out = cty.EmptyObjectVal
		if len(res.OutputJSON) > 0 {
			if v, err := builtins.JSONToCty(res.OutputJSON); err == nil {
				out = v
			}
		}
	}
	if res.Status == StatusWaiting {
		return cty.NilVal, fmt.Errorf("playbook %s is waiting for a decision; answer it in its own run: apl resume %s", a.Source, res.Dir)
	}
	if res.Status == StatusFailed {
		msg := failMessage(Meta{Recommendation: res.Recommendation, Reason: res.Reason})
		err := fmt.Errorf("playbook %s: %s", a.Source, msg)
		if res.ErrorKind != "" {
			// The sub-run's own cap or timeout is the step's: a phase's
			// token cap is a budget error for the breaker's open_on.
			err = withKind(res.ErrorKind, err)
		}
		return out, err
	}
	return out, nil
}

func resultSummary(res *Result, err error) string {
	if err != nil {
		return err.Error()
	}
	return res.Status + ": " + string(res.OutputJSON)
}

// safeName makes a for_each key usable in a file name, and keeps
// different keys apart: letters, digits, '.' and '-' stay as they are,
// every other byte becomes _XX (its hex code), so "a/b", "a_b" and "a?b"
// name three files. A key too long for a file name is cut and completed
// with a hash of the whole key.
func safeName(s string) string {
	const maxLen = 100
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' && i > 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "_%02x", c)
	}
	out := b.String()
	if len(out) > maxLen {
		sum := sha256.Sum256([]byte(s))
		out = out[:maxLen-17] + "-" + hex.EncodeToString(sum[:8])
	}
	return out
}

// prefixObserver passes a sub-run's events on, naming the step that runs
// it.
type prefixObserver struct {
	inner Observer
	step  string
}

func (p prefixObserver) Event(e Event) {
	if p.inner == nil {
		return
	}
	if e.Step != "" {
		e.Step = p.step + "/" + e.Step
	} else {
		e.Step = p.step
	}
	p.inner.Event(e)
}
