package interp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// Asker puts a question to a person at a terminal and returns the option
// they chose. The CLI provides one when it runs on a terminal.
type Asker interface {
	Ask(ctx context.Context, q Question) (string, error)
}

// AskerHow is an Asker that says how the answer to q came, once Ask
// has returned it, for the event log and the trace (an Asker that is not
// one answers AnsweredAtTerminal).
type AskerHow interface {
	Asker
	How(q Question) string
}

// How an answer came, as the event log and the trace say it.
const (
	AnsweredAtTerminal  = "answered at the terminal"
	AnswerGivenToResume = "answer given to resume"
)

// PersonAsker is an Asker whose Ask waits, as long as it takes, for a
// person to answer: at a terminal, or on an engine until an answer is
// sent to the run. While such a question is open, no new item starts in
// the for_each steps around the step that asks, in this run and in the
// runs that run it; the items under way go on. An Asker that answers at
// once or not at all (a test's mocks, a dry run, ErrNoAnswer) is not
// one: it would open a window in which the order of the items depends
// on timing.
type PersonAsker interface {
	Asker
	// WaitsForPerson reports whether Ask waits for a person.
	WaitsForPerson() bool
}

// AskRelay is an Engine whose sub-runs run apart from the run that runs
// them (a child workflow). A sub-run's question that waits for a person
// holds the for_each steps around the step that runs it: the sub-run
// tells the run above when the question opens and when it closes
// (AskAbove), and the engine of the run above calls SubRun.Hold then.
type AskRelay interface {
	// AskAbove tells the run above, if any, that a question opened
	// (open) or closed in this run or one below it; it returns once that
	// run has it.
	AskAbove(open bool)
}

// ErrNoAnswer is what an Asker returns for a question it has no answer
// to: the run waits, as it does without an Asker (apl test's asker, which
// answers only the ask steps a test mocks).
var ErrNoAnswer = errors.New("no answer")

// Question is a decision a step needs from a person: a choice among
// Options or, with Text, an answer typed in words.
type Question struct {
	Step     string
	Item     string
	Question string
	Options  []string
	Text     bool
	Default  string
	// Example is a text answer the step's returns accepts ("0" for a
	// number), which a dry run gives a text question without a default.
	Example string
}

// Waiting is what a run that waits on q says of it.
func (q Question) Waiting() Waiting {
	return Waiting{Step: q.Step, Item: q.Item, Question: q.Question, Options: q.Options, Text: q.Text, Default: q.Default}
}

// Asked is the question w waits on, to ask again (a client at a
// terminal).
func (w Waiting) Asked() Question {
	return Question{Step: w.Step, Item: w.Item, Question: w.Question, Options: w.Options, Text: w.Text, Default: w.Default}
}

// askAction gets a human decision: a given answer (apl resume --answer
// STEP=CHOICE, or STEP[ITEM]=CHOICE inside a for_each), else the Asker,
// else the run pauses as waiting. The choice is the step's output and is
// recorded in the event log and the trace.
func (r *run) askAction(ctx context.Context, f *frame, s *lang.Step, a *lang.Ask) outcome {
	out, w, err := r.ask(ctx, f, s, a)
	if w != nil {
		return waitFor(w)
	}
	return done(out, err)
}

// ask gets the decision, or says what the run must wait for.
func (r *run) ask(ctx context.Context, f *frame, s *lang.Step, a *lang.Ask) (cty.Value, *Waiting, error) {
	ectx := r.evalCtx(f, nil, a.Question, a.Options, a.Default)
	q := Question{Step: s.Name, Item: f.key(), Text: a.Text}
	if a.Text {
		q.Example = "example"
		if ex, err := toString(Example(s.Returns)); err == nil && s.Returns.IsPrimitiveType() {
			q.Example = ex
		}
	}
	var err error
	if q.Question, err = evalString(a.Question, ectx); err != nil {
		return cty.NilVal, nil, err
	}
	if !a.Text {
		ov, diags := a.Options.Value(ectx)
		if diags.HasErrors() {
			return cty.NilVal, nil, diagsError(diags)
		}
		if q.Options, err = stringList(ov); err != nil || len(q.Options) == 0 {
			return cty.NilVal, nil, fmt.Errorf("%s: options must be a non-empty list of strings", a.Options.Range())
		}
	}
	if a.Default != nil {
		if q.Default, err = evalString(a.Default, ectx); err != nil {
			return cty.NilVal, nil, err
		}
		if !a.Text && !slices.Contains(q.Options, q.Default) {
			return cty.NilVal, nil, fmt.Errorf("%s: default %q is not one of the options: %s", a.Default.Range(), q.Default, strings.Join(q.Options, ", "))
		}
	}
	answer, how := "", ""
	start := r.now()
	if v, ok := r.opts.Answers[StepKey(s.Name, q.Item)]; ok && q.Item != "" {
		answer, how = v, AnswerGivenToResume
	} else if v, ok := r.opts.Answers[s.Name]; ok {
		answer, how = v, AnswerGivenToResume
	} else if r.opts.Asker != nil {
		var letGo func()
		if p, ok := r.opts.Asker.(PersonAsker); ok && p.WaitsForPerson() {
			letGo = r.holdItems(ctx)
		}
		r.host.block(func() { answer, err = r.opts.Asker.Ask(ctx, q) })
		if errors.Is(err, ErrNoAnswer) {
			// The item ends waiting, and its for_each steps with it:
			// they stay held.
			w := q.Waiting()
			return cty.NilVal, &w, nil
		}
		if letGo != nil {
			// Once the decision is recorded: an item that starts then
			// comes after it.
			defer letGo()
		}
		if err != nil {
			return cty.NilVal, nil, err
		}
		how = AnsweredAtTerminal
		if h, ok := r.opts.Asker.(AskerHow); ok {
			how = h.How(q)
		}
	} else {
		w := q.Waiting()
		return cty.NilVal, &w, nil
	}
	if !a.Text && !slices.Contains(q.Options, answer) {
		return cty.NilVal, nil, fmt.Errorf("answer %q is not one of the options: %s", answer, strings.Join(q.Options, ", "))
	}
	r.trace(Span{Step: s.Name, Item: q.Item, Action: "decision", InputSummary: q.Question, OutputSummary: answer + " (" + how + ")"}, start, nil)
	details := map[string]any{"question": q.Question, "choice": answer, "options": q.Options}
	if a.Text {
		details = map[string]any{"question": q.Question, "answer": answer}
	}
	r.event(r.stepEvent(f, s, Event{Type: EventHumanDecision, Message: fmt.Sprintf("%s: %s (%s)", q.Question, answer, how),
		Details: details}))
	return cty.StringVal(answer), nil, nil
}

// Key names the question for apl resume --answer KEY=CHOICE: STEP, or
// STEP[ITEM] inside a for_each.
func (w Waiting) Key() string { return StepKey(w.Step, w.Item) }

// StepKey names step as it runs for a for_each item: STEP[ITEM], or STEP
// outside one (item ""). Answers, progress lines and a run's path name
// steps so.
func StepKey(step, item string) string {
	if item != "" {
		return step + "[" + item + "]"
	}
	return step
}

// Reason is a waiting run's reason: the question and what it takes.
func (w Waiting) Reason() string {
	return fmt.Sprintf("waiting for a decision at step %s: %s (%s)", w.Key(), w.Question, w.choices())
}

// choices says what answers a waiting question takes, for messages.
func (w Waiting) choices() string {
	if w.Text {
		return "a typed answer"
	}
	return "options: " + strings.Join(w.Options, ", ")
}

// askLink is a for_each step around the step a walk runs, innermost
// first: an item's context carries its scheduler's and those around it
// (withAskLink), through which a question that waits for a person holds
// them (holdItems).
type askLink struct {
	sc *scheduler
	// enter, set on a link that only crosses into the run that runs this
	// one in this process (a sub-run's), runs fn in that run's turn: the
	// links above it are that run's.
	enter func(fn func())
	up    *askLink
}

type askKey struct{}

// withAskLink is ctx with l inside the links ctx carries.
func withAskLink(ctx context.Context, l *askLink) context.Context {
	l.up, _ = ctx.Value(askKey{}).(*askLink)
	return context.WithValue(ctx, askKey{}, l)
}

// eachScheduler calls fn for the scheduler of every link from l up, each
// in its run's turn.
func eachScheduler(l *askLink, fn func(sc *scheduler)) {
	for ; l != nil; l = l.up {
		if l.enter != nil {
			up := l.up
			l.enter(func() { eachScheduler(up, fn) })
			return
		}
		fn(l.sc)
	}
}

// holdItems holds the for_each steps around the step that runs in ctx,
// in this run and the runs above it, while a person is asked: none starts
// a new item until letGo is called. Those that held an item back are
// woken then. A slot freed before (release_slot) stays free meanwhile, and
// is taken after the answer.
func (r *run) holdItems(ctx context.Context) (letGo func()) {
	l, _ := ctx.Value(askKey{}).(*askLink)
	eachScheduler(l, func(sc *scheduler) { sc.asks++ })
	relay, _ := r.opts.Engine.(AskRelay)
	if relay != nil {
		r.host.block(func() { relay.AskAbove(true) })
	}
	return func() {
		eachScheduler(l, (*scheduler).letGo)
		if relay != nil {
			r.host.block(func() { relay.AskAbove(false) })
		}
	}
}

// letGo ends a question's hold, and wakes the scheduler if it held an
// item back and no other question holds it.
func (sc *scheduler) letGo() {
	sc.asks--
	if sc.asks == 0 && sc.heldBack {
		sc.heldBack = false
		sc.r.host.block(func() { sc.done.Send(itemDone{wake: true}) })
	}
}

// crossAskLinks is a sub-run's context in this process: the links of
// this run's for_each steps around it, entered in this run's turn (the
// sub-run's walk has its own).
func (r *run) crossAskLinks(ctx context.Context) context.Context {
	h, ok := r.host.(*localHost)
	if !ok || ctx.Value(askKey{}) == nil {
		return ctx
	}
	return withAskLink(ctx, &askLink{enter: h.enter})
}
