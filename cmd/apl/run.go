package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
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

	"github.com/alecthomas/kong"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

type runCmd struct {
	Playbook string `arg:"" help:"A playbook file, a directory of .hcl files, or stdlib:NAME. Its inputs are flags: 'apl run PLAYBOOK --help' lists them."`

	// Inputs holds the playbook's input flags (an *inputFlags' struct),
	// once Main has loaded the playbook; see withPlaybook.
	Inputs kong.Plugins `embed:"" group:"inputs"`

	runOptions `embed:"" group:"run"`

	ref      string // the playbook as the command line names it
	pb       *lang.Playbook
	warnings hcl.Diagnostics
	flags    *inputFlags
	args     []string // the command line, for hints
}

// runOptions are the flags of apl run that are not playbook inputs. An
// input cannot have one of their names as its flag; it is set with --var.
type runOptions struct {
	Mode           string   `placeholder:"NAME" help:"Preset inputs from one of the playbook's mode blocks."`
	Var            []string `sep:"none" aliases:"input" placeholder:"NAME=VALUE" help:"Set an input; the value is read by the input's type (HCL syntax for lists and objects). Repeatable; --input is the same."`
	VarFile        []string `sep:"none" placeholder:"FILE" help:"Set inputs from a file of name = value lines (HCL, like Terraform's .tfvars; JSON when FILE ends in .json). Repeatable; later files win."`
	JSON           bool     `name:"json" help:"Print only the output object, as JSON, on stdout."`
	AgentCmd       string   `env:"APL_AGENT_CMD" placeholder:"CMD" help:"Send every agent step to this command: the prompt on stdin, the answer on stdout."`
	Workdir        string   `placeholder:"DIR" help:"Project root where commands run (default: the current directory)."`
	RunsDir        string   `placeholder:"DIR" help:"Where run directories go (default: WORKDIR/.apl/runs)."`
	RunID          string   `name:"run-id" placeholder:"ID" help:"Name the run (default: time-based)."`
	NoSync         bool     `help:"Skip fsync on checkpoints (faster; a crash may lose the last transition)."`
	Sync           string   `enum:"group,always" default:"group" placeholder:"WHEN" help:"When completed steps are fsynced: group (one fsync on another goroutine covers those of ~50 ms; a killed apl loses nothing, a machine crash at most those) or always (each before the next step starts)."`
	NonInteractive bool     `help:"Never prompt: an ask step pauses the run as waiting (exit 4)."`

	timeoutFlags     `embed:""`
	temporalFlags    `embed:""`
	temporalRunFlags `embed:""`

	progressOptions `embed:""`
	cassetteFlags   `embed:""`
	dryRunFlags     `embed:""`
}

// runHelp is what apl run --help says of where inputs come from.
const runHelp = `Inputs come from, strongest first: their flags (--phase 6.3), --var NAME=VALUE, --var-file FILE, the environment (APL_VAR_NAME=VALUE, NAME as the input is named), the --mode's presets, and their defaults.`

// withPlaybook gives apl run the playbook the command line names, before
// kong parses it, so that its inputs are flags beside the run options.
// taken reports the run options' flag names.
func (c *runCmd) withPlaybook(ref string, pb *lang.Playbook, warnings hcl.Diagnostics, taken func(string) bool) {
	c.ref, c.pb, c.warnings = ref, pb, warnings
	c.flags = newInputFlags(pb, taken)
	c.Inputs = kong.Plugins{c.flags.value.Interface()}
}

// Help is the detail of apl run's help: the playbook's description and
// modes, when a playbook is on the command line.
func (c *runCmd) Help() string {
	if c.pb == nil {
		return runHelp
	}
	var b strings.Builder
	if c.pb.Description != "" {
		fmt.Fprintf(&b, "%s\n\n", c.pb.Description)
	}
	b.WriteString(runHelp)
	if notes := c.varOnlyHelp(); notes != "" {
		b.WriteString("\n\n" + strings.TrimSuffix(notes, "\n"))
	}
	if len(c.pb.Modes) > 0 {
		names := make([]string, 0, len(c.pb.Modes))
		for n := range c.pb.Modes {
			names = append(names, n)
		}
		sort.Strings(names)
		width := 0
		for _, n := range names {
			width = max(width, len(n))
		}
		b.WriteString("\n\nModes (--mode NAME, or --NAME where no input has that flag):\n\n")
		for _, n := range names {
			fmt.Fprintf(&b, "  %-*s  %s\n", width, n, c.pb.Modes[n].Description)
		}
	}
	return b.String()
}

// varOnlyHelp tells of the inputs that are set only with --var, since a
// flag of apl run has their flag's name.
func (c *runCmd) varOnlyHelp() string {
	var rows [][2]string
	width := 0
	for i, in := range c.pb.Inputs {
		if len(c.flags.clashes[i]) > 0 && len(c.flags.flags[i]) == 0 {
			rows = append(rows, [2]string{"--var " + in.Name + "=VALUE", inputHelp(in)})
			width = max(width, len(rows[len(rows)-1][0]))
		}
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Inputs set only with --var, as apl run has flags of their names:\n\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, r[0], r[1])
	}
	return b.String()
}

func (c *runCmd) Run(e *env) error {
	pb := c.pb
	if pb == nil {
		// Main loads the playbook before parsing; this is a safety net.
		return exitWith(exitInternal, fmt.Errorf("playbook %s was not loaded", c.Playbook))
	}
	if c.Playbook != c.ref {
		return exitWith(exitUsage, fmt.Errorf("apl run: cannot tell which is the playbook, %s or %s; put the playbook first: apl run PLAYBOOK [flags]", c.ref, c.Playbook))
	}
	inputs, from, diags, srcs, err := c.flags.collect(&c.runOptions, os.Getenv)
	if len(diags) > 0 {
		writeDiags(e.stderr, pb, diags, srcs)
	}
	if err != nil {
		return exitWith(exitUsage, err)
	}
	if c.Mode, err = c.flags.mode(c.Mode); err != nil {
		return exitWith(exitUsage, err)
	}
	opts := c.runOptions
	if !opts.Quiet {
		if len(c.warnings) > 0 {
			writeDiags(e.stderr, pb, c.warnings)
		}
		c.warnClashes(e.stderr)
	}
	agentCmd, err := splitCommand(opts.AgentCmd)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("--agent-cmd: %w", err))
	}
	if err := checkRunPlace(opts); err != nil {
		return exitWith(exitUsage, err)
	}
	if opts.DryRun {
		return c.dryRun(e, inputs, from)
	}
	if opts.ShowPrompts || opts.Mocks != "" || opts.Test != "" {
		return exitWith(exitUsage, errors.New("--show-prompts, --mocks and --test go with --dry-run"))
	}
	timeouts, agentTimeout, err := opts.limits(pb)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	if opts.Engine == engineTemporal {
		if opts.timeoutFlags.set() {
			return exitWith(exitUsage, errors.New("--timeout and --agent-timeout go with the local engine; on Temporal, set the steps' timeout attributes"))
		}
		return c.runTemporal(e, inputs, agentCmd)
	}
	if err := setEnvLocal(opts.SendEnv); err != nil {
		return exitWith(exitUsage, err)
	}
	if err := preflight(pb, agentCmd, cmp.Or(opts.Workdir, "."), opts.cassetteFlags); err != nil {
		return exitWith(exitUsage, err)
	}
	drivers, err := runDrivers(pb, agentCmd, opts.cassetteFlags, true)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	prog := newProgress(e.stderr, opts.progressOptions, pb)
	ropts := interp.Options{
		Workdir: opts.Workdir, RunsDir: opts.RunsDir, RunID: opts.RunID, Inputs: inputs,
		Mode: opts.Mode, AgentCommand: agentCmd, Drivers: drivers, NoSync: opts.NoSync, SyncAlways: opts.Sync == "always",
		Timeouts: timeouts, AgentTimeout: agentTimeout,
		Observer: prog,
		Asker:    asker(e.stderr, opts.NonInteractive, prog),
	}
	if opts.Verbose && !opts.Quiet {
		ropts.Output = prog.output
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := interp.Start(ctx, pb, c.Playbook, ropts)
	prog.close()
	if ie := (*interp.InputError)(nil); errors.As(err, &ie) {
		return exitWith(exitUsage, c.flags.inputError(ie, from, opts.Mode))
	}
	return report(e, pb, res, err, opts.JSON)
}

// argError explains an argument left after the playbook and the flags.
// The usual cause is a value after a bool input's flag: --existing-plan
// false sets the input and leaves false over, since a bool flag takes its
// value only after "=".
func (c *runCmd) argError(extra string) error {
	if i := slices.Index(c.args, extra); i > 0 {
		prev := c.args[i-1]
		name := strings.TrimLeft(prev, "-")
		if in := c.flags.byFlag(name); in != nil && in.Type == cty.Bool && prev != name {
			return fmt.Errorf("unexpected argument %q: --%s is a bool input; give its value after =, e.g. --%s=%s", extra, name, name, boolExample(extra))
		}
	}
	if in := c.pb.PositionalInput(); in != nil {
		return fmt.Errorf("unexpected argument %q: apl run takes one argument after the playbook, input %q; other inputs are given as flags, e.g. --%s VALUE (quote an argument that holds spaces)", extra, in.Name, c.flags.first())
	}
	return fmt.Errorf("unexpected argument %q: inputs are given as flags, e.g. --%s VALUE", extra, c.flags.first())
}

// warnClashes tells the user of the inputs whose flags are taken by run
// options, and how to set them instead.
func (c *runCmd) warnClashes(w io.Writer) {
	for i, in := range c.pb.Inputs {
		clash := c.flags.clashes[i]
		if len(clash) == 0 {
			continue
		}
		how := fmt.Sprintf("--var %s=VALUE", in.Name)
		if flags := c.flags.flags[i]; len(flags) > 0 {
			how = "--" + flags[0]
		}
		fmt.Fprintf(w, "apl: warning: input %q cannot be set with --%s, a run option of apl run; set it with %s\n", in.Name, strings.Join(clash, " or --"), how)
	}
}

// checkRunPlace checks the user's --workdir and --run-id before the run
// starts. interp.Start would fail on them too, but with errors that cmd
// cannot tell from I/O failures (exit 3), and these are the user's
// mistakes (exit 2).
func checkRunPlace(o runOptions) error {
	if o.Workdir != "" {
		if st, err := os.Stat(o.Workdir); err != nil || !st.IsDir() {
			return fmt.Errorf("--workdir %s: no such directory", o.Workdir)
		}
	}
	id := o.RunID
	if id == "" {
		return nil
	}
	// A run id names a directory in the runs directory, next to latest.
	if id == "." || id == ".." || id == "latest" || strings.ContainsAny(id, `/\`) {
		return fmt.Errorf("--run-id %q: a run id is a plain name, not . .. latest or a path", id)
	}
	runsDir := o.RunsDir
	if runsDir == "" {
		runsDir = interp.RunsDir(o.Workdir)
	}
	if _, err := os.Stat(filepath.Join(runsDir, id)); err == nil {
		return fmt.Errorf("run %s already exists in %s; choose another --run-id", id, runsDir)
	}
	return nil
}

// report prints how a run ended and turns it into an exit code. With
// asJSON, stdout gets one JSON document however the run ended: the output
// object (see resultJSON).
func report(e *env, pb *lang.Playbook, res *interp.Result, err error, asJSON bool) error {
	return reportResume(e, pb, res, err, asJSON, "")
}

// reportResume is report with the command that continues the run, when
// it is not resumeCommand's (a run on Temporal).
func reportResume(e *env, pb *lang.Playbook, res *interp.Result, err error, asJSON bool, resume string) error {
	resumeCmd := func() string {
		if resume != "" {
			return resume
		}
		return resumeCommand(res)
	}
	var inErr *interp.InputError
	switch {
	case errors.As(err, &inErr):
		return exitWith(exitUsage, err)
	case errors.Is(err, interp.ErrInterrupted):
		if asJSON {
			fmt.Fprintf(e.stdout, "%s\n", resultJSON(res))
		}
		fmt.Fprintf(e.stderr, "apl: run %s interrupted; continue it with: %s\n", res.RunID, resumeCmd())
		return exitWith(exitInterrupted, nil)
	case err != nil:
		return exitWith(exitInternal, err)
	case res.Status == interp.StatusWaiting:
		if asJSON {
			fmt.Fprintf(e.stdout, "%s\n", resultJSON(res))
		} else {
			fmt.Fprintf(e.stdout, "waiting: run %s (%s)\n", res.RunID, relPath(res.Dir))
		}
		reason := res.Reason
		if w := res.Waiting; w != nil {
			reason += "; continue with " + resumeCmd() + " --answer " + w.Key() + "=" + answerPlaceholder(w)
		}
		fmt.Fprintf(e.stderr, "apl: %s\n", reason)
		return exitWith(exitWaiting, nil)
	}
	if asJSON {
		fmt.Fprintf(e.stdout, "%s\n", resultJSON(res))
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
	if code := pb.ExitCodeOf(res.Status, res.Recommendation); code != exitOK {
		return exitWith(code, nil)
	}
	return nil
}

// answerKey names a decision for --answer: STEP, or STEP[ITEM] inside a
// for_each.
// answerPlaceholder stands for the answer in hints: a choice, or text a
// person types (quoted for the shell, as it may hold spaces).
func answerPlaceholder(w *interp.Waiting) string {
	if w.Text {
		return "'ANSWER'"
	}
	return "CHOICE"
}

// outputJSON is the run's output object, "{}" when it has none.
func outputJSON(res *interp.Result) []byte {
	if res == nil || len(res.OutputJSON) == 0 {
		return []byte("{}")
	}
	return res.OutputJSON
}

// resultJSON is what --json prints: the output object ("{}" without an
// output block), as it is when the run completed, so that a script reads
// the playbook's own fields. When the run did not complete (failed,
// waiting, interrupted, or ended with a finish status of its own), the
// object also says run_id, status, and reason and recommendation when
// set, so that a script can tell why without the output block's help.
// They are added only where the output object has no field of that name:
// the playbook's own fields win.
func resultJSON(res *interp.Result) []byte {
	out := outputJSON(res)
	if res == nil || res.Status == interp.StatusCompleted {
		return out
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(out, &obj); err != nil || obj == nil {
		return out
	}
	add := func(k, v string) {
		if _, taken := obj[k]; !taken && v != "" {
			obj[k] = jsonString(v)
		}
	}
	add("run_id", res.RunID)
	add("status", res.Status)
	add("reason", res.Reason)
	add("recommendation", res.Recommendation)
	b, err := marshalJSON(obj)
	if err != nil {
		return out
	}
	return b
}

// marshalJSON is json.Marshal without its HTML escaping: the output
// object's values stay as the run wrote them.
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func jsonString(s string) json.RawMessage {
	b, _ := marshalJSON(s)
	return b
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
	def, err2 := filepath.Abs(interp.RunsDir("."))
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

// boolExample is the value to show in a hint for a bool flag: the user's,
// if it is a bool.
func boolExample(s string) string {
	if _, err := strconv.ParseBool(s); err == nil {
		return s
	}
	return "false"
}
