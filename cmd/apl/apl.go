package main

import (
	"errors"
	"fmt"
	"github.com/apl-lang/apl/builtins/agent"
	"io"
	"os"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/apl-lang/apl/builtins"
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
	Run      runCmd      `cmd:"" help:"Run a playbook. Its inputs are flags: apl run PLAYBOOK --phase 6.3 --pass-threshold 7."`
	Resume   resumeCmd   `cmd:"" help:"Continue a run that was interrupted, killed or failed in a step."`
	Validate validateCmd `cmd:"" help:"Check playbooks and report every problem with its location."`
	Test     testCmd     `cmd:"" help:"Run the tests in *_test.hcl files beside playbooks, with mocked agents."`
	Graph    graphCmd    `cmd:"" help:"Show a playbook's step graph as text, DOT or Mermaid."`
	Fmt      fmtCmd      `cmd:"" help:"Format playbook files in the canonical HCL style."`
	Stdlib   stdlibCmd   `cmd:"" help:"List or show the playbooks built into apl."`
	Version  versionCmd  `cmd:"" help:"Print apl's version."`
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
			code = exitInternal
		}
	}()
	var c cli
	exited := false
	helpOut := stdout
	if len(args) == 0 {
		// Plain apl is a usage error that shows the usage, as go does.
		args, helpOut = []string{"--help"}, stderr
	}
	args, runArgs := splitRun(args)
	parser, err := kong.New(&c,
		kong.Name("apl"),
		kong.Description("apl runs playbooks: protocols for AI coding agents written as checked HCL.\n\nExit codes: 0 ok, 1 run failed or problems found, 2 usage error or invalid playbook, 3 internal error, 4 waiting for a human decision, 130 interrupted. A playbook may map its final statuses to other codes with exit_codes."),
		kong.Writers(helpOut, stderr),
		kong.Exit(func(int) { exited = true }),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		fmt.Fprintf(stderr, "apl: %v\n", err)
		return exitInternal
	}
	kctx, err := parser.Parse(args)
	if exited {
		if helpOut == stderr {
			return exitUsage
		}
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "apl: %v\n", err)
		return exitUsage
	}
	if runArgs != nil {
		c.Run.Args = runArgs
	}
	e := &env{stdout: stdout, stderr: stderr, loader: &lang.Loader{Stdlib: stdlib.FS(), Builtins: builtins.Funcs().Names(), DecodeAnswer: agent.CheckAnswer}}
	err = kctx.Run(e)
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

// splitRun splits apl run PLAYBOOK ARGS... after the playbook. ARGS are
// the playbook's own flags, which only runCmd can parse, once it has loaded
// the playbook; kong, given them, would act on --help itself and split
// --existing-plan=false into a flag and an argument. apl run --help, with
// no playbook, stays kong's.
func splitRun(args []string) (kongArgs, runArgs []string) {
	if len(args) < 2 || args[0] != "run" || strings.HasPrefix(args[1], "-") {
		return args, nil
	}
	return args[:2], args[2:]
}

func writeDiags(w io.Writer, pb *lang.Playbook, diags hcl.Diagnostics, extra ...map[string][]byte) {
	width := 100
	color := false
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		color = os.Getenv("NO_COLOR") == ""
	}
	files := pb.Files()
	for _, m := range extra {
		for name, src := range m {
			files[name] = &hcl.File{Bytes: src}
		}
	}
	dw := hcl.NewDiagnosticTextWriter(w, files, uint(width), color)
	dw.WriteDiagnostics(diags)
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
	fmt.Fprintf(e.stdout, "apl %s\n", version)
	return nil
}
