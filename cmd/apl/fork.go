package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/lang/diff"
)

type forkCmd struct {
	Name string `arg:"" help:"The stdlib playbook, stdlib:NAME (or NAME)."`
	Dir  string `arg:"" help:"The directory to copy it into; it must not exist, or be empty."`
}

func (c *forkCmd) Run(e *env) error {
	name := strings.TrimPrefix(c.Name, lang.StdlibPrefix)
	ref := lang.StdlibPrefix + name
	lib := e.loader.Stdlib
	if lib == nil {
		return exitWith(exitInternal, fmt.Errorf("no stdlib is built into this apl"))
	}
	if st, err := fs.Stat(lib, name); err != nil || !st.IsDir() || name == "." || strings.Contains(name, "/") {
		return exitWith(exitUsage, fmt.Errorf("there is no stdlib playbook %q; apl stdlib list shows them", name))
	}
	// Only a playbook that loads is worth a copy, and its hash is what the
	// fork records.
	pb, _, err := e.load(ref)
	if err != nil {
		return err
	}
	if entries, err := os.ReadDir(c.Dir); err == nil && len(entries) > 0 {
		return exitWith(exitUsage, fmt.Errorf("%s is not empty; fork writes only into a new or empty directory, and overwrites nothing", c.Dir))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return exitWith(exitUsage, err)
	}
	n, err := diff.Copy(lib, name, c.Dir, shellQuote(c.Dir), diff.NewRecord(pb, ref, buildVersion()))
	if err != nil {
		return exitWith(exitInternal, fmt.Errorf("copying %s into %s: %w", ref, c.Dir, err))
	}
	fmt.Fprintf(e.stdout, "forked %s into %s (%d files); apl diff %s %s shows what changed since\n",
		ref, c.Dir, n, shellQuote(c.Dir), ref)
	return nil
}
