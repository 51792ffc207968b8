package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/lang"
	"github.com/apl-lang/apl/lang/diff"
	"github.com/hashicorp/hcl/v2"
)

type fmtCmd struct {
	Paths []string `arg:"" name:"path" help:"Files or directories of .hcl files."`
	Check bool     `help:"Change nothing; list the files that need formatting and exit 1 if any."`
	Diff  bool     `help:"Change nothing; print the changes formatting would make, as a unified diff (git apply takes it)."`
}

func (c *fmtCmd) Run(e *env) error {
	files, err := hclFiles(c.Paths, e.loader.Allow)
	if err != nil {
		return exitWith(exitUsage, err)
	}
	// A file that does not parse is reported and left alone; the others
	// are still formatted, so one run shows every file to fix.
	changed := 0
	var broken []string
	unread := false
	for _, hf := range files {
		f := hf.path
		src, err := hf.proj.ReadFile(f)
		if err != nil {
			fmt.Fprintf(e.stderr, "apl: %v\n", err)
			unread = true
			continue
		}
		// lang.ParseConfig accepts apl's one-line blocks that hold a nested
		// block; formatting the text it parsed puts the nested block on its
		// own lines, the canonical form.
		out, diags := lang.Format(src, f)
		if diags.HasErrors() {
			writeDiagsSrc(e, f, src, diags)
			broken = append(broken, f)
			continue
		}
		if string(out) == string(src) {
			continue
		}
		changed++
		switch {
		case c.Diff:
			fmt.Fprint(e.stdout, diff.Unified(f, string(src), string(out)))
		case c.Check:
			fmt.Fprintln(e.stdout, f)
		default:
			if err := builtins.WriteFileAtomic(f, out, 0o644); err != nil {
				return exitWith(exitInternal, err)
			}
			fmt.Fprintln(e.stdout, f)
		}
	}
	switch {
	case len(broken) == 1:
		return exitWith(exitUsage, fmt.Errorf("%s does not parse; fix it before formatting", broken[0]))
	case len(broken) > 1:
		return exitWith(exitUsage, fmt.Errorf("%d files do not parse: %s; fix them before formatting", len(broken), strings.Join(broken, ", ")))
	case unread:
		return exitWith(exitUsage, nil)
	}
	if changed > 0 && (c.Check || c.Diff) {
		return exitWith(exitFailed, nil)
	}
	return nil
}

func writeDiagsSrc(e *env, name string, src []byte, diags hcl.Diagnostics) {
	writeFileDiags(e.stderr, map[string]*hcl.File{name: {Bytes: src}}, diags)
}

// hclFile is a file apl fmt formats, and the project it may be read in:
// that of the path it was found under, so that a .hcl symlink planted in a
// repository is not followed out of it.
type hclFile struct {
	path string
	proj *lang.Project
}

// hclFiles lists the .hcl files of paths, files or directories searched
// at any depth (hidden directories aside). allow are the directories
// outside a path's project that may be read.
func hclFiles(paths []string, allow []string) ([]hclFile, error) {
	var out []hclFile
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		proj := lang.FindProject(p, allow)
		if !st.IsDir() {
			out = append(out, hclFile{p, proj})
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != p {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, ".hcl") {
				out = append(out, hclFile{path, proj})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out, nil
}
