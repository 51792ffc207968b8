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

// AskerHow is an Asker that says how its answers come, for the event
// log and the trace (an Asker that is not one answers "at the terminal").
type AskerHow interface {
	Asker
	How() string
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
		answer, how = v, "answer given to resume"
	} else if v, ok := r.opts.Answers[s.Name]; ok {
		answer, how = v, "answer given to resume"
	} else if r.opts.Asker != nil {
		r.host.block(func() { answer, err = r.opts.Asker.Ask(ctx, q) })
		if errors.Is(err, ErrNoAnswer) {
			return cty.NilVal, &Waiting{Step: s.Name, Item: q.Item, Question: q.Question, Options: q.Options, Text: q.Text}, nil
		}
		if err != nil {
			return cty.NilVal, nil, err
		}
		how = "answered at the terminal"
		if h, ok := r.opts.Asker.(AskerHow); ok {
			how = h.How()
		}
	} else {
		return cty.NilVal, &Waiting{Step: s.Name, Item: q.Item, Question: q.Question, Options: q.Options, Text: q.Text}, nil
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
