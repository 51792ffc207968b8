package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// agentAction renders the prompt, calls the agent's driver, enforces the
// budget and checks the answer against the step's returns type. An answer
// that does not match is sent back once with the problems listed; a second
// mismatch fails the step.
func (r *run) agentAction(ctx context.Context, f *frame, s *lang.Step, a *lang.AgentCall, rec *StepRecord, feedback string) outcome {
	res := r.askAgent(ctx, f, s, a, rec, feedback)
	for _, fb := range a.Fallback {
		kind := errorKind(res.err)
		if res.err == nil || !slices.Contains(a.FallbackOn, kind) || ctx.Err() != nil {
			break
		}
		r.event(r.stepEvent(f, s, Event{Type: EventLog,
			Message: fmt.Sprintf("agent %s failed (%s: %v); falling back to agent %s", rec.Agent, kind, res.err, fb.Name),
			Details: map[string]any{"agent": rec.Agent, "fallback": fb.Name, "error_kind": kind}}))
		// The fallback starts its own session: the first agent's is
		// another CLI's.
		rec.newSession = true
		res = r.askAgent(ctx, f, s, a.WithAgent(fb), rec, feedback)
	}
	return res
}

// askAgent asks one agent: the action's own, or a fallback.
func (r *run) askAgent(ctx context.Context, f *frame, s *lang.Step, a *lang.AgentCall, rec *StepRecord, feedback string) outcome {
	rec.Agent = a.Agent.Name
	drv, err := r.drivers(a.Agent)
	if err != nil {
		return failWith(fmt.Errorf("agent %q: %w", a.Agent.Name, err))
	}
	vars, err := r.promptVars(f, a)
	if err != nil {
		return failWith(err)
	}
	pctx := r.evalCtx(f, map[string]cty.Value{lang.RootVars: vars}, a.Template)
	prompt, err := evalString(a.Template, pctx)
	if err != nil {
		return failWith(fmt.Errorf("rendering the prompt: %w", err))
	}
	if r.opts.EmptyValue != nil {
		r.reportEmpty(f, s, a, pctx)
	}
	if feedback != "" {
		prompt += "\n\n" + feedback + "\n"
	}
	session, err := r.sessionOf(f, a)
	if err != nil {
		return failWith(err)
	}
	model := a.Model
	if a.ModelExpr != nil {
		if model, err = evalString(a.ModelExpr, r.evalCtx(f, nil, a.ModelExpr)); err != nil {
			return failWith(fmt.Errorf("agent %q: model: %w", a.Agent.Name, err))
		}
	}
	req := agent.Request{
		Step: s.Name, Agent: a.Agent.Type, Model: model, Prompt: prompt, System: a.Agent.System,
		RunID: r.st.Meta.RunID, ItemKey: f.key(), Workdir: r.workdir, Timeout: r.limit(s).d,
	}
	typed := s.Returns != cty.NilType
	if typed {
		req.Schema = agent.Schema(s.Returns)
	}
	const maxCalls = 2 // the first answer and one re-prompt
	for call := 1; ; call++ {
		// The one place a call is let start: it must fit in what is left
		// of the caps (budget).
		hold, t := r.budget().admit(r.host, r.pb, s, r.estimate(s, a, req))
		if t != nil {
			return tripWith(t)
		}
		rec.Calls++
		req.Attempt = rec.Calls
		// The attempt's session, once a call named one (a re-prompt, a
		// retry, a check's re-run, a resumed attempt), else the action's.
		req.SessionID = session
		if rec.SessionID != "" && !rec.newSession {
			req.SessionID = rec.SessionID
		}
		ans := r.callAgent(ctx, f, s, a, drv, req, rec, hold)
		if ans.problem == nil {
			return ans.outcome
		}
		if call == maxCalls {
			return failWith(fmt.Errorf("the answer does not match returns %s: %w", s.Returns.FriendlyName(), ans.problem))
		}
		r.event(r.stepEvent(f, s, Event{Type: EventLog, Message: "answer rejected, asking again: " + ans.problem.Error()}))
		schema, err := json.Marshal(req.Schema)
		if err != nil {
			return failWith(fmt.Errorf("internal error: the returns schema: %w", err))
		}
		req.Prompt = prompt + fmt.Sprintf("\n\nYour previous answer was rejected: %v\nAnswer again, ending with one JSON object that matches this JSON Schema:\n%s\n", ans.problem, schema)
	}
}

// answer is what one agent call came to: an outcome, or a problem with
// the answer's shape that is worth asking again about.
type answer struct {
	outcome
	problem error
}

// callAgent makes one call.
// hold is its reservation, settled with what it spent.
func (r *run) callAgent(ctx context.Context, f *frame, s *lang.Step, a *lang.AgentCall, drv agent.Driver, req agent.Request, rec *StepRecord, hold *reservation) answer {
	start := r.now()
	base := artifactBase(f, s, req.Attempt)
	r.artifact(s, base+".prompt", []byte(req.Prompt))
	before := bootTicks() // the process starts after this
	req.Started = func(pid int) { r.dir.procStarted(base, pid, before) }
	// The driver streams its answer to the response artifact if it can,
	// so that a large one is in memory once (as the text), not also as
	// the bytes that arrived.
	var rawRel string
	req.RawFile, rawRel = r.dir.artifactPath(base + ".response")
	var resp agent.Response
	var err error
	progress := r.progressOf(f, s, start)
	req.Progress = progress
	stop := r.host.heartbeat(heartbeatEvery, func() { progress(agent.Progress{Kind: progressElapsed}) })
	r.host.block(func() { resp, err = drv.Call(ctx, req) })
	stop()
	r.dir.procEnded(base)
	r.st.Metrics.AgentCalls++
	var artifact string
	if resp.RawFile != "" {
		artifact = rawRel
		text := ""
		if resp.RawIsText {
			text = resp.Text
		}
		if err := r.dir.redactArtifact(rawRel, text); err != nil {
			r.event(Event{Type: EventLog, Step: s.Name, Message: "artifact not redacted: " + err.Error()})
		}
	} else {
		raw := resp.Text
		if resp.Raw != nil {
			raw = unsafeString(resp.Raw)
		}
		artifact = r.artifactText(s, base+".response", raw)
	}
	if len(resp.Stderr) > 0 {
		r.artifact(s, base+".stderr", resp.Stderr)
	}
	r.account(rec, resp)
	cost := 0.0
	if resp.CostUSD != nil {
		cost = *resp.CostUSD
	}
	hold.settle(resp.Usage.Total(), cost)
	rec.Model = resp.Model
	if rec.Model == "" {
		rec.Model = req.Model
	}
	r.keepRaw(s, rec, base, resp, artifact)
	span := Span{Step: s.Name, Item: f.key(), Action: "agent_spawn", Attempt: req.Attempt, Artifact: artifact,
		InputSummary: a.Agent.Type + ": " + req.Prompt, OutputSummary: resp.Text, SessionID: req.SessionID}
	if resp.SessionID != "" {
		span.SessionID = resp.SessionID
	}
	if rec.newSession || resp.SessionID != "" {
		// From its first call on, the record names the attempt's session,
		// written at once so that a run killed in a later call (a
		// re-prompt, a retry) resumes it.
		rec.newSession = false
		if resp.SessionID != rec.SessionID {
			rec.SessionID = resp.SessionID
			if cerr := r.commit(f, s, false); cerr != nil {
				r.trace(span, start, err)
				return answer{outcome: abort(cerr)}
			}
		}
	}
	if err != nil {
		r.trace(span, start, err)
		return answer{outcome: failWith(err)}
	}
	if spent := r.checkSpend(s, rec); spent.kind != outNext {
		r.trace(span, start, spent.failure())
		return answer{outcome: spent}
	}
	text := resp.Text
	if b := a.Budget; b != nil {
		bd, err := agent.EnforceBudget(text, agent.Budget{MaxResponseLines: b.MaxResponseLines, MaxSummaryLines: b.MaxSummaryLines, Enforcement: string(b.Enforcement)})
		if err != nil {
			r.trace(span, start, err)
			return answer{outcome: failWith(withKind(agent.KindBudget, fmt.Errorf("budget %q: %w", b.Name, err)))}
		}
		if bd.Cut {
			r.event(r.stepEvent(f, s, Event{Type: EventBudgetEnforced,
				Message: fmt.Sprintf("response of %d lines exceeds max_response_lines=%d; kept %s (raw response in %s)", bd.Lines, b.MaxResponseLines, b.Enforcement, artifact)}))
		}
		text = bd.Text
	}
	if s.Returns == cty.NilType {
		r.trace(span, start, nil)
		return answer{outcome: done(textVal(text), nil)}
	}
	resp.Text = text
	if strings.TrimSpace(text) == "" && len(resp.Structured) == 0 {
		// Nothing to extract JSON from, and asking again rarely helps an
		// agent that printed nothing.
		err := withKind(agent.KindNoJSON, errors.New("the agent printed nothing on stdout"))
		r.trace(span, start, err)
		return answer{outcome: failWith(err)}
	}
	js, err := agent.ExtractFromResponse(resp)
	if err != nil {
		r.trace(span, start, err)
		return answer{problem: err}
	}
	v, err := agent.Decode(js, s.Returns)
	r.trace(span, start, err)
	if err != nil {
		return answer{problem: err}
	}
	return answer{outcome: done(v, nil)}
}

// sessionOf evaluates the action's session: the id of the session its
// calls continue, or "" for a new one (no session, or a null one).
func (r *run) sessionOf(f *frame, a *lang.AgentCall) (string, error) {
	if a.Session == nil {
		return "", nil
	}
	v, diags := a.Session.Value(r.evalCtx(f, nil, a.Session))
	if diags.HasErrors() {
		return "", fmt.Errorf("session: %w", diagsError(diags))
	}
	if v.IsNull() {
		return "", nil
	}
	id, err := toString(v)
	if err != nil {
		return "", fmt.Errorf("session (%s): %w", a.Session.Range(), err)
	}
	return id, nil
}

// heartbeatEvery is how often a call in flight says it is still alive.
const heartbeatEvery = 30 * time.Second

// progressElapsed is the kind of the heartbeat's EventAgentProgress.
const progressElapsed = "elapsed"

// progressOf is the Progress callback of a call of step s that began at
// start: it tells the observer, as an EventAgentProgress. It runs outside
// the walk's turn (in the driver, in the heartbeat), so it reads nothing
// the walk changes: the event is filled in before the call.
func (r *run) progressOf(f *frame, s *lang.Step, start time.Time) func(agent.Progress) {
	base := r.stepEvent(f, s, Event{Type: EventAgentProgress, Label: r.label})
	return func(p agent.Progress) {
		e := base
		e.Time = r.now()
		elapsed := e.Time.Sub(start).Round(time.Second)
		e.Details = map[string]any{"kind": p.Kind, "elapsed_s": elapsed.Seconds()}
		switch p.Kind {
		case progressElapsed:
			e.Message = "still running after " + elapsed.String()
		case agent.ProgressRetrying:
			e.Details["attempt"], e.Details["max"] = p.Attempt, p.Max
			if p.Status != 0 {
				e.Details["status"] = p.Status
			}
			e.Message = p.String()
		case agent.ProgressSession:
			e.Details["session_id"] = p.SessionID
			e.Message = p.String()
		default:
			e.Message = p.String()
		}
		e.Message = r.redact.String(e.Message)
		r.host.emit(e)
	}
}

// promptVars are what a prompt sees as vars: the run's vars, overlaid with
// the agent block's own.
func (r *run) promptVars(f *frame, a *lang.AgentCall) (cty.Value, error) {
	m := make(map[string]cty.Value, len(r.vars))
	for k, v := range r.vars {
		m[k] = v
	}
	if a.Vars != nil {
		v, diags := a.Vars.Value(r.evalCtx(f, nil, a.Vars))
		if diags.HasErrors() {
			return cty.NilVal, diagsError(diags)
		}
		if v.IsNull() || !v.CanIterateElements() {
			return cty.NilVal, fmt.Errorf("%s: vars must be an object", a.Vars.Range())
		}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			m[k.AsString()] = ev
		}
	}
	return cty.ObjectVal(m), nil
}

// account adds a call's tokens and cost to the step and the run. Cost
// stays null until some backend reports one.
func (r *run) account(rec *StepRecord, resp agent.Response) {
	n := resp.Usage.Total()
	rec.Tokens += n
	r.st.Metrics.TotalTokens += n
	if resp.CostUSD != nil {
		c := *resp.CostUSD
		rec.CostUSD = addCost(rec.CostUSD, c)
		r.st.Metrics.TotalCostUSD = addCost(r.st.Metrics.TotalCostUSD, c)
	}
}

func addCost(p *float64, c float64) *float64 {
	v := c
	if p != nil {
		v += *p
	}
	return &v
}
