package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
)

// cassetteFlags are --record, --replay and --record-missing, of apl run and
// apl resume. At most one may be set.
type cassetteFlags struct {
	Record        string `help:"Record every agent call of the run to this JSONL cassette (appended to)." placeholder:"FILE"`
	Replay        string `help:"Answer every agent call from this cassette; no agent is run." placeholder:"FILE"`
	RecordMissing string `help:"Answer from this cassette what it holds and record the rest." placeholder:"FILE"`
}

// cassette returns the file and the agent.Cassette* mode the flags ask
// for; an empty path when none is set.
func (f cassetteFlags) cassette() (path, mode string, err error) {
	set := 0
	for _, c := range []struct{ flag, path, mode string }{
		{"record", f.Record, agent.CassetteRecord},
		{"replay", f.Replay, agent.CassetteReplay},
		{"record-missing", f.RecordMissing, agent.CassetteRecordMissing},
	} {
		if c.path != "" {
			set++
			path, mode = c.path, c.mode
		}
	}
	if set > 1 {
		return "", "", errors.New("--record, --replay and --record-missing exclude each other")
	}
	return path, mode, nil
}

// runDrivers returns the DriverFactory of a run: the playbook's drivers,
// or agentCmd for every agent, as interp would make them; with a cassette
// flag set, behind one cassette shared by every agent.
//
// One cassette serves the whole run, so that calls are numbered once per
// key whichever driver makes them, and so that a replay needs no driver at
// all: with --replay no driver is made, and with --record-missing one is
// made only when the cassette misses. fresh removes the file before a
// --record, so that a run records only itself (apl resume appends to the
// recording of the run it continues).
func runDrivers(pb *lang.Playbook, agentCmd []string, f cassetteFlags, fresh bool) (interp.DriverFactory, error) {
	base := interp.DefaultDrivers(agentCmd)
	path, mode, err := f.cassette()
	if err != nil || path == "" {
		return base, err
	}
	if fresh && mode == agent.CassetteRecord {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("--record: %w", err)
		}
	}
	if mode != agent.CassetteReplay {
		if err := checkWritable(path); err != nil {
			return nil, fmt.Errorf("--%s: %w", mode, err)
		}
	}
	tape, err := agent.OpenCassette(path, mode)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", mode, err)
	}
	return func(a *lang.Agent) (agent.Driver, error) {
		switch mode {
		case agent.CassetteReplay:
			return tape.Wrap(nil), nil
		case agent.CassetteRecord:
			// Made now, so that a bad driver fails the step as it would
			// without a cassette.
			d, err := base(a)
			if err != nil {
				return nil, err
			}
			return tape.Wrap(d), nil
		}
		return tape.Wrap(lazyDriver(func() (agent.Driver, error) {
			d, err := base(a)
			if err != nil {
				return nil, fmt.Errorf("agent %q: %w", a.Name, err)
			}
			return d, nil
		})), nil
	}, nil
}

// checkWritable checks that a cassette can be recorded to, before the
// run starts: the cassette writes only after an agent call, whose answer
// (paid for, with a real agent) would then be lost and its step failed.
// It leaves no file behind that was not there.
func checkWritable(path string) error {
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if errors.Is(statErr, os.ErrNotExist) {
		return os.Remove(path)
	}
	return nil
}

// lazyDriver is a driver made at its first call, so that a cassette that
// misses nothing (--record-missing) needs no driver at all.
type lazyDriver func() (agent.Driver, error)

// Call makes the driver and passes the call on.
func (f lazyDriver) Call(ctx context.Context, req agent.Request) (agent.Response, error) {
	d, err := f()
	if err != nil {
		return agent.Response{}, err
	}
	return d.Call(ctx, req)
}
