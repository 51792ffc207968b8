package interp

import (
	"encoding/json"

	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// frame is the scope a step runs in: the run itself, or one item of a
// for_each step. Steps read and write their records, outputs and loop
// counters through it, so the same code runs both.
type frame struct {
	recs    map[string]*StepRecord
	outputs map[string]cty.Value
	caps    map[string]int
	item    *item // nil at the top level
	// locals are the current step's own locals, evaluated when it
	// started; cty.NilVal when it has none. They are not in the state:
	// a resumed step starts again and evaluates them again.
	locals cty.Value
	// step is the step whose locals these are: its late locals
	// (lang.Local.Late) are derived when read.
	step *lang.Step
}

// item is one item of a for_each step while the run holds it in memory.
type item struct {
	parent *lang.Step
	rec    *ItemRecord
	value  cty.Value
	// released is set by the item's walk when it gave back its slot
	// (release_slot); the scheduler reads it once the walk reported so.
	released bool
}

// ItemRecord is what the run knows about one item of a for_each step.
type ItemRecord struct {
	Key       string   `json:"key"`
	Index     int      `json:"index"`
	DependsOn []string `json:"depends_on,omitempty"`
	Priority  float64  `json:"priority"`
	// Limits holds the item's value of each limit's key.
	Limits         map[string]string      `json:"limits,omitempty"`
	Status         string                 `json:"status"` // pending, running, completed, failed, blocked
	Current        string                 `json:"current_step,omitempty"`
	Error          string                 `json:"error,omitempty"`
	Recommendation string                 `json:"recommendation,omitempty"`
	Value          json.RawMessage        `json:"value,omitempty"` // left out of journal entries once written
	Steps          map[string]*StepRecord `json:"steps"`
	Caps           map[string]int         `json:"caps"`
	// Requeues counts the times a gate's requeue sent the item back to
	// the queue; item_attempt is Requeues + 1.
	Requeues int `json:"requeues,omitempty"`
	// Queued orders requeued items behind the items that never started,
	// first requeued first; 0 for an item never requeued.
	Queued int `json:"queued,omitempty"`
}

// Item statuses beyond the step statuses.
const ItemBlocked = "blocked"

// top is the run's own frame.
func (r *run) top() *frame {
	return &frame{recs: r.st.Steps, outputs: r.outputs, caps: r.st.Caps}
}

func (f *frame) key() string {
	if f.item == nil {
		return ""
	}
	return f.item.rec.Key
}
