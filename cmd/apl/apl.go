package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/apl-lang/apl/builtins/agent"

	"github.com/alecthomas/kong"
	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/cmd/apl/internal/shortlived"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/stdlib"
	"github.com/hashicorp/hcl/v2"
	"golang.org/x/term"
)

// Exit codes. A playbook may map its own final statuses to codes with
// exit_codes; these are apl's own.
const (
	exitOK          = 0
	exitFailed      = 1 // the run failed; validate found errors; fmt --check found files to format
	exitUsage       = 2 // bad command line or inputs, or a playbook that does not load
	exitInternal    = 3 // apl could not do its own work (state not writable, ...)
	exitWaiting     = 4 // the run paused for a human decision
	exitInterrupted = 130
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

type cli struct {
	Run    runCmd    `cmd:"" help:"Run a playbook. Its inputs are flags: apl run PLAYBOOK --phase 6.3 --pass-threshold 7."`
	Resume resumeCmd `cmd:"" help:"Continue a run that was interrupted, killed or failed in a step; with --engine temporal, answer a run on Temporal and follow it."`
	validateCLI
	Runs runsCmd `cmd:"" help:"List past runs: id, playbook, status, start, duration and cost."`
	Show showCmd `cmd:"" help:"Show a run: the path it took, each step's status, time, attempts, output and error, and its artifacts."`
	Logs logsCmd `cmd:"" help:"Print what a run's steps printed and its agents answered, from its artifacts."`
	Test testCmd `cmd:"" help:"Run the tests in *_test.hcl files beside playbooks, with mocked agents."`
	graphCLI
	fmtCLI
	diffCLI
	Fork forkCmd `cmd:"" help:"Copy a stdlib playbook into a directory of your own, recording where it came from."`
	planCLI
	explainCLI
	Init       initCmd       `cmd:"" help:"Start a playbook: write main.hcl, an example agent and a test file into a directory."`
	Stdlib     stdlibCmd     `cmd:"" help:"List or show the playbooks built into apl."`
	Doctor     doctorCmd     `cmd:"" help:"Check the agent drivers a playbook uses (default: every preset): installed, version, key or login; --call tries one."`
	Ui         uiCmd         `cmd:"" name:"ui" help:"Serve a local web page of the project's runs: each run's graph with the path taken, live, every step's prompts and answers; answer a waiting question there."`
	Lsp        lspCmd        `cmd:"" name:"lsp" help:"Serve the Language Server Protocol on stdin and stdout: diagnostics as you type, hover, go to definition, completion and formatting in an editor."`
	Completion completionCmd `cmd:"" help:"Print a shell completion script: source <(apl completion bash), or zsh, or fish."`
	Worker     workerCmd     `cmd:"" help:"Serve runs started with apl run --engine temporal: run their steps, commands and agents here."`
	Cancel     cancelCmd     `cmd:"" help:"Stop a run on Temporal (--engine temporal), as Ctrl-C stops a local run; --terminate ends its workflow at once."`
	Version    versionCmd    `cmd:"" help:"Print apl's version."`
	Help       helpCmd       `cmd:"" help:"Show the help of apl or of a command: apl help run PLAYBOOK lists a playbook's inputs."`

	globals
}

// globals are the flags of apl itself, which every command takes.
type globals struct {
	VersionFlag kong.VersionFlag `name:"version" help:"Print apl's version and exit."`
	allowFlag
}

// The short-lived commands are each in a struct of their own, which cli
// embeds, so that parseShort can build a parser of one of them alone.
type validateCLI struct {
	Validate validateCmd `cmd:"" help:"Check playbooks and report every problem with its location."`
}

type graphCLI struct {
	Graph graphCmd `cmd:"" help:"Show a playbook's step graph as text, DOT or Mermaid."`
}

type fmtCLI struct {
	Fmt fmtCmd `cmd:"" help:"Format playbook files in the canonical HCL style."`
}

type diffCLI struct {
	Diff diffCmd `cmd:"" help:"Compare two playbooks block by block: blocks added, removed and changed, prompts as unified diffs; exit 1 if they differ."`
}

type planCLI struct {
	Plan planCmd `cmd:"" help:"Show the worst case of a run before it runs: agent calls, tokens, cost and time, per step and in total."`
}

type explainCLI struct {
	Explain explainCmd `cmd:"" help:"Say where an attribute of a playbook comes from: its file and line and, for a playbook that extends another, what it overrides."`
}

// env is what every command gets: where to print, and how to load.
type env struct {
	stdout, stderr io.Writer
	loader         *lang.Loader
}

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}

func exitWith(code int, err error) error { return &exitError{code, err} }

// Main runs apl with args and returns its exit code. Tests call it
// in-process.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "apl: internal error: %v\nPlease report this with the command you ran.\n", p)
			if os.Getenv("APL_TRACEBACK") != "" {
				stderr.Write(debug.Stack())
			}
			code = exitInternal
		}
	}()
	helpOut := stdout
	if len(args) == 0 {
		// Plain apl is a usage error that shows the usage, as go does.
		args, helpOut = []string{"--help"}, stderr
	}
	helping := args[0] == "help"
	if helping {
		// apl help run is apl run --help.
		args = append(slices.Clone(args[1:]), "--help")
	}
	e := &env{stdout: stdout, stderr: stderr, loader: &lang.Loader{Stdlib: stdlib.FS(), Builtins: builtins.Funcs().Names(), Signatures: builtins.Funcs(), DecodeAnswer: agent.CheckAnswer, CheckScript: builtins.CheckScriptTemplate, Drivers: agent.DriverSchema{}}}
	if args[0] == completeCommand {
		complete(stdout, e, args[1:])
		return exitOK
	}
	if kctx, g := parseShort(args); kctx != nil {
		defer shortLivedGC(args[0], os.Getenv("GOGC"))()
		e.loader.Allow = g.allowed(os.Getenv)
		return exitCode(stderr, kctx.Run(e))
	}
	var c cli
	exited := false
	parser, err := newParser(&c, helpOut, stderr, func(int) { exited = true })
	if err != nil {
		fmt.Fprintf(stderr, "apl: %v\n", err)
		return exitInternal
	}
	if helping && args[0] != "--help" && commandNode(parser, args[0]) == nil {
		var names []string
		for _, n := range parser.Model.Children {
			if !n.Hidden {
				names = append(names, n.Name)
			}
		}
		hint := ""
		if s := lang.Suggest(args[0], names); s != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", s)
		}
		fmt.Fprintf(stderr, "apl help: there is no command %q%s; the commands are %s\n", args[0], hint, strings.Join(names, ", "))
		return exitUsage
	}
	defer shortLivedGC(args[0], os.Getenv("GOGC"))()
	e.loader.Allow = scanAllowFlag(args).allowed(os.Getenv)
	if args[0] == "run" {
		// A playbook's inputs are flags of apl run: load it first, then
		// parse the command line with them.
		run := commandNode(parser, "run")
		if ref, ok := findPlaybook(run, args[1:]); ok {
			pb, warnings, err := e.load(ref)
			if err != nil {
				return exitCode(stderr, err)
			}
			c.Run.withPlaybook(ref, pb, warnings, flagNames(run))
			c.Run.args = args
			if parser, err = newParser(&c, helpOut, stderr, func(int) { exited = true }); err != nil {
				fmt.Fprintf(stderr, "apl: %v\n", err)
				return exitInternal
			}
		}
	}
	kctx, err := parser.Parse(args)
	if exited {
		if helpOut == stderr {
			return exitUsage
		}
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "apl: %v\n", parseError(parser, &c, err))
		return exitUsage
	}
	e.loader.Allow = c.allowed(os.Getenv)
	return exitCode(stderr, kctx.Run(e))
}

// shortLivedGC turns the garbage collector's pacing off for a short-lived
// command (shortlived.Commands), under a soft limit of shortlived.Limit,
// and returns what puts it back. With Go's default (a collection each time
// the heap doubles, from 4 MB) validating the four stdlib playbooks
// collected eleven times for about 55 MB allocated, a fifth of its CPU, on
// the other core and in stops; under the limit it collects none, and a
// playbook large enough to pass it (10,000 steps) collects only as it
// nears it. A GOGC the user set is left alone, and so are the commands
// that run playbooks, whose memory is bounded by collecting. Calls of Main
// at once (in one test process) share the setting: the last to return puts
// it back. An apl process that runs such a command has its heap prepared
// by package shortlived's init instead (a ballast, which keeps Go's pacing
// once a large playbook passes 100 MB, and huge pages), and this does
// nothing.
func shortLivedGC(cmd, gogc string) (restore func()) {
	if !shortlived.Commands[cmd] || gogc != "" || shortlived.Prepared {
		return func() {}
	}
	gcTuning.Lock()
	defer gcTuning.Unlock()
	if gcTuning.users == 0 {
		limit := debug.SetMemoryLimit(-1)
		if limit < shortlived.Limit {
			return func() {} // GOMEMLIMIT asks for less
		}
		gcTuning.percent, gcTuning.limit = debug.SetGCPercent(-1), limit
		debug.SetMemoryLimit(shortlived.Limit)
	}
	gcTuning.users++
	return func() {
		gcTuning.Lock()
		defer gcTuning.Unlock()
		if gcTuning.users--; gcTuning.users == 0 {
			debug.SetGCPercent(gcTuning.percent)
			debug.SetMemoryLimit(gcTuning.limit)
		}
	}
}

// gcTuning is what shortLivedGC put aside, and how many commands use it.
var gcTuning struct {
	sync.Mutex
	users   int
	percent int
	limit   int64
}

// parseShort parses the command line of a short-lived command with a
// parser of that command alone, and returns its context and apl's flags,
// or nil where it cannot stand for apl's whole parser: building that
// parser (kong reads the tags of every command's every flag) took 3-5 ms
// at each start, before anything else could run. Help, --version and
// every error fall through to the whole parser, so what apl prints then
// is the same.
func parseShort(args []string) (*kong.Context, *globals) {
	model := shortModels[args[0]]
	if model == nil {
		return nil, nil
	}
	m, g := model()
	exited := false
	parser, err := kong.New(m, parserOptions(io.Discard, io.Discard, func(int) { exited = true })...)
	if err != nil {
		return nil, nil
	}
	kctx, err := parser.Parse(args)
	if err != nil || exited {
		return nil, nil
	}
	return kctx, g
}

// shortModels make the model of parseShort's parser for each short-lived
// command, and say where in it apl's flags are.
var shortModels = map[string]func() (any, *globals){
	"validate": shortModel[validateCLI],
	"fmt":      shortModel[fmtCLI],
	"plan":     shortModel[planCLI],
	"graph":    shortModel[graphCLI],
	"explain":  shortModel[explainCLI],
	"diff":     shortModel[diffCLI],
}

// shortCLI is apl's command line with only the command in C.
type shortCLI[C any] struct {
	Cmd C `embed:""`
	globals
}

func shortModel[C any]() (any, *globals) {
	m := &shortCLI[C]{}
	return m, &m.globals
}

// newParser builds apl's kong parser over c. With c.Run given a playbook,
// apl run has a flag for each of its inputs.
func newParser(c *cli, stdout, stderr io.Writer, exit func(int)) (*kong.Kong, error) {
	return kong.New(c, append(parserOptions(stdout, stderr, exit), kong.Help(helpPrinter(c)))...)
}

// parserOptions are the options of apl's kong parsers.
func parserOptions(stdout, stderr io.Writer, exit func(int)) []kong.Option {
	return []kong.Option{
		kong.Name("apl"),
		kong.Description("apl runs playbooks: protocols for AI coding agents written as checked HCL.\n\nExit codes: 0 ok, 1 run failed or problems found, 2 usage error or invalid playbook, 3 internal error, 4 waiting for a human decision, 130 interrupted. A playbook may map its final statuses to other codes with exit_codes."),
		kong.Writers(stdout, stderr),
		kong.Exit(exit),
		kong.Vars{"version": "apl " + buildVersion()},
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
		kong.ExplicitGroups([]kong.Group{
			{Key: "inputs", Title: "Inputs:"},
			{Key: "run", Title: "Run options:"},
		}),
	}
}

// helpPrinter is kong's help, with apl run's usage line naming the
// playbook the help is about.
func helpPrinter(c *cli) kong.HelpPrinter {
	return func(opts kong.HelpOptions, ctx *kong.Context) error {
		if c.Run.ref == "" || ctx.Selected() == nil || ctx.Selected().Name != "run" {
			return kong.DefaultHelpPrinter(opts, ctx)
		}
		var b bytes.Buffer
		out := ctx.Stdout
		ctx.Stdout = &b
		err := kong.DefaultHelpPrinter(opts, ctx)
		ctx.Stdout = out
		text := strings.Replace(b.String(), "apl run <playbook>", "apl run "+shellQuote(c.Run.ref), 1)
		_, werr := io.WriteString(out, text)
		return cmp.Or(err, werr)
	}
}

// exitCode prints a command's error and returns its exit code.
func exitCode(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintf(stderr, "apl: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "apl: %v\n", err)
	return exitInternal
}

// buildVersion is apl's version: set at build time, or the module's
// version when apl was built by go install ...@VERSION.
func buildVersion() string {
	if version != "dev" {
		return version
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return version
}

// load loads a playbook. Its errors are printed and make a usage failure;
// its warnings are returned, for the caller to print unless told to be
// quiet.
func (e *env) load(ref string) (*lang.Playbook, hcl.Diagnostics, error) {
	pb, diags := e.loader.Load(ref)
	if diags.HasErrors() {
		writeDiags(e.stderr, pb, diags)
		return nil, nil, exitWith(exitUsage, fmt.Errorf("%s: %s", ref, countDiags(diags)))
	}
	return pb, diags, nil
}

func countDiags(diags hcl.Diagnostics) string {
	errs, warns := 0, 0
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs++
		} else {
			warns++
		}
	}
	return fmt.Sprintf("%s, %s", plural(errs, "error"), plural(warns, "warning"))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// isTerminal reports whether f is a terminal (not merely a character
// device such as /dev/null).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

type versionCmd struct{}

func (versionCmd) Run(e *env) error {
	fmt.Fprintf(e.stdout, "apl %s\n", buildVersion())
	return nil
}

// helpCmd is here for apl --help to list it; Main turns apl help ARGS into
// apl ARGS --help before parsing.
type helpCmd struct {
	Command []string `arg:"" optional:"" help:"The command, and for run its playbook."`
}

func (helpCmd) Run(*env) error { return nil }
