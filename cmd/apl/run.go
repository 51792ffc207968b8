package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/agext/levenshtein"
	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
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
	if !opts.quiet {
		if len(warnings) > 0 {
			writeDiags(e.stderr, pb, warnings)
		}
		warnClashes(e.stderr, pb)
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

// report prints how a run ended and turns it into an exit code. With
// asJSON, stdout gets the output object and nothing else, however the run
// ended ("{}" when there is none yet), so it is always one JSON document.
func report(e *env, pb *lang.Playbook, res *interp.Result, err error, asJSON bool) error {
	var inErr *interp.InputError
	switch {
	case errors.As(err, &inErr):
		return exitWith(exitUsage, err)
	case errors.Is(err, interp.ErrInterrupted):
		if asJSON {
			fmt.Fprintf(e.stdout, "%s\n", outputJSON(res))
		}
		fmt.Fprintf(e.stderr, "apl: run %s interrupted; continue it with: %s\n", res.RunID, resumeCommand(res))
		return exitWith(exitInterrupted, nil)
	case err != nil:
		return exitWith(exitInternal, err)
	case res.Status == interp.StatusWaiting:
		if asJSON {
			fmt.Fprintf(e.stdout, "%s\n", outputJSON(res))
		} else {
			fmt.Fprintf(e.stdout, "waiting: run %s (%s)\n", res.RunID, relPath(res.Dir))
		}
		reason := res.Reason
		if !defaultRunsDir(res) {
			// interp's hint is for the default runs directory.
			reason = strings.Replace(reason, "apl resume ", resumeCommand(res)+" ", 1)
		}
		fmt.Fprintf(e.stderr, "apl: %s\n", reason)
		return exitWith(exitWaiting, nil)
	}
	if asJSON {
		fmt.Fprintf(e.stdout, "%s\n", outputJSON(res))
	} else {
		fmt.Fprintf(e.stdout, "%s: run %s (%s)\n", res.Status, res.RunID, relPath(res.Dir))
		if res.Reason != "" {
			fmt.Fprintf(e.stdout, "reason: %s\n", res.Reason)
		}
		if res.Recommendation != "" {
			fmt.Fprintf(e.stdout, "recommendation: %s\n", res.Recommendation)
		}
		if pb.Output != nil {
			// Indented as it is, not decoded: numbers keep every digit.
			var b bytes.Buffer
			if err := json.Indent(&b, outputJSON(res), "", "  "); err != nil {
				return exitWith(exitInternal, fmt.Errorf("output: %w", err))
			}
			fmt.Fprintf(e.stdout, "%s\n", b.Bytes())
		}
	}
	if code := pb.ExitCode(res.Status); code != exitOK {
		return exitWith(code, nil)
	}
	return nil
}

// outputJSON is the run's output object, "{}" when it has none.
func outputJSON(res *interp.Result) []byte {
	if res == nil || len(res.OutputJSON) == 0 {
		return []byte("{}")
	}
	return res.OutputJSON
}

// resumeCommand is the apl resume command that continues a run from the
// user's directory: it names the runs directory unless it is apl resume's
// default, ./.apl/runs, which --workdir and --runs-dir move it from.
func resumeCommand(res *interp.Result) string {
	if defaultRunsDir(res) {
		return "apl resume " + shellQuote(res.RunID)
	}
	return "apl resume --runs-dir " + shellQuote(relPath(filepath.Dir(res.Dir))) + " " + shellQuote(res.RunID)
}

// defaultRunsDir reports whether a run's directory is in the runs
// directory apl resume looks in by default.
func defaultRunsDir(res *interp.Result) bool {
	abs, err1 := filepath.Abs(filepath.Dir(res.Dir))
	def, err2 := filepath.Abs(filepath.Join(".apl", "runs"))
	return err1 == nil && err2 == nil && abs == def
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

// runFlags registers the run options on fs, to be read into o.
func runFlags(fs *flag.FlagSet, o *runOptions) {
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
}

// isRunOption reports whether a flag name belongs to apl run itself: a run
// option, or help. An input cannot have such a flag; it is set with --var.
func isRunOption(name string) bool {
	if name == "help" || name == "h" {
		return true
	}
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	runFlags(fs, &runOptions{})
	return fs.Lookup(name) != nil
}

// isHelp reports whether args ask for help (--help, -h), wherever it
// stands before a "--": help must work whatever the other flags are, and
// whatever the inputs are named.
func isHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "--h", "-help", "--help":
			return true
		}
	}
	return false
}

// rawInput is an input's value as given, and the flag that gave it, for
// messages.
type rawInput struct {
	val, flag string
}

// parseRunArgs reads the flags after the playbook: run options and one
// flag per input (pass_threshold → --pass-threshold, plus its alias).
// ref is the playbook as the user named it, for hints.
func parseRunArgs(pb *lang.Playbook, ref string, args []string) (runOptions, map[string]cty.Value, bool, error) {
	var o runOptions
	if isHelp(args) {
		return o, nil, true, nil
	}
	fs := flag.NewFlagSet("apl run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	runFlags(fs, &o)
	raw := map[string]rawInput{}
	for _, in := range pb.Inputs {
		in := in
		for _, n := range inputFlags(in) {
			set := func(s string) error {
				if _, dup := raw[in.Name]; dup {
					return fmt.Errorf("input %q given twice", in.Name)
				}
				raw[in.Name] = rawInput{s, "--" + n}
				return nil
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
		return o, nil, false, argError(pb, args, fs.Args())
	}
	for _, v := range o.vars {
		name, val, ok := strings.Cut(v, "=")
		if !ok {
			return o, nil, false, fmt.Errorf("--var %q: want name=value", v)
		}
		if _, dup := raw[name]; dup {
			return o, nil, false, fmt.Errorf("input %q given twice", name)
		}
		raw[name] = rawInput{val, "--var " + name}
	}
	inputs := map[string]cty.Value{}
	for name, r := range raw {
		in := pb.Input(name)
		if in == nil {
			return o, nil, false, fmt.Errorf("--var %s: playbook %q has no input %q%s", name, pb.Name, name, suggestInput(pb, name))
		}
		v, err := parseInput(in, r.val)
		if err != nil {
			return o, nil, false, fmt.Errorf("%s: %w", r.flag, err)
		}
		inputs[name] = v
	}
	return o, inputs, false, nil
}

// argError explains an argument left after the flags, rest. The usual
// cause is a value after a bool input's flag: --existing-plan false sets
// the input and leaves false over, since a bool flag takes its value only
// after "=".
func argError(pb *lang.Playbook, args, rest []string) error {
	if i := len(args) - len(rest) - 1; i >= 0 {
		name := strings.TrimLeft(args[i], "-")
		if in := inputByFlag(pb, name); in != nil && in.Type == cty.Bool && args[i] != name && !strings.Contains(name, "=") {
			return fmt.Errorf("unexpected argument %q: --%s is a bool input; give its value after =, e.g. --%s=%s", rest[0], name, name, boolExample(rest[0]))
		}
	}
	return fmt.Errorf("unexpected argument %q: inputs are given as flags, e.g. --%s VALUE", rest[0], firstInputFlag(pb))
}

// boolExample is the value to show in a hint for a bool flag: the user's,
// if it is a bool.
func boolExample(s string) string {
	if _, err := strconv.ParseBool(s); err == nil {
		return s
	}
	return "false"
}

// inputByFlag returns the input that a flag sets, or nil.
func inputByFlag(pb *lang.Playbook, name string) *lang.Input {
	for _, in := range pb.Inputs {
		if slices.Contains(inputFlags(in), name) {
			return in
		}
	}
	return nil
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

// suggestInput suggests the input closest to a name given to --var, in the
// form --var takes: the input's flag may be missing, or be a run option's.
func suggestInput(pb *lang.Playbook, name string) string {
	best, dist := "", 3
	for _, in := range pb.Inputs {
		if d := levenshtein.Distance(name, in.Name, nil); d < dist {
			best, dist = in.Name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean --var %s=...?)", best)
}

// inputFlags lists the flags that set an input, its alias first. A name
// that a run option has is left out: the run option wins, and the input
// stays reachable with --var.
func inputFlags(in *lang.Input) []string {
	names := []string{in.FlagName()}
	if in.Flag != "" && in.Flag != in.FlagName() {
		names = []string{in.Flag, in.FlagName()}
	}
	return slices.DeleteFunc(names, isRunOption)
}

// clashingFlags lists the flags an input would have but cannot, since run
// options have them.
func clashingFlags(in *lang.Input) []string {
	names := []string{in.FlagName()}
	if in.Flag != "" && in.Flag != in.FlagName() {
		names = []string{in.Flag, in.FlagName()}
	}
	return slices.DeleteFunc(names, func(n string) bool { return !isRunOption(n) })
}

// warnClashes tells the user of the inputs whose flags are taken by run
// options, and how to set them instead.
func warnClashes(w io.Writer, pb *lang.Playbook) {
	for _, in := range pb.Inputs {
		clash := clashingFlags(in)
		if len(clash) == 0 {
			continue
		}
		how := fmt.Sprintf("--var %s=VALUE", in.Name)
		if flags := inputFlags(in); len(flags) > 0 {
			how = "--" + flags[0]
		}
		fmt.Fprintf(w, "apl: warning: input %q cannot be set with --%s, a run option of apl run; set it with %s\n", in.Name, strings.Join(clash, " or --"), how)
	}
}

// firstInputFlag is the flag for the example in a hint: the first input's
// alias if it has one, as the playbook's author chose it for users.
func firstInputFlag(pb *lang.Playbook) string {
	for _, in := range pb.Inputs {
		if flags := inputFlags(in); len(flags) > 0 {
			return flags[0]
		}
	}
	return "name"
}

// parseInput reads a command-line value for an input; the caller puts
// the flag in front of lang's message about what the user typed.
func parseInput(in *lang.Input, s string) (cty.Value, error) {
	v, err := in.ParseValue(s)
	var ve *lang.ValueError
	if errors.As(err, &ve) {
		return cty.NilVal, errors.New(ve.Msg)
	}
	return v, err
}

func printRunHelp(w io.Writer, pb *lang.Playbook, ref string) {
	fmt.Fprintf(w, "Usage: apl run %s [flags]\n\n", ref)
	if pb.Description != "" {
		fmt.Fprintf(w, "%s\n\n", pb.Description)
	}
	fmt.Fprintf(w, "Inputs:\n")
	for _, in := range pb.Inputs {
		name := "--" + strings.Join(inputFlags(in), ", --")
		req := "required"
		if !in.Required() {
			req = "default " + formatDefault(in)
		}
		note := ""
		if clash := clashingFlags(in); len(clash) > 0 && len(inputFlags(in)) == 0 {
			name = "--var " + in.Name + "=VALUE"
			note = fmt.Sprintf("; only with --var: --%s is a run option", strings.Join(clash, " and --"))
		}
		desc := in.Description
		if desc != "" {
			desc += " "
		}
		fmt.Fprintf(w, "  %-32s %s(%s, %s%s)\n", name, desc, typeLabel(in.Type), req, note)
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
