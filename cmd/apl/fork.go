package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/apl-lang/apl/lang"
)

type forkCmd struct {
	Name string `arg:"" help:"The stdlib playbook, stdlib:NAME (or NAME)."`
	Dir  string `arg:"" help:"The directory to copy it into; it must not exist, or be empty."`
}

// forkFile records where a forked playbook came from. It is not a .hcl
// file, so the playbook does not load it.
const forkFile = ".apl-fork"

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
	var files []string
	err = fs.WalkDir(lib, name, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := fs.ReadFile(lib, p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, name+"/")
		dst := filepath.Join(c.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		files = append(files, rel)
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return exitWith(exitInternal, fmt.Errorf("copying %s into %s: %w", ref, c.Dir, err))
	}
	record := fmt.Sprintf(`# apl fork copied this playbook from apl's stdlib. See what changed since:
#   apl diff %s %s
upstream    = %q
apl_version = %q
hash        = %q
`, shellQuote(c.Dir), ref, ref, buildVersion(), "sha256:"+pb.Hash)
	if err := os.WriteFile(filepath.Join(c.Dir, forkFile), []byte(record), 0o644); err != nil {
		return exitWith(exitInternal, err)
	}
	fmt.Fprintf(e.stdout, "forked %s into %s (%d files); apl diff %s %s shows what changed since\n",
		ref, c.Dir, len(files), shellQuote(c.Dir), ref)
	return nil
}
