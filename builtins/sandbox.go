package builtins

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrOutsideWorkdir is wrapped by every error about a path that leaves the
// project root, so callers can tell a sandbox refusal from an I/O failure.
var ErrOutsideWorkdir = errors.New("path is outside the working directory")

// ResolvePath turns p (relative to root, or absolute) into an absolute path
// and refuses it unless it stays inside root. The check is made twice: once
// on the cleaned name, so "../x" never reaches the file system, and once on
// the real location, so a symlink inside the project cannot point a read or
// a write outside it. p need not exist, which lets file.write create new
// files and directories; a symlink whose target does not exist yet (a
// dangling one) is followed to where its target would be created, so it
// cannot lead a write outside either. The result names the real location,
// with every symlink resolved; open it with OpenConfined, which refuses a
// symlink planted there after the check.
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
	real, err := realPath(abs)
	if err != nil {
		return "", fmt.Errorf("%q: %w", p, err)
	}
	if !within(realRoot, real) {
		return "", fmt.Errorf("%q resolves to %s: %w %s", p, real, ErrOutsideWorkdir, root)
	}
	return real, nil
}

// maxLinks is how many symlinks realPath follows before it calls the path
// a loop, as Linux's MAXSYMLINKS does.
const maxLinks = 40

// realPath resolves every symlink in the clean absolute path abs, including
// dangling ones, and returns where a file at abs really is or would be
// created.
func realPath(abs string) (string, error) {
	existing, rest := abs, ""
	for links := 0; ; {
		real, err := filepath.EvalSymlinks(existing)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		// EvalSymlinks fails on a dangling symlink just as on a missing
		// name; only Lstat tells them apart.
		if fi, lerr := os.Lstat(existing); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			if links++; links > maxLinks {
				return "", fmt.Errorf("too many levels of symbolic links at %s", existing)
			}
			target, err := os.Readlink(existing)
			if err != nil {
				return "", err
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(existing), target)
			}
			existing = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return filepath.Join(existing, rest), nil
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
}

// OpenConfined opens a path ResolvePath returned with O_NOFOLLOW, so that a
// symlink put in its place between the check and the open makes the open
// fail instead of being followed. Its parent directories are not
// re-checked: a process that can swap them at the right moment is outside
// what this defends against (see SECURITY.md).
func OpenConfined(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
}

// ConfinedDir checks that the directory path (relative to root, or
// absolute) really lies inside root and returns its real location. The
// interpreter calls it for its run directory (.apl), which a hostile
// checkout could plant as a symlink pointing elsewhere. The error wraps
// ErrOutsideWorkdir when path leads outside root; a path that exists but is
// not a directory is an error too. path need not exist.
func ConfinedDir(root, path string) (string, error) {
	real, err := ResolvePath(root, path)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(real); err == nil && !fi.IsDir() {
		return "", fmt.Errorf("%q is not a directory", path)
	}
	return real, nil
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
