package lang

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// A playbook may come from anyone: a pull request from a fork is checked
// by `apl validate` in CI. So every file a playbook names (the upstream it
// extends, a sub-playbook's source, a prompt file read with file(), its own
// files and test files) must lie inside its project once every symlink is
// resolved, or in a directory the user allowed. A path that leaves is
// refused before anything is read there, so no diagnostic can quote it.

// Project is the part of the file system a playbook may read: the git
// repository it is in, or outside a repository the directory apl was
// given, and any directories the user allowed explicitly.
type Project struct {
	// Root is the project's directory, symlinks resolved.
	Root string
	// dirs are the directories paths may lead into, the root first, each
	// as it was named and with its symlinks resolved.
	dirs []projectDir
}

type projectDir struct{ lex, real string }

// PathError is a path apl refuses to read for a playbook.
type PathError struct {
	// Path is the path as the playbook or the command line named it.
	Path string
	// Reason says why, after the path: "leads outside the project".
	Reason string
}

func (e *PathError) Error() string { return fmt.Sprintf("the path %q %s", e.Path, e.Reason) }

// FindProject returns the project of the playbook at ref, a file or a
// directory: the git repository it is in (the nearest directory at or
// above it that holds .git), else the directory ref names, or for a file
// the file's directory. allow are further directories the project's
// playbooks may read.
func FindProject(ref string, allow []string) *Project {
	abs, err := filepath.Abs(ref)
	if err != nil {
		abs = filepath.Clean(ref)
	}
	dir := abs
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		dir = filepath.Dir(abs)
	}
	root := dir
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			root = d
			break
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	return NewProject(root, allow)
}

// NewProject returns the project rooted at root, which may also read the
// directories allow names.
func NewProject(root string, allow []string) *Project {
	p := &Project{}
	for _, d := range append([]string{root}, allow...) {
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			real = abs
		}
		p.dirs = append(p.dirs, projectDir{abs, real})
	}
	if len(p.dirs) > 0 {
		p.Root = p.dirs[0].real
	}
	return p
}

// Resolve returns the real location of path (absolute, or relative to the
// current directory) when it lies inside the project, and otherwise a
// *PathError. A path that names a place outside is refused before
// anything there is looked at; one that leads outside through a symlink,
// once its symlinks are resolved.
func (p *Project) Resolve(path string) (string, error) {
	if strings.ContainsRune(path, 0) {
		return "", &PathError{path, "contains a NUL byte"}
	}
	if p == nil {
		return "", &PathError{path, "is on the file system, which a stdlib playbook does not read"}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if !p.holds(abs, func(d projectDir) string { return d.lex }) && !p.holds(abs, func(d projectDir) string { return d.real }) {
		return "", &PathError{path, p.outside("leads outside the project")}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			// Name the path as given, not where resolving it got to.
			return "", &fs.PathError{Op: "open", Path: path, Err: pe.Err}
		}
		return "", &PathError{path, "cannot be resolved: " + strings.TrimPrefix(err.Error(), "EvalSymlinks: ")}
	}
	if !p.holds(real, func(d projectDir) string { return d.real }) {
		return "", &PathError{path, p.outside("leads outside the project through a symlink")}
	}
	return real, nil
}

// outside completes a refusal: what the project is, and how to allow more.
func (p *Project) outside(what string) string {
	return fmt.Sprintf("%s (%s); a playbook reads only files in the git repository it is in, or outside one in the directory apl was given, unless another directory is allowed with --allow-path or APL_ALLOW_PATH", what, p.Root)
}

// holds reports whether path lies in one of the project's directories, as
// dir names them.
func (p *Project) holds(path string, dir func(projectDir) string) bool {
	for _, d := range p.dirs {
		if within(path, dir(d)) {
			return true
		}
	}
	return false
}

// within reports whether path is dir or lies below it; both are clean
// absolute paths.
func within(path, dir string) bool {
	if path == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(path, dir)
}

// open resolves path and opens the project directory holding it as an
// os.Root, returning the path's name inside that root. Reading through
// the root keeps the read inside it even if a symlink is planted after
// the check.
func (p *Project) open(path string) (*os.Root, string, error) {
	real, err := p.Resolve(path)
	if err != nil {
		return nil, "", err
	}
	for _, d := range p.dirs {
		if !within(real, d.real) {
			continue
		}
		rel, err := filepath.Rel(d.real, real)
		if err != nil {
			return nil, "", err
		}
		r, err := os.OpenRoot(d.real)
		if err != nil {
			return nil, "", err
		}
		return r, rel, nil
	}
	return nil, "", &PathError{path, p.outside("leads outside the project")}
}

// ReadFile reads the file at path if it lies inside the project.
func (p *Project) ReadFile(path string) ([]byte, error) {
	r, rel, err := p.open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := r.ReadFile(rel)
	return b, named(err, path)
}

// ReadDir lists the directory at path if it lies inside the project.
func (p *Project) ReadDir(path string) ([]fs.DirEntry, error) {
	r, rel, err := p.open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	entries, err := fs.ReadDir(r.FS(), filepath.ToSlash(rel))
	return entries, named(err, path)
}

// Stat describes the file at path if it lies inside the project.
func (p *Project) Stat(path string) (fs.FileInfo, error) {
	r, rel, err := p.open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	info, err := r.Stat(rel)
	return info, named(err, path)
}

// named makes a read error name path as it was given rather than by its
// place inside the root.
func named(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: path, Err: pe.Err}
	}
	return err
}

// checkPlaybookPath refuses a path a playbook writes that could mean
// something else on another system: one with a backslash or a Windows
// drive, which Windows would read as a separator or a root. Playbook
// paths use forward slashes.
func checkPlaybookPath(name string) error {
	switch {
	case strings.ContainsRune(name, 0):
		return &PathError{name, "contains a NUL byte"}
	case strings.ContainsRune(name, '\\'):
		return &PathError{name, "holds a backslash; paths in a playbook use forward slashes"}
	case len(name) >= 2 && name[1] == ':' && isASCIILetter(name[0]):
		return &PathError{name, "names a Windows drive; paths in a playbook are relative to it, or absolute with forward slashes"}
	}
	return nil
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// pathDiag is the diagnostic for a path the playbook names at rng that
// cannot be read: summary says what was being read, unless apl refused the
// path (a *PathError).
func pathDiag(summary string, err error, rng hcl.Range) *hcl.Diagnostic {
	var pe *PathError
	if errors.As(err, &pe) {
		return errDiag("Path not allowed", sentence(pe.Error()), rng)
	}
	return errDiag(summary, sentence(err.Error()), rng)
}

// asWritten makes a refusal of path resolved, which the playbook wrote as
// written, name the path as written.
func asWritten(err error, resolved, written string) error {
	var pe *PathError
	if errors.As(err, &pe) && pe.Path == resolved {
		return &PathError{written, pe.Reason}
	}
	return err
}
