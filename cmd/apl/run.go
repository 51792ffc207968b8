package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/agext/levenshtein"
	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

type runCmd struct {
	Playbook string `arg:"" help:"A playbook file, a directory of .hcl files, or stdlib:NAME."`
	// Args are the arguments after the playbook, as they were given: Main
	// keeps them from kong (see splitRun) and Run parses them.
	Args []string `arg:"" optional:"" passthrough:"" help:"The playbook's inputs as flags (--phase 6.3, --existing-plan, --var name=value) and run options (--mode, --json, --quiet, --agent-cmd, --record, --replay, --workdir, --runs-dir). 'apl run PLAYBOOK --help' lists them."`
}

// runOptions are the flags of apl run that are not playbook inputs.
type runOptions struct {
	mode           string
	json           bool
	quiet          bool
	agentCmd       string
	workdir        string
	runsDir        string
	noSync         bool
	nonInteractive bool
	runID          string
	vars           []string
	cassette       cassetteFlags
}

func (c *runCmd) Run(e *env) error {
	pb, warnings, err := e.load(c.Playbook)
	if err != nil {
		return err
	}
	opts, inputs, help, err := parseRunArgs(pb, c.Playbook, c.Args)
	if help {
		printRunHelp(e.stdout, pb, c.Playbook)
		return nil
	}
	if err != nil {
		return exitWith(exitUsage, err)
	}
	if !opts.quiet && len(warnings) > 0 {
		writeDiags(e.stderr, pb, warnings)
	}
	agentCmd, err := splitCommand(opts.agentCmd)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("--agent-cmd: %w", err))
	}
	if err := checkRunPlace(opts); err != nil {
		return exitWith(exitUsage, err)
	}
	drivers, err := runDrivers(pb, agentCmd, opts.cassette, true)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	ropts := interp.Options{
		Workdir: opts.workdir, RunsDir: opts.runsDir, RunID: opts.runID, Inputs: inputs,
		Mode: opts.mode, AgentCommand: agentCmd, Drivers: drivers, NoSync: opts.noSync,
		Observer: newProgress(e.stderr, opts.quiet, pb),
		Asker:    asker(e.stderr, opts.nonInteractive),
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := interp.Start(ctx, pb, c.Playbook, ropts)
	return report(e, pb, res, err, opts.json)
}

// checkRunPlace checks the user's --workdir and --run-id before the run
// starts. interp.Start would fail on them too, but with errors that cmd
// cannot tell from I/O failures (exit 3), and these are the user's
// mistakes (exit 2).
func checkRunPlace(o runOptions) error {
	if o.workdir != "" {
		if st, err := os.Stat(o.workdir); err != nil || !st.IsDir() {
			return fmt.Errorf("--workdir %s: no such directory", o.workdir)
		}
	}
	id := o.runID
	if id == "" {
		return nil
	}
	// A run id names a directory in the runs directory, next to latest.
	if id == "." || id == ".." || id == "latest" || strings.ContainsAny(id, `/\`) {
		return fmt.Errorf("--run-id %q: a run id is a plain name, not . .. latest or a path", id)
	}
	runsDir := o.runsDir
	if runsDir == "" {
		// interp's default: WORKDIR/.apl/runs.
		runsDir = filepath.Join(o.workdir, ".apl", "runs")
	}
	if _, err := os.Stat(filepath.Join(runsDir, id)); err == nil {
		return fmt.Errorf("run %s already exists in %s; choose another --run-id", id, runsDir)
	}
	return nil
}

// report prints how a run ended and turns it into an exit code.
func report(e *env, pb *lang.Playbook, res *interp.Result, err error, asJSON bool) error {
	var inErr *interp.InputError
	switch {
	case errors.As(err, &inErr):
		return exitWith(exitUsage, err)
	case errors.Is(err, interp.ErrInterrupted):
		fmt.Fprintf(e.stderr, "apl: run %s interrupted; continue it with: apl resume %s\n", res.RunID, res.RunID)
		return exitWith(exitInterrupted, nil)
	case err != nil:
		return exitWith(exitInternal, err)
	case res.Status == interp.StatusWaiting:
		if asJSON {
			fmt.Fprintf(e.stdout, "%s\n", res.OutputJSON)
		} else {
			fmt.Fprintf(e.stdout, "waiting: run %s (%s)\n", res.RunID, relPath(res.Dir))
		}
		fmt.Fprintf(e.stderr, "apl: %s\n", res.Reason)
		return exitWith(exitWaiting, nil)
	}
	if asJSON {
		fmt.Fprintf(e.stdout, "%s\n", res.OutputJSON)
	} else {
		fmt.Fprintf(e.stdout, "%s: run %s (%s)\n", res.Status, res.RunID, relPath(res.Dir))
		if res.Reason != "" {
			fmt.Fprintf(e.stdout, "reason: %s\n", res.Reason)
		}
		if res.Recommendation != "" {
			fmt.Fprintf(e.stdout, "recommendation: %s\n", res.Recommendation)
		}
		if pb.Output != nil {
			var v any
			json.Unmarshal(res.OutputJSON, &v)
			b, _ := json.MarshalIndent(v, "", "  ")
			fmt.Fprintf(e.stdout, "%s\n", b)
		}
	}
	if code := pb.ExitCode(res.Status); code != exitOK {
		return exitWith(code, nil)
	}
	return nil
}

func relPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// parseRunArgs reads the flags after the playbook: run options and one
// flag per input (pass_threshold → --pass-threshold, plus its alias).
// ref is the playbook as the user named it, for hints.
func parseRunArgs(pb *lang.Playbook, ref string, args []string) (runOptions, map[string]cty.Value, bool, error) {
	var o runOptions
	fs := flag.NewFlagSet("apl run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.mode, "mode", "", "")
	fs.BoolVar(&o.json, "json", false, "")
	fs.BoolVar(&o.quiet, "quiet", false, "")
	fs.BoolVar(&o.quiet, "q", false, "")
	fs.StringVar(&o.agentCmd, "agent-cmd", os.Getenv("APL_AGENT_CMD"), "")
	fs.StringVar(&o.workdir, "workdir", "", "")
	fs.StringVar(&o.runsDir, "runs-dir", "", "")
	fs.StringVar(&o.runID, "run-id", "", "")
	fs.BoolVar(&o.noSync, "no-sync", false, "")
	fs.BoolVar(&o.nonInteractive, "non-interactive", false, "")
	fs.StringVar(&o.cassette.Record, "record", "", "")
	fs.StringVar(&o.cassette.Replay, "replay", "", "")
	fs.StringVar(&o.cassette.RecordMissing, "record-missing", "", "")
	fs.Func("var", "", func(s string) error { o.vars = append(o.vars, s); return nil })
	raw := map[string]string{}
	for _, in := range pb.Inputs {
		in := in
		set := func(s string) error {
			if _, dup := raw[in.Name]; dup {
				return fmt.Errorf("input %q given twice", in.Name)
			}
			raw[in.Name] = s
			return nil
		}
		names := []string{in.FlagName()}
		if in.Flag != "" && in.Flag != in.FlagName() {
			names = append(names, in.Flag)
		}
		for _, n := range names {
			if fs.Lookup(n) != nil {
				continue // run options win; the input stays reachable with --var
			}
			if in.Type == cty.Bool {
				fs.Var(boolFlag(set), n, "")
			} else {
				fs.Func(n, "", set)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, nil, true, nil
		}
		return o, nil, false, flagError(pb, ref, err)
	}
	if fs.NArg() > 0 {
		return o, nil, false, fmt.Errorf("unexpected argument %q: inputs are given as flags, e.g. --%s VALUE", fs.Arg(0), firstInputFlag(pb))
	}
	for _, v := range o.vars {
		name, val, ok := strings.Cut(v, "=")
		if !ok {
			return o, nil, false, fmt.Errorf("--var %q: want name=value", v)
		}
		if _, dup := raw[name]; dup {
			return o, nil, false, fmt.Errorf("input %q given twice", name)
		}
		raw[name] = val
	}
	inputs := map[string]cty.Value{}
	for name, s := range raw {
		in := pb.Input(name)
		if in == nil {
			return o, nil, false, fmt.Errorf("--var %s: playbook %q has no input %q%s", name, pb.Name, name, suggestInput(pb, name))
		}
		v, err := parseInput(in, s)
		if err != nil {
			return o, nil, false, fmt.Errorf("--%s: %w", in.FlagName(), err)
		}
		inputs[name] = v
	}
	return o, inputs, false, nil
}

// boolFlag is an input flag that may stand alone (--existing-plan) or take
// a value (--existing-plan=false).
type boolFlag func(string) error

func (f boolFlag) String() string     { return "" }
func (f boolFlag) Set(s string) error { return f(s) }
func (f boolFlag) IsBoolFlag() bool   { return true }

func flagError(pb *lang.Playbook, ref string, err error) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return fmt.Errorf("unknown flag --%s%s; 'apl run %s --help' lists the flags", name, suggestFlag(pb, name), ref)
	}
	return errors.New(strings.ReplaceAll(msg, " -", " --"))
}

// suggestFlag suggests the input flag closest to an unknown one, by either
// of its names.
func suggestFlag(pb *lang.Playbook, name string) string {
	best, dist := "", 3
	for _, in := range pb.Inputs {
		for _, f := range inputFlags(in) {
			if d := levenshtein.Distance(name, f, nil); d < dist {
				best, dist = f, d
			}
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean --%s?)", best)
}

func suggestInput(pb *lang.Playbook, name string) string {
	best, dist := "", 3
	for _, in := range pb.Inputs {
		if d := levenshtein.Distance(name, in.Name, nil); d < dist {
			best, dist = in.FlagName(), d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean --%s?)", best)
}

// inputFlags lists the flags that set an input, its alias first.
func inputFlags(in *lang.Input) []string {
	if in.Flag != "" && in.Flag != in.FlagName() {
		return []string{in.Flag, in.FlagName()}
	}
	return []string{in.FlagName()}
}

// firstInputFlag is the flag for the example in a hint: the first input's
// alias if it has one, as the playbook's author chose it for users.
func firstInputFlag(pb *lang.Playbook) string {
	if len(pb.Inputs) == 0 {
		return "name"
	}
	return inputFlags(pb.Inputs[0])[0]
}

// parseInput reads a command-line value for an input. lang's ParseValue
// reads every value that is not a string as an HCL expression, so its
// errors speak of HCL: abc for a number is "Variables may not be used
// here". Numbers and bools are read here, and HCL's errors for lists and
// objects are rephrased, so that messages speak of what the user typed.
func parseInput(in *lang.Input, s string) (cty.Value, error) {
	switch {
	case in.Type == cty.Number:
		v, err := cty.ParseNumberVal(strings.TrimSpace(s))
		if err != nil || v.AsBigFloat().IsInf() {
			return cty.NilVal, fmt.Errorf("%q is not a number", s)
		}
		return in.Convert(v)
	case in.Type == cty.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return cty.NilVal, fmt.Errorf("%q is not a bool: use true or false", s)
		}
		return in.Convert(cty.BoolVal(b))
	case in.Type == cty.String || in.Type == cty.DynamicPseudoType:
		return in.ParseValue(s)
	}
	what := typeLabel(in.Type)
	expr, diags := hclsyntax.ParseExpression([]byte(s), "--"+in.FlagName(), hcl.InitialPos)
	if diags.HasErrors() {
		return cty.NilVal, fmt.Errorf("%q is not valid HCL for a %s: %s", s, what, diags[0].Summary)
	}
	if vars := expr.Variables(); len(vars) > 0 {
		word := vars[0].RootName()
		return cty.NilVal, fmt.Errorf("%q is not valid HCL for a %s: %s is not quoted", s, what, word)
	}
	return in.ParseValue(s)
}

func printRunHelp(w io.Writer, pb *lang.Playbook, ref string) {
	fmt.Fprintf(w, "Usage: apl run %s [flags]\n\n", ref)
	if pb.Description != "" {
		fmt.Fprintf(w, "%s\n\n", pb.Description)
	}
	fmt.Fprintf(w, "Inputs:\n")
	for _, in := range pb.Inputs {
		name := "--" + in.FlagName()
		if in.Flag != "" && in.Flag != in.FlagName() {
			name = "--" + in.Flag + ", " + name
		}
		req := "required"
		if !in.Required() {
			req = "default " + formatDefault(in)
		}
		fmt.Fprintf(w, "  %-32s %s (%s, %s)\n", name, in.Description, typeLabel(in.Type), req)
	}
	if len(pb.Modes) > 0 {
		names := make([]string, 0, len(pb.Modes))
		for n := range pb.Modes {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(w, "\nModes (--mode NAME):\n")
		for _, n := range names {
			fmt.Fprintf(w, "  %-32s %s\n", n, pb.Modes[n].Description)
		}
	}
	fmt.Fprint(w, `
Run options:
  --mode NAME                      Preset inputs from a mode block.
  --var NAME=VALUE                 Set an input; the value is read by the input's type (HCL syntax for lists and objects).
  --json                           Print only the output object, as JSON, on stdout.
  --quiet, -q                      No progress lines on stderr.
  --agent-cmd CMD                  Send every agent step to CMD (env APL_AGENT_CMD).
  --record FILE                    Record every agent call to FILE, a JSONL cassette (replaced).
  --replay FILE                    Answer every agent call from FILE; no agent runs, a call it lacks fails its step.
  --record-missing FILE            Answer from FILE what it holds; call the agents for the rest and record them.
  --workdir DIR                    Project root where commands run (default: current directory).
  --runs-dir DIR                   Where run directories go (default: WORKDIR/.apl/runs).
  --run-id ID                      Name the run (default: time-based).
  --no-sync                        Skip fsync on checkpoints (faster; a crash may lose the last transition).
  --non-interactive                Never prompt: an ask step pauses the run as waiting (exit 4).
`)
}

func formatDefault(in *lang.Input) string {
	if in.Type == cty.String {
		return fmt.Sprintf("%q", in.Default.AsString())
	}
	b, err := builtins.CtyToJSON(in.Default)
	if err != nil {
		return "?"
	}
	return string(b)
}

func typeLabel(t cty.Type) string { return t.FriendlyNameForConstraint() }

func isInputErr(err error) bool {
	var ie *interp.InputError
	return errors.As(err, &ie)
}
