package temporal

import (
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/apl-lang/apl/interp"
	"go.temporal.io/sdk/workflow"
)

// The workflow keeps a run's latest events in memory, not in its history,
// for clients that follow the run (QueryEvents): at most eventsKept of
// them, each message cut to messageMax bytes, and a page of a query at
// most eventsPage.
const (
	eventsKept = 1000
	messageMax = 4 << 10
	eventsPage = 200
)

// Events is a page of a run's events (QueryEvents).
type Events struct {
	// Next is the index of the event after the last one here: the From
	// of the next query.
	Next int
	// Lost is how many events between the From asked for and the first
	// one here the workflow no longer keeps.
	Lost   int
	Events []interp.Event
	// Waiting are the questions the run waits on now (QueryWaiting).
	Waiting []Question
	// Children are the workflows of the run's sub-runs that run now,
	// where questions of its sub-playbooks wait.
	Children []string
}

// eventLog is the workflow's interp.Observer that keeps events for
// QueryEvents. A replay rebuilds it: it holds nothing the history does not
// determine.
type eventLog struct {
	first  int // the index of events[0]
	events []interp.Event
	// children are the workflow IDs of the sub-runs running now.
	children map[string]bool
}

// setQueries answers the workflow's queries from the event log and the
// asker.
func setQueries(ctx workflow.Context, l *eventLog, a *signalAsker) error {
	if err := workflow.SetQueryHandler(ctx, QueryWaiting, a.waiting); err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, QueryEvents, func(from int) (Events, error) {
		p := l.page(from)
		p.Waiting, _ = a.waiting()
		p.Children = slices.Sorted(maps.Keys(l.children))
		return p, nil
	})
}

func (l *eventLog) Event(e interp.Event) {
	if len(e.Message) > messageMax {
		cut := messageMax
		for cut > 0 && !utf8.RuneStart(e.Message[cut]) {
			cut--
		}
		e.Message = e.Message[:cut] + " ..."
	}
	if _, ok := e.Details[interp.DetailArtifacts]; ok {
		// Files in the worker's temporary run directory: nothing a
		// client can open.
		e.Details = maps.Clone(e.Details)
		delete(e.Details, interp.DetailArtifacts)
	}
	l.events = append(l.events, e)
	if n := len(l.events) - eventsKept; n >= eventsKept/2 {
		// Let go of the oldest in batches, not one by one.
		l.events = append([]interp.Event(nil), l.events[n:]...)
		l.first += n
	}
}

// page is QueryEvents' handler: the events from index from on.
func (l *eventLog) page(from int) Events {
	end := l.first + len(l.events)
	p := Events{Next: min(max(from, 0), end)}
	if p.Next < l.first {
		p.Lost, p.Next = l.first-p.Next, l.first
	}
	i := p.Next - l.first
	j := min(i+eventsPage, len(l.events))
	p.Events = l.events[i:j]
	p.Next += j - i
	return p
}

// intDetails are the Event.Details that are ints; a client that gets
// events as JSON gets numbers as float64s, and puts these back.
var intDetails = []string{interp.DetailTokens, interp.DetailRunTokens, interp.DetailAgentCalls, interp.DetailExitCode, "items", "attempt", "max"}

// fromWire puts back the types of an event's details that JSON lost, so
// a client's printer reads them as it reads a local run's.
func fromWire(e *interp.Event) {
	for _, k := range intDetails {
		if f, ok := e.Details[k].(float64); ok && f == float64(int(f)) {
			e.Details[k] = int(f)
		}
	}
	for k, v := range e.Details {
		list, ok := v.([]any)
		if !ok {
			continue
		}
		strs := make([]string, 0, len(list))
		for _, x := range list {
			s, ok := x.(string)
			if !ok {
				break
			}
			strs = append(strs, s)
		}
		if len(strs) == len(list) {
			e.Details[k] = strs
		}
	}
}
