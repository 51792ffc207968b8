package builtins

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutsideWorkdir is wrapped by every error about a path that leaves the
// project root, so callers can tell a sandbox refusal from an I/O failure.
var ErrOutsideWorkdir = errors.New("path is outside the working directory")

// ResolvePath turns p (relative to root, or absolute) into an absolute path
// and refuses it unless it stays inside root. The check is made twice: once
// on the cleaned name, so "../x" never reaches the file system, and once on
// the real location of the deepest part that already exists, so a symlink
// inside the project cannot point a write outside it. p need not exist,
// which lets file.write create new files and directories.
func ResolvePath(root, p string) (string, error) {
	if root == "" {
		return "", errors.New("working directory is not set")
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(root, p)
	}
	abs = filepath.Clean(abs)
	if !within(root, abs) {
		return "", fmt.Errorf("%q: %w %s", p, ErrOutsideWorkdir, root)
	}

	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	existing, rest := abs, ""
	for {
		real, err := filepath.EvalSymlinks(existing)
		if err == nil {
			if !within(realRoot, real) {
				return "", fmt.Errorf("%q resolves to %s: %w %s", p, real, ErrOutsideWorkdir, root)
			}
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
}

// relToRoot names abs the way results show paths: relative to the project
// root and slash-separated, so outputs read the same on every platform.
// Paths that resolved through a symlinked root are matched on their real
// location too.
func relToRoot(root, abs string) string {
	for _, r := range rootForms(root) {
		if rel, err := filepath.Rel(r, abs); err == nil && within(r, abs) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.ToSlash(abs)
}

// rootForms lists root as given and as the file system resolves it; a
// workdir under a symlink (macOS /tmp, say) reaches paths in both forms.
func rootForms(root string) []string {
	root, _ = filepath.Abs(root)
	forms := []string{root}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		forms = append(forms, real)
	}
	return forms
}

// within reports whether path is root itself or below it. Both must be
// clean and absolute.
func within(root, path string) bool {
	if root == path {
		return true
	}
	if !strings.HasSuffix(root, string(os.PathSeparator)) {
		root += string(os.PathSeparator)
	}
	return strings.HasPrefix(path, root)
}
