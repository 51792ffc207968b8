package main

import (
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// TestScriptsWithHostAgentCLIs runs the scripts that touch the agent CLIs
// on a PATH where claude, codex and gemini are installed: they pass the
// same as on a machine without them.
func TestScriptsWithHostAgentCLIs(t *testing.T) {
	host := t.TempDir()
	for _, name := range agentCLIs {
		script := "#!/bin/sh\necho 'host " + name + " 9.9.9'\n"
		if err := os.WriteFile(filepath.Join(host, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", host+string(filepath.ListSeparator)+os.Getenv("PATH"))
	p := scriptParams("")
	for _, name := range []string{"doctor", "run_preflight", "run_agent_progress", "run_stdlib_risk_pipeline"} {
		p.Files = append(p.Files, filepath.Join("testdata", "script", name+".txtar"))
	}
	testscript.Run(t, p)
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
			path, err := hermeticPath(e.Getenv("PATH"), filepath.Join(e.WorkDir, ".path"))
			if err != nil {
				return err
			}
			e.Setenv("PATH", path)
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

// agentCLIs are the programs of apl's CLI drivers. A script sees none of
// the host's: one that needs a CLI writes a stand-in in $WORK/bin.
var agentCLIs = []string{"claude", "codex", "gemini"}

// hermeticPath returns path without the host's agent CLIs, so that a script
// passes the same with or without them installed. A directory that holds one
// is replaced by a directory under shadow holding links to everything else
// in it: the other programs there (bash, git) stay on PATH.
func hermeticPath(path, shadow string) (string, error) {
	dirs := filepath.SplitList(path)
	for i, dir := range dirs {
		if !holdsAgentCLI(dir) {
			continue
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", err
		}
		link := filepath.Join(shadow, strconv.Itoa(i))
		if err := os.MkdirAll(link, 0o755); err != nil {
			return "", err
		}
		for _, entry := range entries {
			if slices.Contains(agentCLIs, entry.Name()) {
				continue
			}
			if err := os.Symlink(filepath.Join(dir, entry.Name()), filepath.Join(link, entry.Name())); err != nil {
				return "", err
			}
		}
		dirs[i] = link
	}
	return strings.Join(dirs, string(filepath.ListSeparator)), nil
}

func holdsAgentCLI(dir string) bool {
	for _, name := range agentCLIs {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
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
