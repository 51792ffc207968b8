package main

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/apl-lang/apl/stdlib"
)

type stdlibCmd struct {
	List stdlibListCmd `cmd:"" help:"List the stdlib playbooks."`
	Show stdlibShowCmd `cmd:"" help:"Print a stdlib playbook's files."`
}

type stdlibListCmd struct{}

func (stdlibListCmd) Run(e *env) error {
	names := stdlib.Names()
	if len(names) == 0 {
		fmt.Fprintln(e.stdout, "no stdlib playbooks yet")
		return nil
	}
	for _, n := range names {
		pb, _ := e.loader.Load("stdlib:" + n)
		fmt.Fprintf(e.stdout, "stdlib:%-20s %s\n", n, pb.Description)
	}
	return nil
}

type stdlibShowCmd struct {
	Name string `arg:"" help:"The playbook's name, with or without stdlib:."`
}

func (c *stdlibShowCmd) Run(e *env) error {
	name := strings.TrimPrefix(c.Name, "stdlib:")
	entries, err := fs.ReadDir(stdlib.FS(), name)
	if err != nil {
		return exitWith(exitUsage, fmt.Errorf("there is no stdlib playbook %q; apl stdlib list shows them", name))
	}
	for _, en := range entries {
		if en.IsDir() {
			continue
		}
		b, err := fs.ReadFile(stdlib.FS(), path.Join(name, en.Name()))
		if err != nil {
			return exitWith(exitInternal, err)
		}
		fmt.Fprintf(e.stdout, "# stdlib:%s/%s\n%s\n", name, en.Name(), b)
	}
	return nil
}
