package builtins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/zclconf/go-cty/cty"
)

// glob {pattern} → {matches}.
func globFunc(_ context.Context, env Env, a args) (cty.Value, error) {
	pattern, err := a.required("pattern")
	if err != nil {
		return cty.NilVal, err
	}
	matches, err := Glob(env.Workdir, pattern)
	if err != nil {
		return cty.NilVal, fmt.Errorf("argument \"pattern\": %w", err)
	}
	return cty.ObjectVal(map[string]cty.Value{"matches": stringList(matches)}), nil
}

// Glob returns the files and directories under root that match pattern,
// relative to root, slash-separated and sorted, so a playbook's for_each
// over them runs in the same order everywhere.
//
// Each path segment follows path.Match (where "*" also matches names that
// start with a dot). A segment that is exactly "**" matches any number of
// segments, including none, so "src/**/*.go" finds Go files at any depth
// below src, and src/x.go too. A "**" search does not descend into .git
// directories or follow symlinks. A pattern may not reach outside root, and
// matches that resolve outside it through a symlink are dropped.
func Glob(root, pattern string) ([]string, error) {
	if pattern == "" {
		return nil, errors.New("empty pattern")
	}
	rel := filepath.ToSlash(pattern)
	if filepath.IsAbs(pattern) {
		abs, err := filepath.Abs(root)
		if err != nil {
			return nil, err
		}
		if !within(abs, filepath.Clean(pattern)) {
			return nil, fmt.Errorf("%q: %w %s", pattern, ErrOutsideWorkdir, root)
		}
		r, _ := filepath.Rel(abs, filepath.Clean(pattern))
		rel = filepath.ToSlash(r)
	}
	rel = path.Clean(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("%q: %w %s", pattern, ErrOutsideWorkdir, root)
	}
	segs := strings.Split(rel, "/")
	for _, s := range segs {
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("%q: %w", pattern, err)
		}
	}

	var found []string
	if !slices.Contains(segs, "**") {
		abs, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("%q: %w", pattern, err)
		}
		found = abs
	} else {
		var err error
		if found, err = walkGlob(root, segs); err != nil {
			return nil, err
		}
	}

	matches := make([]string, 0, len(found))
	for _, abs := range found {
		if _, err := ResolvePath(root, abs); err != nil {
			continue // a symlink leading out of the sandbox
		}
		matches = append(matches, relToRoot(root, abs))
	}
	sort.Strings(matches)
	return matches, nil
}

// walkGlob walks from the longest literal prefix of the pattern, pruning
// directories no match can lie under.
func walkGlob(root string, segs []string) ([]string, error) {
	n := 0
	for n < len(segs) && !hasMeta(segs[n]) {
		n++
	}
	start := filepath.Join(root, filepath.Join(segs[:n]...))
	var found []string
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == start && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		r, _ := filepath.Rel(root, p)
		name := strings.Split(filepath.ToSlash(r), "/")
		if r == "." {
			name = nil
		}
		if d.IsDir() && p != start && (d.Name() == ".git" || !canMatchBelow(segs, name)) {
			return filepath.SkipDir
		}
		if matchSegs(segs, name) {
			found = append(found, p)
		}
		return nil
	})
	return found, err
}

// matchSegs reports whether the path segments name match the pattern
// segments pat.
func matchSegs(pat, name []string) bool {
	if len(pat) == 0 {
		return len(name) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(name); i++ {
			if matchSegs(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	}
	if len(name) == 0 {
		return false
	}
	ok, _ := path.Match(pat[0], name[0])
	return ok && matchSegs(pat[1:], name[1:])
}

// canMatchBelow reports whether some path starting with the directory dir
// could still match pat.
func canMatchBelow(pat, dir []string) bool {
	for i, seg := range dir {
		if i >= len(pat) {
			return false
		}
		if pat[i] == "**" {
			return true
		}
		if ok, _ := path.Match(pat[i], seg); !ok {
			return false
		}
	}
	return true
}

func hasMeta(seg string) bool { return strings.ContainsAny(seg, `*?[\`) }
