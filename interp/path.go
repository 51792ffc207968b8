package interp

// Path is a run's way through its playbook, read from its events: which
// steps each frame (the run, or a for_each item) visited in order, which
// gate rule each visit chose, and each step's and item's end in the order
// they came. It is an Observer, so it can follow a run as it goes, and
// PathOf reads it from a recorded event log; apl graph --path draws it,
// and a run on Temporal returns its Ends.
type Path struct {
	// Frames lists each frame's visits in order, by item key; the run's
	// own frame is "". FrameOrder is the order the frames began.
	Frames     map[string][]*Visit
	FrameOrder []string
	// Ends lists each step's and item's end as it came, "review
	// step_completed", "fix[a] item_failed": what a run on Temporal
	// reports as its path.
	Ends []string
}

// Visit is one step of a frame: run (with the gate rule it chose, if any)
// or skipped.
type Visit struct {
	Step    string
	Skipped bool
	// Status is StepRunning, StepCompleted, StepFailed or StepSkipped.
	Status string
	Rule   string // the gate rule chosen; "" for none
	// Exhausted says the rule's cap was used up: its on_exhausted ran.
	Exhausted bool
}

// PathOf reads a run's path from its event log.
func PathOf(events []Event) *Path {
	p := &Path{}
	for _, e := range events {
		p.Event(e)
	}
	return p
}

// Event adds what e says of the run's path. A step that starts again with
// no gate decision in between (a retry, a resumed run) is one visit; a
// step_reused event is a visit of an earlier session, already in the log.
func (p *Path) Event(e Event) {
	p.Ends = append(p.Ends, PathEntry(e)...)
	if e.Step == "" {
		return
	}
	frame := e.Item
	l := p.Last(frame)
	switch e.Type {
	case EventStepStarted:
		if l != nil && l.Step == e.Step && !l.Skipped && l.Rule == "" {
			l.Status = StepRunning
			return
		}
		p.add(frame, &Visit{Step: e.Step, Status: StepRunning})
	case EventStepSkipped:
		p.add(frame, &Visit{Step: e.Step, Skipped: true, Status: StepSkipped})
	case EventStepCompleted, EventStepFailed:
		if l != nil && l.Step == e.Step {
			l.Status = map[string]string{EventStepCompleted: StepCompleted, EventStepFailed: StepFailed}[e.Type]
		}
	case EventGateDecision:
		if l != nil && l.Step == e.Step {
			l.Rule, _ = e.Details["rule"].(string)
		}
	case EventCapExhausted:
		if l != nil && l.Step == e.Step {
			l.Exhausted = true
		}
	}
}

// Last is the last visit of frame, or nil.
func (p *Path) Last(frame string) *Visit {
	vs := p.Frames[frame]
	if len(vs) == 0 {
		return nil
	}
	return vs[len(vs)-1]
}

func (p *Path) add(frame string, v *Visit) {
	if p.Frames == nil {
		p.Frames = map[string][]*Visit{}
	}
	if _, ok := p.Frames[frame]; !ok {
		p.FrameOrder = append(p.FrameOrder, frame)
	}
	p.Frames[frame] = append(p.Frames[frame], v)
}

// PathEntry is what an event adds to a run's Ends: a step's or an item's
// end, as "STEP[ITEM] TYPE".
func PathEntry(e Event) []string {
	switch e.Type {
	case EventStepCompleted, EventStepFailed, EventStepSkipped,
		EventItemCompleted, EventItemFailed, EventItemBlocked:
		return []string{Waiting{Step: e.Step, Item: e.Item}.Key() + " " + e.Type}
	}
	return nil
}
