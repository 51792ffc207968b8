package interp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apl-lang/apl/lang"
)

// A run on an Engine keeps no state on disk, but an engine whose history
// must stay bounded (Temporal's, which ends a workflow at 51,200 events)
// continues a long run in a new execution: it interrupts the walk once
// nothing is under way, takes the run's state, and resumes the run from
// that state in the new execution, as apl resume continues a local run
// from its state file. These are the parts it needs.

// StateKeeper is an Engine that is handed the run's state at every
// checkpoint (the same *State each time: the run changes it in place),
// so that it can carry the run on elsewhere (ResumeState).
type StateKeeper interface {
	KeepState(st *State)
}

// EncodeState encodes st as a run's state file holds it.
func EncodeState(st *State) ([]byte, error) {
	enc := stateEncoder{}
	enc.state(st)
	if enc.err != nil {
		return nil, fmt.Errorf("encode state: %w", enc.err)
	}
	return enc.b, nil
}

// DecodeState decodes a state EncodeState encoded.
func DecodeState(data []byte) (*State, error) {
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("decode state: %w", err)
	}
	if st.Meta.Version != stateVersion {
		return nil, fmt.Errorf("state format %d; this apl reads format %d", st.Meta.Version, stateVersion)
	}
	st.fillMaps()
	if err := checkState(&st); err != nil {
		return nil, err
	}
	return &st, nil
}

// ResumeState continues, on opts.Engine, the run whose state st is (an
// interrupted run's, which the engine kept): completed steps and
// finished for_each items are reused, and what was in flight runs again,
// as Resume does. outputs are the run directory's files the state names
// (StepRecord.OutputFile and OutputText, by their path in the run
// directory), written into the new run directory first.
func ResumeState(ctx context.Context, pb *lang.Playbook, st *State, outputs map[string][]byte, opts Options) (*Result, error) {
	if opts.Engine == nil {
		return nil, fmt.Errorf("internal error: ResumeState without an engine")
	}
	if err := resumable(st, pb, opts); err != nil {
		return nil, err
	}
	opts.Mode = st.Meta.Mode
	var err error
	if opts.Timeouts, opts.AgentTimeout, err = st.Meta.keptTimeouts(opts); err != nil {
		return nil, err
	}
	r, h, err := newRun(pb, opts)
	if err != nil {
		return nil, err
	}
	r.st = st
	r.elapsed0 = time.Duration(st.Metrics.DurationS * float64(time.Second))
	runsDir, err := r.runsDir()
	if err != nil {
		return nil, err
	}
	dir, _, err := createRunDir(runsDir, st.Meta.RunID)
	if err != nil {
		return nil, err
	}
	r.dir = dir
	for name, data := range outputs {
		p := filepath.Join(dir.path, filepath.Clean(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
			err = os.WriteFile(p, data, 0o644)
		}
		if err != nil {
			dir.close()
			return nil, fmt.Errorf("run directory: %w", err)
		}
	}
	if err := r.restore(); err != nil {
		dir.close()
		return nil, err
	}
	if err := r.fixSettings(); err != nil {
		dir.close()
		return nil, err
	}
	h.store = newStoreFor(filesFor(filepath.Join(dir.path, stateFile)), opts)
	h.store.redact, dir.redact = r.redact, r.redact
	dir.attrs = r.redact.Bytes(st.Meta.TraceAttributes)
	r.label = r.renderLabel()
	r.st.Waiting = nil
	if err := r.rewind(""); err != nil {
		dir.close()
		return nil, err
	}
	return r.execute(ctx)
}

// OutputFiles are the run directory's files st names as step outputs
// (StepRecord.OutputFile and OutputText), by path in the run directory:
// what ResumeState needs besides the state.
func OutputFiles(st *State) []string {
	var out []string
	add := func(rec *StepRecord) {
		for _, name := range []string{rec.OutputFile, rec.OutputText} {
			if name != "" && !filepath.IsAbs(name) {
				out = append(out, name)
			}
		}
	}
	for _, rec := range st.Steps {
		add(rec)
	}
	for _, items := range st.Items {
		for _, it := range items {
			for _, rec := range it.Steps {
				add(rec)
			}
		}
	}
	return out
}
