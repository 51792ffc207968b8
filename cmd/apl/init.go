package main

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

// scaffold holds the files apl init writes, as templates.
//
//go:embed scaffold/*.tmpl
var scaffold embed.FS

type initCmd struct {
	Dir string `arg:"" optional:"" default:"." help:"The directory to write the playbook in; made if missing (default: the current directory)."`
}

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
