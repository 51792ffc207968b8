package interp

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apl-lang/apl/builtins"
)

// The state file and its journal are written after every transition, so
// their encoding is on every step's path: encoding/json's reflection was
// most of what a journal line cost. stateEncoder writes the same bytes
// json.Marshal writes for State and journalEntry (TestStateEncoding and
// FuzzStateEncoding compare them), field by field. Values of a shape
// it does not know (an event detail of another type, the settings) go
// through json.Marshal, which is what they would have met anyway.
//
// Byte for byte, not just the same JSON: the redactor looks for each
// secret in the spelling encoding/json gives it, <, > and & escaped.
type stateEncoder struct {
	b   []byte
	err error
	// keys is scratch space for the sorted keys of the maps being
	// encoded, used as a stack (keysOf, drop): a line's maps are small,
	// and a slice each was most of what encoding one allocated.
	keys []string
}

// str appends s as encoding/json does: as builtins.AppendJSONString, and
// <, > and & escaped as \u003c, \u003e and \u0026.
func (e *stateEncoder) str(s string) {
	start := len(e.b)
	e.b = builtins.AppendJSONString(e.b, s)
	if strings.ContainsAny(s, "<>&") {
		e.b = escapeHTML(e.b, start)
	}
}

// escapeHTML escapes <, > and & in b[from:], which is JSON: none of them
// is ever part of an escape sequence, so each stands for itself.
func escapeHTML(b []byte, from int) []byte {
	const hex = "0123456789abcdef"
	tail := slices.Clone(b[from:])
	b = b[:from]
	for _, c := range tail {
		if c == '<' || c == '>' || c == '&' {
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			continue
		}
		b = append(b, c)
	}
	return b
}

// key begins a field other than an object's first: ,"k":
func (e *stateEncoder) key(k string) {
	e.b = append(e.b, ',', '"')
	e.b = append(e.b, k...) // apl's own field names: nothing to escape
	e.b = append(e.b, '"', ':')
}

func (e *stateEncoder) strField(k, v string)     { e.key(k); e.str(v) }
func (e *stateEncoder) intField(k string, v int) { e.key(k); e.int(v) }
func (e *stateEncoder) int(v int)                { e.b = strconv.AppendInt(e.b, int64(v), 10) }

// float appends f as encoding/json does (ES6 number formatting).
func (e *stateEncoder) float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		e.fail(errors.New("json: unsupported value: " + strconv.FormatFloat(f, 'g', -1, 64)))
		e.b = append(e.b, '0')
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	e.b = strconv.AppendFloat(e.b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9
		if n := len(e.b); n >= 4 && e.b[n-4] == 'e' && e.b[n-3] == '-' && e.b[n-2] == '0' {
			e.b[n-2] = e.b[n-1]
			e.b = e.b[:n-1]
		}
	}
}

func (e *stateEncoder) floatPtr(f *float64) {
	if f == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.float(*f)
}

func (e *stateEncoder) time(t time.Time) {
	if y := t.Year(); y < 0 || y > 9999 {
		e.marshal(t) // encoding/json's error for it
		return
	}
	e.b = append(e.b, '"')
	e.b = t.AppendFormat(e.b, time.RFC3339Nano)
	e.b = append(e.b, '"')
}

func (e *stateEncoder) bool(v bool) {
	if v {
		e.b = append(e.b, "true"...)
	} else {
		e.b = append(e.b, "false"...)
	}
}

// raw appends a json.RawMessage as encoding/json does: compacted, with
// <, > and & escaped (as U+2028 and U+2029 are), null when nil. Most are
// apl's own compact encodings, copied as they are.
func (e *stateEncoder) raw(m json.RawMessage) {
	if m == nil {
		e.b = append(e.b, "null"...)
		return
	}
	for _, c := range m {
		switch c {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xE2: // 0xE2 begins U+2028 and U+2029
			e.marshal(m)
			return
		}
	}
	e.b = append(e.b, m...)
}

// marshal appends v as json.Marshal encodes it.
func (e *stateEncoder) marshal(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		e.fail(err)
		b = []byte("null")
	}
	e.b = append(e.b, b...)
}

func (e *stateEncoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// keysOf pushes the keys of m onto e's scratch, sorted in the order
// encoding/json writes them, and returns them; drop pops them once the
// map is written.
func keysOf[V any](e *stateEncoder, m map[string]V) []string {
	from := len(e.keys)
	for k := range m {
		e.keys = append(e.keys, k)
	}
	keys := e.keys[from:len(e.keys):len(e.keys)]
	slices.Sort(keys)
	return keys
}

func (e *stateEncoder) drop(keys []string) { e.keys = e.keys[:len(e.keys)-len(keys)] }

func (e *stateEncoder) intMap(m map[string]int) {
	if m == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '{')
	ks := keysOf(e, m)
	for i, k := range ks {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(k)
		e.b = append(e.b, ':')
		e.int(m[k])
	}
	e.drop(ks)
	e.b = append(e.b, '}')
}

func (e *stateEncoder) rawMap(m map[string]json.RawMessage) {
	if m == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '{')
	ks := keysOf(e, m)
	for i, k := range ks {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(k)
		e.b = append(e.b, ':')
		e.raw(m[k])
	}
	e.drop(ks)
	e.b = append(e.b, '}')
}

func (e *stateEncoder) strings(s []string) {
	if s == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i, v := range s {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(v)
	}
	e.b = append(e.b, ']')
}

// state appends st as json.Marshal(st) does.
func (e *stateEncoder) state(st *State) {
	e.b = append(e.b, `{"_meta":`...)
	e.meta(&st.Meta)
	e.key("steps")
	e.steps(st.Steps)
	e.key("caps")
	e.intMap(st.Caps)
	e.key("vars")
	e.rawMap(st.Vars)
	if len(st.Items) > 0 {
		e.key("items")
		e.items(st.Items, nil)
	}
	if len(st.ItemsRun) > 0 {
		e.key("items_run")
		e.intMap(st.ItemsRun)
	}
	e.key("circuit_breaker")
	e.breaker(&st.Breaker)
	if st.Waiting != nil {
		e.key("waiting")
		e.waiting(st.Waiting)
	}
	e.key("event_log")
	e.events(st.Events)
	e.key("metrics")
	e.metrics(&st.Metrics)
	if len(st.Output) > 0 {
		e.key("output")
		e.raw(st.Output)
	}
	e.b = append(e.b, '}')
}

// entry appends a journal entry as json.Marshal(j) does. An item whose
// key is in noValue is written without its value (ItemRecord.Value), as
// if it had none.
func (e *stateEncoder) entry(j *journalEntry, noValue map[[2]string]bool) {
	e.b = append(e.b, `{"seq":`...)
	e.int(j.Seq)
	if len(j.Items) > 0 {
		e.key("items")
		e.items(j.Items, noValue)
	}
	if len(j.ItemsRun) > 0 {
		e.key("items_run")
		e.intMap(j.ItemsRun)
	}
	e.key("circuit_breaker")
	e.breaker(&j.Breaker)
	if j.Waiting != nil {
		e.key("waiting")
		e.waiting(j.Waiting)
	}
	e.key("meta")
	e.meta(&j.Meta)
	if len(j.Steps) > 0 {
		e.key("steps")
		e.steps(j.Steps)
	}
	if len(j.Caps) > 0 {
		e.key("caps")
		e.intMap(j.Caps)
	}
	if len(j.Vars) > 0 {
		e.key("vars")
		e.rawMap(j.Vars)
	}
	if len(j.Events) > 0 {
		e.key("events")
		e.events(j.Events)
	}
	e.key("metrics")
	e.metrics(&j.Metrics)
	if len(j.Output) > 0 {
		e.key("output")
		e.raw(j.Output)
	}
	e.b = append(e.b, '}')
}

func (e *stateEncoder) meta(m *Meta) {
	e.b = append(e.b, `{"version":`...)
	e.int(m.Version)
	e.intField("seq", m.Seq)
	e.strField("run_id", m.RunID)
	e.strField("playbook", m.Playbook)
	e.strField("playbook_ref", m.PlaybookRef)
	e.strField("playbook_hash", m.PlaybookHash)
	if m.Mode != "" {
		e.strField("mode", m.Mode)
	}
	if len(m.AgentCommand) > 0 {
		e.key("agent_command")
		e.strings(m.AgentCommand)
	}
	if len(m.Timeouts) > 0 {
		e.key("timeouts")
		e.b = append(e.b, '{')
		ks := keysOf(e, m.Timeouts)
		for i, k := range ks {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(k)
			e.b = append(e.b, ':')
			e.str(m.Timeouts[k])
		}
		e.drop(ks)
		e.b = append(e.b, '}')
	}
	if m.AgentTimeout != "" {
		e.strField("agent_timeout", m.AgentTimeout)
	}
	e.key("inputs")
	e.rawMap(m.Inputs)
	e.strField("workdir", m.Workdir)
	e.strField("status", m.Status)
	if m.Recommendation != "" {
		e.strField("recommendation", m.Recommendation)
	}
	if m.ErrorKind != "" {
		e.strField("error_kind", m.ErrorKind)
	}
	if m.Reason != "" {
		e.strField("reason", m.Reason)
	}
	e.strField("current_step", m.CurrentStep)
	e.key("started_at")
	e.time(m.StartedAt)
	e.key("last_checkpoint")
	e.time(m.LastCheckpoint)
	if m.OnFailure {
		e.b = append(e.b, `,"on_failure":true`...)
	}
	if m.OnFailureStep != "" {
		e.strField("on_failure_step", m.OnFailureStep)
	}
	if m.Finally {
		e.b = append(e.b, `,"finally":true`...)
	}
	if m.FinallyStep != "" {
		e.strField("finally_step", m.FinallyStep)
	}
	if m.EventsArchived != 0 {
		e.intField("events_archived", m.EventsArchived)
	}
	if len(m.Documents) > 0 {
		e.key("documents")
		e.b = append(e.b, '{')
		ks := keysOf(e, m.Documents)
		for i, k := range ks {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(k)
			d := m.Documents[k]
			e.b = append(e.b, `:{"path":`...)
			e.str(d.Path)
			if d.Backup != "" {
				e.strField("backup", d.Backup)
			}
			e.b = append(e.b, '}')
		}
		e.drop(ks)
		e.b = append(e.b, '}')
	}
	if len(m.Settings) > 0 {
		e.key("settings")
		e.marshal(m.Settings) // fixed for the run; rarely more than a few
	}
	if len(m.TraceAttributes) > 0 {
		e.key("trace_attributes")
		e.raw(m.TraceAttributes)
	}
	e.b = append(e.b, '}')
}

func (e *stateEncoder) steps(m map[string]*StepRecord) {
	if m == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '{')
	ks := keysOf(e, m)
	for i, k := range ks {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(k)
		e.b = append(e.b, ':')
		e.step(m[k])
	}
	e.drop(ks)
	e.b = append(e.b, '}')
}

func (e *stateEncoder) step(r *StepRecord) {
	if r == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, `{"status":`...)
	e.str(r.Status)
	e.intField("attempts", r.Attempts)
	if r.Calls != 0 {
		e.intField("calls", r.Calls)
	}
	if r.Runs != 0 {
		e.intField("runs", r.Runs)
	}
	if len(r.Output) > 0 {
		e.key("output")
		e.raw(r.Output)
	}
	if r.OutputFile != "" {
		e.strField("output_file", r.OutputFile)
	}
	if r.OutputText != "" {
		e.strField("output_text", r.OutputText)
	}
	if r.Error != "" {
		e.strField("error", r.Error)
	}
	if r.ErrorKind != "" {
		e.strField("error_kind", r.ErrorKind)
	}
	if r.ExitCode != nil {
		e.intField("exit_code", *r.ExitCode)
	}
	if r.SkipReason != "" {
		e.strField("skip_reason", r.SkipReason)
	}
	if r.StartedAt != nil {
		e.key("started_at")
		e.time(*r.StartedAt)
	}
	if r.CompletedAt != nil {
		e.key("completed_at")
		e.time(*r.CompletedAt)
	}
	e.key("duration_s")
	e.float(r.DurationS)
	if r.Tokens != 0 {
		e.intField("tokens", r.Tokens)
	}
	if r.CostUSD != nil {
		e.key("cost_usd")
		e.float(*r.CostUSD)
	}
	if r.SessionID != "" {
		e.strField("session_id", r.SessionID)
	}
	if r.Model != "" {
		e.strField("model", r.Model)
	}
	if r.Agent != "" {
		e.strField("agent", r.Agent)
	}
	if r.RawFile != "" {
		e.strField("raw_file", r.RawFile)
	}
	e.b = append(e.b, '}')
}

func (e *stateEncoder) items(m map[string]map[string]*ItemRecord, noValue map[[2]string]bool) {
	e.b = append(e.b, '{')
	ks := keysOf(e, m)
	for i, step := range ks {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.str(step)
		e.b = append(e.b, ':')
		recs := m[step]
		if recs == nil {
			e.b = append(e.b, "null"...)
			continue
		}
		e.b = append(e.b, '{')
		rks := keysOf(e, recs)
		for j, k := range rks {
			if j > 0 {
				e.b = append(e.b, ',')
			}
			e.str(k)
			e.b = append(e.b, ':')
			e.item(recs[k], noValue[[2]string{step, k}])
		}
		e.drop(rks)
		e.b = append(e.b, '}')
	}
	e.drop(ks)
	e.b = append(e.b, '}')
}

func (e *stateEncoder) item(r *ItemRecord, noValue bool) {
	if r == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, `{"key":`...)
	e.str(r.Key)
	e.intField("index", r.Index)
	if len(r.DependsOn) > 0 {
		e.key("depends_on")
		e.strings(r.DependsOn)
	}
	e.key("priority")
	e.float(r.Priority)
	if len(r.Limits) > 0 {
		e.key("limits")
		e.b = append(e.b, '{')
		ks := keysOf(e, r.Limits)
		for i, k := range ks {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(k)
			e.b = append(e.b, ':')
			e.str(r.Limits[k])
		}
		e.drop(ks)
		e.b = append(e.b, '}')
	}
	e.strField("status", r.Status)
	if r.Current != "" {
		e.strField("current_step", r.Current)
	}
	if r.Error != "" {
		e.strField("error", r.Error)
	}
	if r.Recommendation != "" {
		e.strField("recommendation", r.Recommendation)
	}
	if len(r.Value) > 0 && !noValue {
		e.key("value")
		e.raw(r.Value)
	}
	e.key("steps")
	e.steps(r.Steps)
	e.key("caps")
	e.intMap(r.Caps)
	if r.Requeues != 0 {
		e.intField("requeues", r.Requeues)
	}
	if r.Queued != 0 {
		e.intField("queued", r.Queued)
	}
	e.b = append(e.b, '}')
}

func (e *stateEncoder) breaker(b *BreakerState) {
	e.b = append(e.b, `{"state":`...)
	e.str(b.State)
	e.intField("consecutive_no_progress", b.ConsecutiveNoProgress)
	e.intField("consecutive_same_error", b.ConsecutiveSameError)
	if b.LastError != "" {
		e.strField("last_error", b.LastError)
	}
	if b.CooldownUntil != nil {
		e.key("cooldown_until")
		e.time(*b.CooldownUntil)
	}
	if b.OpenedAt != nil {
		e.key("opened_at")
		e.time(*b.OpenedAt)
	}
	if b.Reason != "" {
		e.strField("reason", b.Reason)
	}
	e.b = append(e.b, '}')
}

func (e *stateEncoder) waiting(w *Waiting) {
	e.b = append(e.b, `{"step":`...)
	e.str(w.Step)
	if w.Item != "" {
		e.strField("item", w.Item)
	}
	e.strField("question", w.Question)
	e.key("options")
	e.strings(w.Options)
	if w.Text {
		e.b = append(e.b, `,"text":true`...)
	}
	if w.Default != "" {
		e.strField("default", w.Default)
	}
	e.b = append(e.b, '}')
}

func (e *stateEncoder) events(evs []Event) {
	if evs == nil {
		e.b = append(e.b, "null"...)
		return
	}
	e.b = append(e.b, '[')
	for i := range evs {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		e.event(&evs[i])
	}
	e.b = append(e.b, ']')
}

func (e *stateEncoder) event(ev *Event) {
	e.b = append(e.b, `{"timestamp":`...)
	e.time(ev.Time)
	e.strField("event", ev.Type)
	if ev.Step != "" {
		e.strField("step", ev.Step)
	}
	if ev.Item != "" {
		e.strField("item", ev.Item)
	}
	if ev.Label != "" {
		e.strField("label", ev.Label)
	}
	if ev.Progress != "" {
		e.strField("progress", ev.Progress)
	}
	if ev.ProgressIndex != 0 {
		e.intField("progress_index", ev.ProgressIndex)
	}
	if ev.ProgressTotal != 0 {
		e.intField("progress_total", ev.ProgressTotal)
	}
	if ev.Attempt != 0 {
		e.intField("attempt", ev.Attempt)
	}
	if ev.Message != "" {
		e.strField("message", ev.Message)
	}
	if len(ev.Details) > 0 {
		e.key("details")
		e.b = append(e.b, '{')
		ks := keysOf(e, ev.Details)
		for i, k := range ks {
			if i > 0 {
				e.b = append(e.b, ',')
			}
			e.str(k)
			e.b = append(e.b, ':')
			e.detail(ev.Details[k])
		}
		e.drop(ks)
		e.b = append(e.b, '}')
	}
	e.b = append(e.b, '}')
}

// detail appends an event detail: the kinds the interpreter records by
// hand, any other through json.Marshal.
func (e *stateEncoder) detail(v any) {
	switch v := v.(type) {
	case nil:
		e.b = append(e.b, "null"...)
	case string:
		e.str(v)
	case int:
		e.int(v)
	case float64:
		e.float(v)
	case bool:
		e.bool(v)
	default:
		e.marshal(v)
	}
}

func (e *stateEncoder) metrics(m *Metrics) {
	e.b = append(e.b, `{"total_tokens_used":`...)
	e.int(m.TotalTokens)
	e.key("total_cost_usd")
	e.floatPtr(m.TotalCostUSD)
	e.intField("steps_run", m.StepsRun)
	e.intField("steps_failed", m.StepsFailed)
	e.intField("agent_calls", m.AgentCalls)
	e.intField("retries", m.Retries)
	e.key("total_duration_s")
	e.float(m.DurationS)
	e.b = append(e.b, '}')
}
