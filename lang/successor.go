package lang

// Exit says how control leaves a visit of a step along a Successor.
type Exit int

const (
	// ExitSkip: the step's when is false, so nothing runs and control goes
	// to its next step.
	ExitSkip Exit = iota
	// ExitBody: a for_each step runs its body once per item; To is the
	// body's first step. Control leaves the step itself by its other
	// successors once every item is done.
	ExitBody
	// ExitNext: the step has no gate, or no rule of its gate matched and
	// it has no otherwise; control goes to its next step.
	ExitNext
	// ExitRule: a gate rule (or the otherwise block) chose; its Outcome
	// says where control goes.
	ExitRule
	// ExitExhausted: a capped rule chose once its goto was taken max
	// times, so its on_exhausted outcome runs instead.
	ExitExhausted
	// ExitFailure: the step's action (or an item of its body) failed and
	// it does not continue on error: the run, or the item, fails.
	ExitFailure
)

// End says where a successor with no next step leaves its section.
type End int

const (
	EndNone    End = iota // the successor goes to a step (To)
	EndSection            // past the section's last step: it completes
	EndFinish             // a gate's finish: the section ends with that status
	EndFail               // a gate's fail: the run (or item) fails
	EndFailure            // the step failed: the run (or item) fails
)

// Successor is one way control can leave a visit of a step: where it goes
// and why. Every reader of the step graph (the cycle and reachability
// checks, the worst-path planner, the drawings) takes a step's ways out
// from Successors, so that they agree on them.
type Successor struct {
	Exit Exit
	// Rule is the gate rule that chose, for ExitRule and ExitExhausted.
	Rule *Rule
	// Outcome is what runs: the rule's outcome, or its on_exhausted one.
	Outcome *Outcome
	// To is the step control goes to; nil when the section ends (End).
	To  *Step
	End End
}

// Fails reports whether the run (or the item) fails along s.
func (s Successor) Fails() bool { return s.End == EndFail || s.End == EndFailure }

// Successors lists every way control can leave a visit of s, in the order
// a reader meets them: the skip, the for_each body, the gate's rules in the
// order they are tried (each followed by its on_exhausted outcome), the
// way out when no rule matches, and last the step's own failure.
func (s *Step) Successors() []Successor {
	var out []Successor
	if s.When != nil {
		out = append(out, s.follow(Successor{Exit: ExitSkip}))
	}
	if s.ForEach != nil && len(s.ForEach.Steps) > 0 {
		out = append(out, Successor{Exit: ExitBody, To: s.ForEach.Steps[0]})
	}
	if s.Gate != nil {
		for _, r := range s.Gate.Tried() {
			o := r.Outcome
			if o == nil {
				continue
			}
			out = append(out, s.follow(Successor{Exit: ExitRule, Rule: r, Outcome: o}))
			if o.Exhausted != nil {
				out = append(out, s.follow(Successor{Exit: ExitExhausted, Rule: r, Outcome: o.Exhausted}))
			}
		}
	}
	if s.Gate == nil || s.Gate.Otherwise == nil {
		out = append(out, s.follow(Successor{Exit: ExitNext}))
	}
	// A for_each step fails when an item does, unless on_item_failure =
	// "continue" leaves the counts to its gate.
	fails := s.Action != nil || s.ForEach != nil && s.ForEach.OnItemFailure != ItemFailContinue
	if fails && !s.ContinueOnError {
		out = append(out, Successor{Exit: ExitFailure, End: EndFailure})
	}
	return out
}

// follow sets where x goes from s: its outcome's goto, finish or fail, else
// s's next step, else the end of the section.
func (s *Step) follow(x Successor) Successor {
	o := x.Outcome
	switch {
	case o != nil && o.Goto != nil:
		x.To = o.Goto
	case o != nil && o.Finish != nil:
		x.End = EndFinish
	case o != nil && o.Fail != nil:
		x.End = EndFail
	case s.Next != nil:
		x.To = s.Next
	default:
		x.End = EndSection
	}
	return x
}

// Tried lists the gate's rules in the order they are tried: its rules,
// then its otherwise block.
func (g *Gate) Tried() []*Rule {
	rules := append([]*Rule(nil), g.Rules...)
	if g.Otherwise != nil {
		rules = append(rules, g.Otherwise)
	}
	return rules
}
