package interp

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apl-lang/apl/lang"
)

// encodingStrings are strings that encoding/json writes in every way it
// can: escapes, HTML characters, invalid UTF-8, U+2028.
var encodingStrings = []string{
	"", "s1", "a b", `quote " and \ backslash`, "tab\tnew\nline\r", "\x00\x01\x1f\x7f",
	"<script>&amp;</script>", "a<b", "ünïcødé ✓ 日本", "\u2028\u2029", "bad \xff\xfe utf8", "\xe2\x80",
	"[REDACTED]", strings.Repeat("long plain text ", 20),
}

var encodingFloats = []float64{0, 1, -1, 0.5, 1e-7, 1e-6, 123456789.123, 1e20, 1e21, 1.5e300, 5e-324, 0.004597559, -2.5e-9}

func encodingState(rng *rand.Rand) *State {
	str := func() string { return encodingStrings[rng.IntN(len(encodingStrings))] }
	flt := func() float64 { return encodingFloats[rng.IntN(len(encodingFloats))] }
	tm := func() time.Time {
		t := time.Date(2026, 11, 26, 23, 38, 48, rng.IntN(1e9), time.UTC)
		if rng.IntN(3) == 0 {
			t = t.In(time.FixedZone("x", 3600*rng.IntN(10)+60*rng.IntN(2)*30))
		}
		if rng.IntN(4) == 0 {
			t = t.Truncate(time.Second)
		}
		return t
	}
	ptm := func() *time.Time {
		if rng.IntN(2) == 0 {
			return nil
		}
		t := tm()
		return &t
	}
	raws := []json.RawMessage{nil, json.RawMessage(`""`), json.RawMessage(`{"a":[1,2.5,"x<y"]}`), json.RawMessage(`{ "spaced" : true }`),
		json.RawMessage("\"\u2028\""), json.RawMessage(`null`), json.RawMessage(`{}`), json.RawMessage(`"a&b"`)}
	raw := func() json.RawMessage { return raws[rng.IntN(len(raws))] }
	intMap := func() map[string]int {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return map[string]int{}
		}
		return map[string]int{str(): rng.IntN(5), str(): -rng.IntN(100)}
	}
	rawMap := func() map[string]json.RawMessage {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return map[string]json.RawMessage{}
		}
		return map[string]json.RawMessage{str(): raw(), str(): raw()}
	}
	strs := func() []string {
		switch rng.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		return []string{str(), str()}
	}
	step := func() *StepRecord {
		if rng.IntN(10) == 0 {
			return nil
		}
		r := &StepRecord{Status: str(), Attempts: rng.IntN(3), Calls: rng.IntN(2), Runs: rng.IntN(2), Output: raw(),
			OutputFile: str(), OutputText: str(), Error: str(), ErrorKind: str(), SkipReason: str(), StartedAt: ptm(), CompletedAt: ptm(),
			DurationS: flt(), Tokens: rng.IntN(2) * 1000, SessionID: str(), Model: str(), Agent: str(), RawFile: str()}
		if rng.IntN(2) == 0 {
			c := rng.IntN(3) - 1
			r.ExitCode = &c
		}
		if rng.IntN(2) == 0 {
			f := flt()
			r.CostUSD = &f
		}
		return r
	}
	steps := func() map[string]*StepRecord {
		if rng.IntN(4) == 0 {
			return nil
		}
		m := map[string]*StepRecord{}
		for range rng.IntN(4) {
			m[str()] = step()
		}
		return m
	}
	st := &State{
		Meta: Meta{Version: 1, Seq: rng.IntN(1000), RunID: str(), Playbook: str(), PlaybookRef: str(), PlaybookHash: str(),
			Mode: str(), AgentCommand: strs(), AgentTimeout: str(), Inputs: rawMap(), Workdir: str(), Status: str(),
			Recommendation: str(), ErrorKind: str(), Reason: str(), CurrentStep: str(), StartedAt: tm(), LastCheckpoint: tm(),
			OnFailure: rng.IntN(2) == 0, OnFailureStep: str(), Finally: rng.IntN(2) == 0, FinallyStep: str(),
			EventsArchived: rng.IntN(2) * 1000, TraceAttributes: raw()},
		Steps:   steps(),
		Caps:    intMap(),
		Vars:    rawMap(),
		Breaker: BreakerState{State: str(), ConsecutiveNoProgress: rng.IntN(3), ConsecutiveSameError: rng.IntN(3), LastError: str(), CooldownUntil: ptm(), OpenedAt: ptm(), Reason: str()},
		Metrics: Metrics{TotalTokens: rng.IntN(10000), StepsRun: rng.IntN(500), StepsFailed: rng.IntN(3), AgentCalls: rng.IntN(9), Retries: rng.IntN(2), DurationS: flt()},
		Output:  raw(),
	}
	if rng.IntN(2) == 0 {
		st.Meta.Timeouts = map[string]string{str(): str()}
	}
	if rng.IntN(2) == 0 {
		st.Meta.Documents = map[string]DocumentFile{str(): {Path: str(), Backup: str()}}
	}
	if rng.IntN(3) == 0 {
		st.Meta.Settings = map[string]lang.Fixed{str(): {N: rng.IntN(5), D: time.Duration(rng.IntN(5)) * time.Second, Caps: intMap()}}
	}
	if rng.IntN(2) == 0 {
		f := flt()
		st.Metrics.TotalCostUSD = &f
	}
	if rng.IntN(3) == 0 {
		st.Waiting = &Waiting{Step: str(), Item: str(), Question: str(), Options: strs(), Text: rng.IntN(2) == 0, Default: str()}
	}
	if rng.IntN(2) == 0 {
		st.Items = map[string]map[string]*ItemRecord{}
		for range 1 + rng.IntN(2) {
			recs := map[string]*ItemRecord{}
			for range rng.IntN(3) {
				if rng.IntN(8) == 0 {
					recs[str()] = nil
					continue
				}
				rec := &ItemRecord{Key: str(), Index: rng.IntN(100), DependsOn: strs(), Priority: flt(),
					Status: str(), Current: str(), Error: str(), Recommendation: str(), Value: raw(), Steps: steps(),
					Caps: intMap(), Requeues: rng.IntN(2), Queued: rng.IntN(2)}
				if rng.IntN(2) == 0 {
					rec.Limits = map[string]string{str(): str()}
				}
				recs[str()] = rec
			}
			st.Items[str()] = recs
		}
		st.ItemsRun = intMap()
	}
	if rng.IntN(5) > 0 {
		st.Events = []Event{}
		for range rng.IntN(4) {
			ev := Event{Time: tm(), Type: str(), Step: str(), Item: str(), Label: str(), Progress: str(),
				ProgressIndex: rng.IntN(3), ProgressTotal: rng.IntN(3), Attempt: rng.IntN(3), Message: str()}
			if rng.IntN(2) == 0 {
				ev.Details = map[string]any{"rule": str(), "max": rng.IntN(4), "duration_s": flt(), "ok": rng.IntN(2) == 0,
					"none": nil, "list": []string{str()}, "nested": map[string]any{"k": str()}, str(): int64(7)}
			}
			st.Events = append(st.Events, ev)
		}
	}
	return st
}

// TestStateEncoding checks the hand encoder of the state and the journal
// against encoding/json, byte for byte, over states that use every field
// in every way (nil and empty maps, escapes, HTML characters, floats
// either side of the exponent cut-offs): the redactor and older readers
// see exactly what they saw.
func TestStateEncoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		st := encodingState(rng)
		want, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		var e stateEncoder
		e.state(st)
		if e.err != nil || !bytes.Equal(e.b, want) {
			t.Fatalf("state %d: err %v\n got %s\nwant %s", i, e.err, e.b, want)
		}

		j := journalEntry{Seq: st.Meta.Seq, Items: st.Items, ItemsRun: st.ItemsRun, Breaker: st.Breaker, Waiting: st.Waiting,
			Meta: st.Meta, Steps: st.Steps, Caps: st.Caps, Vars: st.Vars, Events: st.Events, Metrics: st.Metrics, Output: st.Output}
		want, err = json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		e = stateEncoder{}
		e.entry(&j, nil)
		if e.err != nil || !bytes.Equal(e.b, want) {
			t.Fatalf("entry %d: err %v\n got %s\nwant %s", i, e.err, e.b, want)
		}

		// Items already written are encoded without their values, as a
		// copy without them would be.
		noValue := map[[2]string]bool{}
		copied := map[string]map[string]*ItemRecord{}
		for step, recs := range j.Items {
			copied[step] = map[string]*ItemRecord{}
			for k, rec := range recs {
				copied[step][k] = rec
				if rec != nil && rng.IntN(2) == 0 {
					noValue[[2]string{step, k}] = true
					c := *rec
					c.Value = nil
					copied[step][k] = &c
				}
			}
		}
		j2 := j
		j2.Items = copied
		want, err = json.Marshal(j2)
		if err != nil {
			t.Fatal(err)
		}
		e = stateEncoder{}
		e.entry(&j, noValue)
		if e.err != nil || !bytes.Equal(e.b, want) {
			t.Fatalf("entry %d without values: err %v\n got %s\nwant %s", i, e.err, e.b, want)
		}
	}
}

// TestStateEncodingRefuses checks that what encoding/json cannot encode
// (a NaN, a year past 9999) fails the encoding instead of writing a line
// no reader parses.
func TestStateEncodingRefuses(t *testing.T) {
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	for name, st := range map[string]*State{
		"nan":  {Metrics: Metrics{DurationS: math.NaN()}},
		"inf":  {Steps: map[string]*StepRecord{"a": {DurationS: math.Inf(1)}}},
		"year": {Meta: Meta{StartedAt: far}},
	} {
		var e stateEncoder
		e.state(st)
		if _, err := json.Marshal(st); err == nil || e.err == nil {
			t.Errorf("%s: encoding/json says %v, the encoder %v", name, err, e.err)
		}
	}
}

// FuzzStateEncoding compares the encoder with encoding/json on any
// string and number in a state's records.
func FuzzStateEncoding(f *testing.F) {
	for _, s := range encodingStrings {
		f.Add(s, 0.5, int64(3))
	}
	f.Add("x", 1e21, int64(-1))
	f.Fuzz(func(t *testing.T, s string, x float64, n int64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		ts := time.Unix(n%(1<<34), n%1e9).UTC()
		code := int(n)
		st := &State{
			Meta:    Meta{RunID: s, Status: s, CurrentStep: s, StartedAt: ts, Inputs: map[string]json.RawMessage{s: json.RawMessage(`1`)}},
			Steps:   map[string]*StepRecord{s: {Status: s, Error: s, ExitCode: &code, DurationS: x, StartedAt: &ts}},
			Caps:    map[string]int{s: code},
			Events:  []Event{{Time: ts, Type: s, Message: s, Details: map[string]any{s: s, "n": x, "i": code}}},
			Metrics: Metrics{DurationS: x, TotalCostUSD: &x},
		}
		want, err := json.Marshal(st)
		var e stateEncoder
		e.state(st)
		if (err != nil) != (e.err != nil) {
			t.Fatalf("encoding/json: %v, encoder: %v", err, e.err)
		}
		if err == nil && !bytes.Equal(e.b, want) {
			t.Fatalf("\n got %s\nwant %s", e.b, want)
		}
	})
}
