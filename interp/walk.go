package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// execute walks the graph from the current step until the run ends, runs
// the on_failure steps if it failed, then the finally steps, and
// evaluates the output.
func (r *run) execute(ctx context.Context) (res *Result, err error) {
	defer r.dir.close()
	defer r.host.close()
	r.host.walk(func() { res, err = r.walk(ctx) })
	return res, err
}

func (r *run) walk(ctx context.Context) (*Result, error) {
	// The budget starts from what the state says the run spent, before
	// anything is spent here.
	r.budget()
	m := &r.st.Meta
	o := r.walkMain(ctx)
	if o.kind == outNext && m.Status == StatusFailed && !m.Finally {
		o = r.walkEnding(ctx, r.pb.OnFailure, &m.OnFailure, &m.OnFailureStep)
	}
	if o.kind == outNext {
		o = r.walkEnding(ctx, r.pb.Finally, &m.Finally, &m.FinallyStep)
	}
	switch o.kind {
	case outWait:
		return r.wait(o.waiting)
	case outInterrupt:
		return r.interrupted()
	case outAbort:
		return nil, o.err
	}
	return r.finish()
}

// A frameWalk is what differs between the walks of the run's frames:
// its main steps, an ending section, a for_each item. walkFrame is the one
// loop that walks them all; a frameWalk says where its frame stands and
// what an outcome that ends the frame means for it.
type frameWalk struct {
	f *frame
	// at is the step the frame runs next, "" once it is over: the run's
	// current step, an ending section's mark, an item's current step.
	at *string
	// ctx is the context the frame's steps run in, when it is not the
	// walk's: the main steps' holds the run's wall-clock cap, and timeout
	// says how the cap ran out.
	ctx     context.Context
	timeout string
	// before, when set, is called before each step, and may stop the
	// walk there with an outcome: an item stops once the run decided to
	// end, and gives up its slot at its for_each's release_slot step.
	before func(s *lang.Step) (outcome, bool)
	// end applies an outcome that ends the frame (next "", finish, fail
	// or trip) to it, and says whether the walk commits the step that
	// ended it: an item's scheduler commits the item's end itself.
	end func(o outcome) (commit bool)
}

// walkFrame runs w's frame from the step it stands at until the frame
// ends, and returns the outcome that ended it; an outcome that stops the
// whole walk (wait, interrupt, abort, an item's requeue) comes back
// without being applied. Every step but the one that ends an item is
// committed before the next starts.
func (r *run) walkFrame(ctx context.Context, w frameWalk) outcome {
	sctx := ctx
	if w.ctx != nil {
		sctx = w.ctx
	}
	for *w.at != "" {
		s := r.pb.Step(*w.at)
		if s == nil {
			return abort(fmt.Errorf("state names step %q, which the playbook does not have", *w.at))
		}
		if w.before != nil {
			if o, stop := w.before(s); stop {
				return o
			}
		}
		o := r.step(sctx, w.f, s)
		if o.kind == outInterrupt && ctx.Err() == nil && sctx.Err() != nil {
			// The frame's wall clock ran out, not the user's patience.
			o = r.tripped(w.f, s, &trip{w.timeout, agent.KindTimeout}, s.Name)
		}
		commit := true
		switch o.kind {
		case outNext:
			*w.at = o.next
			if o.next == "" {
				commit = w.end(o)
			}
		case outFinish, outFail, outTrip:
			commit = w.end(o)
		case outWait, outInterrupt, outAbort, outRequeue:
			return o
		default:
			return abort(fmt.Errorf("internal error: step %q came to %s", s.Name, o.kind))
		}
		if commit {
			if err := r.commit(w.f, s, true); err != nil {
				return abort(err)
			}
		}
		if *w.at == "" || o.kind != outNext {
			return o
		}
	}
	return goTo("")
}

// walkMain runs the main steps from the current one and applies each
// step's outcome to the run. It returns outNext when the main steps are
// over, however the run ended; anything else stops the walk.
func (r *run) walkMain(ctx context.Context) outcome {
	m := &r.st.Meta
	if m.Status != StatusRunning {
		return goTo("")
	}
	w := frameWalk{f: r.top(), at: &m.CurrentStep, end: func(o outcome) bool {
		switch o.kind {
		case outFinish:
			m.Status, m.Reason, m.CurrentStep = o.status, o.reason, ""
		case outFail, outTrip:
			m.Status, m.Recommendation, m.Reason, m.CurrentStep = StatusFailed, o.recommendation, o.reason, o.next
			m.ErrorKind = o.errorKind
		}
		return true
	}}
	// The run's wall-clock cap counts time already spent before a resume.
	if l := r.pb.Limits; l != nil && l.Timeout > 0 {
		var cancel context.CancelFunc
		w.ctx, cancel = r.host.withTimeout(ctx, l.Timeout-r.elapsed())
		defer cancel()
		w.timeout = fmt.Sprintf("limits.timeout: the run took longer than %s", l.Timeout)
	}
	if o := r.walkFrame(ctx, w); o.stopsWalk() {
		return o
	}
	if m.Status == StatusRunning {
		m.Status = StatusCompleted
	}
	return goTo("")
}

// walkEnding runs the steps of an ending section once, in order: the
// on_failure steps of a failed run, then the finally steps of every run
// that ended. begun and next are the section's marks in Meta. The steps
// see the ending as run.status, run.recommendation and run.reason; their
// own failures, finishes and trips end the section but do not change the
// run's outcome.
func (r *run) walkEnding(ctx context.Context, steps []*lang.Step, begun *bool, next *string) outcome {
	if len(steps) == 0 {
		return goTo("")
	}
	if !*begun {
		*begun = true
		*next = steps[0].Name
		// On disk before the first of them runs, so that a crash here
		// leaves a run that resume continues in this section.
		if err := r.commit(nil, nil, true); err != nil {
			return abort(err)
		}
	}
	w := frameWalk{f: r.top(), at: next, end: func(outcome) bool {
		*next = ""
		return true
	}}
	if o := r.walkFrame(ctx, w); o.stopsWalk() {
		return o
	}
	return goTo("")
}

// wait checkpoints a run paused for a human decision.
func (r *run) wait(w *Waiting) (*Result, error) {
	// A run that failed and waits in its on_failure steps stays failed,
	// one that ended and waits in its finally steps keeps its status;
	// resume continues them.
	if !r.st.Meta.OnFailure && !r.st.Meta.Finally {
		r.st.Meta.Status = StatusWaiting
	}
	r.st.Waiting = w
	msg := "waiting for a decision"
	if w != nil {
		msg = w.Reason()
	}
	r.event(Event{Type: EventRunWaiting, Step: r.st.Meta.CurrentStep, Message: msg})
	if err := r.snapshot(); err != nil {
		return nil, err
	}
	return &Result{RunID: r.st.Meta.RunID, Dir: r.dir.path, Status: StatusWaiting, Reason: msg, Waiting: w, OutputJSON: json.RawMessage("{}"), Metrics: r.st.Metrics}, nil
}

// interrupted checkpoints a run stopped by its context.
func (r *run) interrupted() (*Result, error) {
	// A run interrupted in its on_failure or finally steps has already
	// ended; it keeps its status, and resume continues those steps.
	if !r.st.Meta.OnFailure && !r.st.Meta.Finally {
		r.st.Meta.Status = StatusInterrupted
	}
	r.event(Event{Type: EventRunInterrupted, Step: r.st.Meta.CurrentStep, Message: "interrupted; the run can be resumed", Details: r.runDetails()})
	if err := r.snapshot(); err != nil {
		return nil, err
	}
	return &Result{RunID: r.st.Meta.RunID, Dir: r.dir.path, Status: StatusInterrupted, OutputJSON: json.RawMessage("{}"), Metrics: r.st.Metrics}, ErrInterrupted
}

// unrunSteps lists the steps that expr reads, itself or through the
// locals it reads, and that have not completed.
func (r *run) unrunSteps(expr hcl.Expression, seen map[string]bool) []string {
	var out []string
	for _, tr := range expr.Variables() {
		if len(tr) < 2 {
			continue
		}
		attr, ok := tr[1].(hcl.TraverseAttr)
		if !ok {
			continue
		}
		switch tr.RootName() {
		case lang.RootSteps:
			if rec := r.st.Steps[attr.Name]; (rec == nil || rec.Status != StepCompleted) && !slices.Contains(out, attr.Name) {
				out = append(out, attr.Name)
			}
		case lang.RootLocal:
			if seen[attr.Name] {
				continue
			}
			seen[attr.Name] = true
			for _, lv := range r.pb.Locals {
				if lv.Name == attr.Name {
					out = append(out, r.unrunSteps(lv.Expr, seen)...)
				}
			}
		}
	}
	return out
}

// finish evaluates the output block and writes the final state and
// output.json.
func (r *run) finish() (*Result, error) {
	res := &Result{
		RunID: r.st.Meta.RunID, Dir: r.dir.path, Status: r.st.Meta.Status,
		Recommendation: r.st.Meta.Recommendation, Reason: r.st.Meta.Reason, ErrorKind: r.st.Meta.ErrorKind,
		OutputJSON: json.RawMessage("{}"),
	}
	if r.pb.Output != nil {
		ctx := r.evalCtx(nil, nil)
		vals := map[string]cty.Value{}
		var errs []error
		var nulls, unrun []string
		for _, a := range r.pb.Output.Attrs {
			v, diags := a.Expr.Value(ctx)
			if diags.HasErrors() {
				v = cty.NullVal(cty.DynamicPseudoType)
				// A run that ended early leaves steps the output reads
				// without a value: null, as for a step's own output, and
				// no error that says so one expression at a time.
				if missing := r.unrunSteps(a.Expr, map[string]bool{}); r.st.Meta.Status != StatusCompleted && len(missing) > 0 {
					nulls = append(nulls, a.Name)
					for _, m := range missing {
						if !slices.Contains(unrun, m) {
							unrun = append(unrun, m)
						}
					}
				} else {
					errs = append(errs, fmt.Errorf("output %q: %w", a.Name, diagsError(diags)))
				}
			}
			vals[a.Name] = v
		}
		if len(nulls) > 0 {
			slices.Sort(unrun)
			r.event(Event{Type: EventLog, Message: fmt.Sprintf("output %s: null, as the run ended before %s ran", strings.Join(nulls, ", "), strings.Join(unrun, ", "))})
		}
		res.Output = cty.ObjectVal(vals)
		b, err := builtins.CtyToJSON(res.Output)
		if err != nil {
			errs = append(errs, fmt.Errorf("output: %w", err))
		} else {
			res.OutputJSON = b
		}
		if err := errors.Join(errs...); err != nil {
			r.event(Event{Type: EventLog, Message: "output incomplete: " + err.Error()})
		}
	}
	if t := r.caps.outerTrip; t != nil && r.st.Meta.Status == StatusFailed {
		res.CapTrip = t.msg
	}
	res.Spent = r.caps.spent()
	res.OutputJSON = r.redact.Bytes(res.OutputJSON)
	res.Reason = r.redact.String(res.Reason)
	r.st.Output = res.OutputJSON
	switch r.st.Meta.Status {
	case StatusCompleted:
		r.event(Event{Type: EventRunCompleted, Message: "run completed", Details: r.runDetails()})
	case StatusFailed:
		r.event(Event{Type: EventRunFailed, Message: failMessage(r.st.Meta), Details: r.runDetails()})
	default:
		r.event(Event{Type: EventRunCompleted, Message: "run finished: " + r.st.Meta.Status, Details: r.runDetails()})
	}
	// The final state is written whole, so state.json alone tells how the
	// run ended.
	if err := r.snapshot(); err != nil {
		return nil, err
	}
	if r.archiveDocuments() {
		// The archiving's events are part of how the run ended.
		if err := r.snapshot(); err != nil {
			return nil, err
		}
	}
	r.dir.ended = true
	out := append(append([]byte(nil), res.OutputJSON...), '\n')
	if err := os.WriteFile(filepath.Join(r.dir.path, "output.json"), out, 0o644); err != nil {
		return nil, fmt.Errorf("write output: %w", err)
	}
	res.Metrics = r.st.Metrics
	return res, nil
}
