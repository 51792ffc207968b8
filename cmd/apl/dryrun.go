package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/interp/draw"
	"github.com/apl-lang/apl/interp/playtest"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// dryRunFlags are apl run's flags for a dry run; apl graph --dry-run
// shares the mocks.
type dryRunFlags struct {
	DryRun      bool `name:"dry-run" help:"Walk the graph without calling an agent, running a command or writing in the project: each step answers with its example, a value made from its returns type, or a mock (--mocks). Builtins that only read run. Prints the path."`
	ShowPrompts bool `help:"With --dry-run: print each prompt as rendered."`
	dryMockFlags
}

// dryMockFlags choose mocks for a dry run.
type dryMockFlags struct {
	Mocks string `placeholder:"FILE" help:"With --dry-run: answer steps from the mocks of this test file."`
	Test  string `placeholder:"NAME" help:"With --mocks: the test whose mocks, inputs and mode to use (default: the file's only test, else its top-level mocks)."`
}

// dryMocks reads the mocks the flags choose, with the test's inputs and
// mode (nil, "" when the file's top-level mocks are used).
func (e *env) dryMocks(pb *lang.Playbook, f dryMockFlags) (map[string]*lang.Mock, map[string]cty.Value, string, error) {
	if f.Mocks == "" {
		if f.Test != "" {
			return nil, nil, "", errors.New("--test needs --mocks FILE")
		}
		return nil, nil, "", nil
	}
	// The file, and the test files whose mocks it includes.
	srcs, err := e.loader.ReadTestFile(f.Mocks)
	if err != nil {
		return nil, nil, "", fmt.Errorf("--mocks: %w", err)
	}
	tfs, diags := lang.LoadTestFiles(pb, srcs)
	if len(diags) > 0 {
		writeDiags(e.stderr, pb, diags, srcs)
	}
	var tf *lang.TestFile
	for _, t := range tfs {
		if t.Filename == f.Mocks {
			tf = t
		}
	}
	if diags.HasErrors() || tf == nil {
		return nil, nil, "", fmt.Errorf("--mocks %s: %s", f.Mocks, countDiags(diags))
	}
	var names []string
	for _, t := range tf.Tests {
		names = append(names, t.Name)
		if t.Name == f.Test {
			return t.Mocks, t.Inputs, t.Mode, nil
		}
	}
	switch {
	case f.Test != "":
		return nil, nil, "", fmt.Errorf("--test %q: %s has no such test; its tests are %s", f.Test, f.Mocks, strings.Join(names, ", "))
	case len(tf.Tests) == 1:
		t := tf.Tests[0]
		return t.Mocks, t.Inputs, t.Mode, nil
	case len(tf.Mocks) > 0:
		return tf.Mocks, nil, "", nil
	case len(tf.Tests) == 0:
		return nil, nil, "", fmt.Errorf("--mocks %s: the file has no mocks", f.Mocks)
	}
	return nil, nil, "", fmt.Errorf("--mocks %s: the file has %d tests; choose one with --test NAME: %s", f.Mocks, len(names), strings.Join(names, ", "))
}

// dryWalk is one dry run: the events it had, and how it ended.
type dryWalk struct {
	res    *interp.Result
	events []interp.Event
}

// path is the dry run's way through the graph, as apl graph --path draws
// a recorded run's.
func (w *dryWalk) path() *draw.Run {
	st := &interp.State{Meta: interp.Meta{Status: w.res.Status, Reason: w.res.Reason, Recommendation: w.res.Recommendation}, Events: w.events}
	p := draw.RunOf(st)
	p.ID = "(dry run)"
	return p
}

// walkDry dry-runs pb with opts, which it completes: the dry-run mode,
// mocks in front of it, and an observer that keeps the events beside
// obs's.
func walkDry(pb *lang.Playbook, ref string, opts interp.Options, mocks map[string]*lang.Mock, prompt func(step, item, prompt string), obs interp.Observer) (*dryWalk, error) {
	w := &dryWalk{}
	var mu sync.Mutex
	opts.Observer = interp.ObserverFunc(func(ev interp.Event) {
		mu.Lock()
		w.events = append(w.events, ev)
		mu.Unlock()
		if obs != nil {
			obs.Event(ev)
		}
	})
	opts.DryRun = &interp.DryRun{Prompt: prompt}
	if len(mocks) > 0 {
		opts.DryRun.Wrap = func(a interp.Actions) interp.Actions { return playtest.Mocked(mocks, a) }
	}
	opts.NoSync = true
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := interp.Start(ctx, pb, ref, opts)
	w.res = res
	return w, err
}

// dryRun is apl run --dry-run.
func (c *runCmd) dryRun(e *env, inputs map[string]cty.Value, from map[string]string) error {
	opts := c.runOptions
	mocks, testInputs, testMode, err := e.dryMocks(c.pb, opts.dryMockFlags)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	// The test's inputs and mode, under the command line's.
	all := map[string]cty.Value{}
	for k, v := range testInputs {
		all[k] = v
	}
	for k, v := range inputs {
		all[k] = v
	}
	mode := opts.Mode
	if mode == "" {
		mode = testMode
	}
	// Prompts go to stdout, unless stdout is for the JSON.
	pw := e.stdout
	if opts.JSON {
		pw = e.stderr
	}
	var prompt func(step, item, text string)
	if opts.ShowPrompts {
		prompt = func(step, item, text string) {
			fmt.Fprintf(pw, "--- prompt: %s\n%s\n", interp.StepKey(step, item), strings.TrimRight(text, "\n"))
		}
	}
	prog := newProgress(e.stderr, opts.progressOptions, c.pb)
	var empty interp.EmptyValueSet
	ropts := interp.Options{Workdir: opts.Workdir, RunsDir: opts.RunsDir, RunID: opts.RunID, Inputs: all, Mode: mode, EmptyValue: empty.Add}
	w, err := walkDry(c.pb, c.Playbook, ropts, mocks, prompt, prog)
	prog.close()
	if ie := (*interp.InputError)(nil); errors.As(err, &ie) {
		return exitWith(exitUsage, c.flags.inputError(ie, from, mode))
	}
	if errors.Is(err, interp.ErrInterrupted) {
		return exitWith(exitInterrupted, nil)
	}
	if err != nil {
		return exitWith(exitInternal, err)
	}
	if !opts.Quiet {
		writeEmptyValues(e.stderr, empty.List())
	}
	if opts.JSON {
		fmt.Fprintf(e.stdout, "%s\n", resultJSON(w.res))
	} else {
		writeDryPath(e.stdout, c.pb, w)
	}
	// The exit code a real run would have for this ending, so that a
	// script can tell a dry run that ends failed.
	switch code := c.pb.ExitCodeOf(w.res.Status, w.res.Recommendation); {
	case w.res.Status == interp.StatusWaiting:
		return exitWith(exitWaiting, nil)
	case code != exitOK:
		return exitWith(code, nil)
	}
	return nil
}

// writeDryPath prints how a dry run went: its end, the steps it took in
// order (with the gate rule each chose), each for_each item's, and the
// output object.
func writeDryPath(out io.Writer, pb *lang.Playbook, w *dryWalk) {
	res, p := w.res, interp.PathOf(w.events)
	fmt.Fprintf(out, "dry run: %s\n", res.Status)
	if res.Reason != "" {
		fmt.Fprintf(out, "reason: %s\n", res.Reason)
	}
	if res.Recommendation != "" {
		fmt.Fprintf(out, "recommendation: %s\n", res.Recommendation)
	}
	for _, frame := range p.FrameOrder {
		if frame == "" {
			fmt.Fprintln(out, "path:")
		} else {
			fmt.Fprintf(out, "item %s:\n", frame)
		}
		for i, vis := range p.Frames[frame] {
			fmt.Fprintf(out, "  %2d %s%s\n", i+1, vis.Step, visitNote(vis))
		}
	}
	if pb.Output != nil {
		var b bytes.Buffer
		if err := json.Indent(&b, outputJSON(res), "", "  "); err == nil {
			fmt.Fprintf(out, "output: %s\n", b.Bytes())
		}
	}
}

// visitNote says how a visit ended, when that is more than completing.
func visitNote(v *interp.Visit) string {
	var notes []string
	switch {
	case v.Skipped:
		notes = append(notes, "skipped")
	case v.Status == interp.StepFailed:
		notes = append(notes, "failed")
	}
	if v.Rule != "" {
		r := "rule " + v.Rule
		if v.Exhausted {
			r += " (cap used up: on_exhausted)"
		}
		notes = append(notes, r)
	}
	if len(notes) == 0 {
		return ""
	}
	return " -- " + strings.Join(notes, ", ")
}

// requiredExamples gives each required input an example value of its
// type, so that apl graph --dry-run needs no inputs.
func requiredExamples(pb *lang.Playbook, given map[string]cty.Value) map[string]cty.Value {
	out := map[string]cty.Value{}
	for _, in := range pb.Inputs {
		if _, ok := given[in.Name]; ok || in.Default != cty.NilVal {
			continue
		}
		out[in.Name] = interp.Example(in.Type)
	}
	for k, v := range given {
		out[k] = v
	}
	return out
}

// dryPath is the path a dry run of pb takes, for apl graph --dry-run:
// in the current directory, with the mocks the flags choose and example
// values for the required inputs the test does not give.
func (e *env) dryPath(pb *lang.Playbook, ref string, f dryMockFlags) (*draw.Run, error) {
	mocks, inputs, mode, err := e.dryMocks(pb, f)
	if err != nil {
		return nil, exitWith(exitUsage, err)
	}
	w, err := walkDry(pb, ref, interp.Options{Inputs: requiredExamples(pb, inputs), Mode: mode}, mocks, nil, nil)
	if ie := (*interp.InputError)(nil); errors.As(err, &ie) {
		return nil, exitWith(exitUsage, fmt.Errorf("dry run: %w", err))
	}
	if err != nil {
		return nil, exitWith(exitInternal, fmt.Errorf("dry run: %w", err))
	}
	return w.path(), nil
}
