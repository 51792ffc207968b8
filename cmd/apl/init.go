package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"
)

// scaffold holds the files apl init writes, as templates, and under
// roadmap/ those of a project for stdlib:orchestrator and
// stdlib:phase-runner, as they are.
//
//go:embed scaffold/*.tmpl scaffold/roadmap/*.tmpl
var scaffold embed.FS

type initCmd struct {
	Dir  string `arg:"" optional:"" default:"." help:"The directory to write the playbook in; made if missing (default: the current directory)."`
	From string `placeholder:"stdlib:NAME" help:"Write a minimal project for this stdlib playbook instead: its files in the formats its parsers read, with comments, and an example agent (stdlib:orchestrator, stdlib:phase-runner)."`
}

// projectFiles are the files apl init --from writes for a playbook that
// reads a roadmap: their path in the project, their source in
// scaffold/roadmap/, and their mode.
var projectFiles = []struct {
	path, src string
	mode      fs.FileMode
}{
	{".planning/ROADMAP.md", "ROADMAP.md", 0o644},
	{".planning/config.json", "config.json", 0o644},
	{".planning/phases/01-greeting/README.md", "phase1-README.md", 0o644},
	{".planning/phases/02-farewell/README.md", "phase2-README.md", 0o644},
	{"agent.sh", "agent.sh", 0o755},
}

// projectPlaybooks are the stdlib playbooks apl init --from knows.
var projectPlaybooks = []string{"stdlib:orchestrator", "stdlib:phase-runner"}

// scaffoldFiles are the files apl init writes: the template's name in
// scaffold/, and the file's mode.
var scaffoldFiles = []struct {
	name string
	mode fs.FileMode
}{
	{"main.hcl", 0o644},
	{"agent.sh", 0o755},
	{"main_test.hcl", 0o644},
}

func (c *initCmd) Run(e *env) error {
	if c.From != "" {
		return c.project(e)
	}
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return exitWith(exitInternal, err)
	}
	data := struct{ Name, Dir string }{Name: playbookName(filepath.Base(abs)), Dir: shellQuote(filepath.ToSlash(c.Dir))}
	// Nothing is written if any file is there already.
	var exist []string
	for _, f := range scaffoldFiles {
		p := filepath.Join(c.Dir, f.name)
		if _, err := os.Lstat(p); err == nil {
			exist = append(exist, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return exitWith(exitUsage, err)
		}
	}
	if len(exist) > 0 {
		what := exist[0] + " already exists"
		if n := len(exist); n > 1 {
			what = strings.Join(exist[:n-1], ", ") + " and " + exist[n-1] + " already exist"
		}
		return exitWith(exitUsage, fmt.Errorf("init: %s; apl init writes only new files: choose another directory", what))
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return exitWith(exitUsage, fmt.Errorf("init: %w", err))
	}
	for _, f := range scaffoldFiles {
		t, err := template.ParseFS(scaffold, "scaffold/"+f.name+".tmpl")
		if err != nil {
			return exitWith(exitInternal, err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			return exitWith(exitInternal, err)
		}
		p := filepath.Join(c.Dir, f.name)
		// O_EXCL: a file made since the check above is not overwritten.
		out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
		if err != nil {
			return exitWith(exitUsage, fmt.Errorf("init: %w", err))
		}
		_, werr := out.Write(b.Bytes())
		if err := errors.Join(werr, out.Close()); err != nil {
			return exitWith(exitInternal, fmt.Errorf("init: %s: %w", p, err))
		}
		fmt.Fprintln(e.stdout, p)
	}
	fmt.Fprintf(e.stderr, "Try it:\n  apl run %[1]s --agent-cmd %[1]s/agent.sh\n  apl test %[1]s\n", data.Dir)
	return nil
}

// playbookName makes a playbook name of a directory's name: letters,
// digits, - and _ kept, anything else a -.
func playbookName(dir string) string {
	name := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '-'
	}, dir)
	if strings.Trim(name, "-") == "" {
		return "playbook"
	}
	return name
}

// project is apl init --from: a minimal project for a stdlib playbook.
func (c *initCmd) project(e *env) error {
	if !slices.Contains(projectPlaybooks, c.From) {
		return exitWith(exitUsage, fmt.Errorf("init: --from %s: apl init writes a project for %s", c.From, strings.Join(projectPlaybooks, " and ")))
	}
	var files []writeFile
	for _, f := range projectFiles {
		b, err := scaffold.ReadFile("scaffold/roadmap/" + f.src + ".tmpl")
		if err != nil {
			return exitWith(exitInternal, err)
		}
		files = append(files, writeFile{filepath.Join(c.Dir, filepath.FromSlash(f.path)), b, f.mode})
	}
	if err := writeNew(e, files); err != nil {
		return err
	}
	cd := ""
	if c.Dir != "." {
		cd = "  cd " + shellQuote(filepath.ToSlash(c.Dir)) + "\n"
	}
	fmt.Fprintf(e.stderr, "Try it, in a git repository (the phase runner commits, and starts only on a clean tree):\n%s"+
		"  git init -q && git add -A && git commit -qm start\n"+
		"  apl run stdlib:orchestrator --agent-cmd ./agent.sh                                   # every phase of .planning/ROADMAP.md\n"+
		"  apl run stdlib:phase-runner 1 --roadmap-path .planning/ROADMAP.md --agent-cmd ./agent.sh  # one phase\n"+
		"agent.sh is an example agent, not an AI; .planning/ROADMAP.md says what the playbooks read.\n", cd)
	return nil
}

// writeFile is a file apl init writes.
type writeFile struct {
	path string
	data []byte
	mode fs.FileMode
}

// writeNew writes files, each a new file: nothing is written if any is
// there already.
func writeNew(e *env, files []writeFile) error {
	var exist []string
	for _, f := range files {
		if _, err := os.Lstat(f.path); err == nil {
			exist = append(exist, f.path)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return exitWith(exitUsage, err)
		}
	}
	if len(exist) > 0 {
		what := exist[0] + " already exists"
		if n := len(exist); n > 1 {
			what = strings.Join(exist[:n-1], ", ") + " and " + exist[n-1] + " already exist"
		}
		return exitWith(exitUsage, fmt.Errorf("init: %s; apl init writes only new files: choose another directory", what))
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return exitWith(exitUsage, fmt.Errorf("init: %w", err))
		}
		// O_EXCL: a file made since the check above is not overwritten.
		out, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
		if err != nil {
			return exitWith(exitUsage, fmt.Errorf("init: %w", err))
		}
		_, werr := out.Write(f.data)
		if err := errors.Join(werr, out.Close()); err != nil {
			return exitWith(exitInternal, fmt.Errorf("init: %s: %w", f.path, err))
		}
		fmt.Fprintln(e.stdout, f.path)
	}
	return nil
}
