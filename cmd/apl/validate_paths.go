package main

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// expandPaths turns validate's arguments into playbooks to load. DIR/...
// (./... for the current directory) stands for every playbook below DIR;
// any other argument is a playbook as it is. allow are the directories
// outside DIR's project that may be read (--allow-path).
func expandPaths(args []string, allow []string) ([]string, error) {
	var out []string
	for _, a := range args {
		root, ok := strings.CutSuffix(filepath.ToSlash(a), "/...")
		if !ok && a != "..." {
			out = append(out, a)
			continue
		}
		if a == "..." {
			root = "."
		}
		found, err := findPlaybooks(filepath.FromSlash(root), lang.FindProject(filepath.FromSlash(root), allow))
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no playbooks in %s or below", a, root)
		}
		out = append(out, found...)
	}
	return out, nil
}

// findPlaybooks walks root for playbooks, as go's ./... walks for
// packages: directories named testdata, or starting with . or _, are
// skipped. A directory whose .hcl files (test files aside) hold one
// playbook block is one playbook, however many files it has; a directory
// with several playbook blocks, each in its own file, holds that many
// single-file playbooks. Files with no playbook block (prompts, test
// files, other HCL) are skipped, and so is a directory of none. Files are
// read only inside proj: a .hcl symlink that leads out of it is not read
// (loading its directory says why).
func findPlaybooks(root string, proj *lang.Project) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		files, err := playbookFiles(p, proj)
		if err != nil {
			return err
		}
		switch {
		case len(files) == 1:
			out = append(out, p)
		case len(files) > 1:
			out = append(out, files...)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// playbookFiles lists the files of dir that declare a playbook block.
func playbookFiles(dir string, proj *lang.Project) ([]string, error) {
	entries, err := proj.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".hcl") || strings.HasSuffix(e.Name(), "_test.hcl") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		src, err := proj.ReadFile(p)
		if pe := (*lang.PathError)(nil); errors.As(err, &pe) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if declaresPlaybook(src, p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// declaresPlaybook reports whether an HCL file has a top-level playbook
// block. A file too broken to parse counts when its text has one, so that
// validate reports its errors rather than skipping it.
func declaresPlaybook(src []byte, name string) bool {
	f, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos)
	if f == nil {
		return false
	}
	if body, ok := f.Body.(*hclsyntax.Body); ok && !diags.HasErrors() {
		for _, b := range body.Blocks {
			if b.Type == "playbook" {
				return true
			}
		}
		return false
	}
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "playbook ") {
			return true
		}
	}
	return false
}
