package main

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var (
	update = flag.Bool("update", false, "rewrite the golden files in testdata/script")
	bugs   = flag.Bool("bugs", false, "also run testdata/script-bugs, the scripts of known, unfixed bugs")
)

// TestMain lets the test binary act as apl: scripts run `exec apl ...`,
// which re-runs this binary and calls Main, as main.go does.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"apl": func() { os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script. go test ./cmd/apl
// -update rewrites the golden files they compare against.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(filepath.Join("testdata", "script")))
}

// TestScriptBugs runs the scripts that show known bugs; they fail until the
// bug is fixed, when the script moves to testdata/script. Run them with
// go test ./cmd/apl -run TestScriptBugs -bugs.
func TestScriptBugs(t *testing.T) {
	if !*bugs {
		t.Skip("known bugs; run with -bugs")
	}
	dir := filepath.Join("testdata", "script-bugs")
	if files, _ := filepath.Glob(filepath.Join(dir, "*.txtar")); len(files) == 0 {
		t.Skip("no known bugs")
	}
	testscript.Run(t, scriptParams(dir))
}

func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"exits": cmdExits},
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, ".home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				return err
			}
			e.Setenv("HOME", home)
			e.Setenv("NO_COLOR", "1")
			// git, for the scripts that make a repository: no user or
			// system configuration, a fixed identity.
			e.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			e.Setenv("GIT_CONFIG_GLOBAL", filepath.Join(home, ".gitconfig"))
			e.Setenv("GIT_AUTHOR_NAME", "apl test")
			e.Setenv("GIT_AUTHOR_EMAIL", "apl@example.com")
			e.Setenv("GIT_COMMITTER_NAME", "apl test")
			e.Setenv("GIT_COMMITTER_EMAIL", "apl@example.com")
			return nil
		},
	}
}

// cmdExits runs a program and checks its exit status, which exec and
// ! exec do not:
//
//	exits 2 apl run pb.hcl --count abc
//
// Like exec, it keeps the program's stdout and stderr for the commands that
// follow.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exits")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exits CODE program [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit status", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
