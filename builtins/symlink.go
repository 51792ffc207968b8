package builtins

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zclconf/go-cty/cty"
)

// file.symlink {path, target} → {path, target}. It points path at target,
// as `ln -sfn target path` does, for "latest" pointers to a run's report
// directory. target is relative to the link's directory and must lead
// inside the working directory; a symlink already at path is replaced
// atomically (a new link under a temporary name, renamed over it), but any
// other file there is refused. Where the file system cannot make symlinks
// the call fails, and a playbook falls back (continue_on_error and a
// file.write of a pointer file).
func fileSymlink(_ context.Context, env Env, a args) (cty.Value, error) {
	p, err := a.required("path")
	if err != nil {
		return cty.NilVal, err
	}
	target, err := a.required("target")
	if err != nil {
		return cty.NilVal, err
	}
	if filepath.IsAbs(target) {
		return cty.NilVal, fmt.Errorf("argument \"target\" must be relative to the link's directory, not %q", target)
	}
	// The link itself is not followed: only its directory must really lie
	// inside the working directory.
	clean := filepath.Clean(filepath.FromSlash(p))
	if clean == "." || clean == string(filepath.Separator) {
		return cty.NilVal, fmt.Errorf("argument \"path\": %q is no file name", p)
	}
	dir, err := ResolvePath(env.Workdir, filepath.Dir(clean))
	if err != nil {
		return cty.NilVal, fmt.Errorf("argument \"path\": %w", err)
	}
	link := filepath.Join(dir, filepath.Base(clean))
	if _, err := ResolvePath(env.Workdir, filepath.Join(dir, filepath.FromSlash(target))); err != nil {
		return cty.NilVal, fmt.Errorf("argument \"target\": %w", err)
	}
	if fi, err := os.Lstat(link); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
		return cty.NilVal, fmt.Errorf("%s exists and is not a symlink; it is not replaced", relToRoot(env.Workdir, link))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return cty.NilVal, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return cty.NilVal, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(link)+".*.tmp")
	if err != nil {
		return cty.NilVal, err
	}
	name := tmp.Name()
	tmp.Close()
	os.Remove(name) // only its unique name is wanted
	if err := os.Symlink(filepath.FromSlash(target), name); err != nil {
		return cty.NilVal, err
	}
	if err := os.Rename(name, link); err != nil {
		os.Remove(name)
		return cty.NilVal, err
	}
	if err := SyncDir(dir); err != nil {
		return cty.NilVal, err
	}
	return cty.ObjectVal(map[string]cty.Value{
		"path":   cty.StringVal(relToRoot(env.Workdir, link)),
		"target": cty.StringVal(target),
	}), nil
}
