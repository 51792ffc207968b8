package builtins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zclconf/go-cty/cty"
)

// file.sha256 {path} → {sha256, size}. The protocols fingerprint frozen specs
// with it to notice when one changed under a run.
func fileSHA256(_ context.Context, env Env, a args) (cty.Value, error) {
	path, rel, err := pathArg(env, a, "path")
	if err != nil {
		return cty.NilVal, err
	}
	f, err := OpenConfined(path, os.O_RDONLY, 0)
	if err != nil {
		return cty.NilVal, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return cty.NilVal, fmt.Errorf("read %s: %w", rel, err)
	}
	return cty.ObjectVal(map[string]cty.Value{
		"sha256": cty.StringVal(hex.EncodeToString(h.Sum(nil))),
		"size":   cty.NumberIntVal(n),
	}), nil
}

// file.read {path} → {content, exists}. A missing file is an answer, not an
// error, because protocols branch on whether state files exist yet.
func fileRead(_ context.Context, env Env, a args) (cty.Value, error) {
	path, _, err := pathArg(env, a, "path")
	if err != nil {
		return cty.NilVal, err
	}
	data, err := readConfined(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cty.ObjectVal(map[string]cty.Value{
			"content": cty.StringVal(""),
			"exists":  cty.False,
		}), nil
	}
	if err != nil {
		return cty.NilVal, err
	}
	return cty.ObjectVal(map[string]cty.Value{
		"content": cty.StringVal(string(data)),
		"exists":  cty.True,
	}), nil
}

// file.write {path, content, mode?} → {path, bytes}. An existing file keeps
// its permissions unless mode is given; a new one gets 0644.
func fileWrite(_ context.Context, env Env, a args) (cty.Value, error) {
	path, rel, err := pathArg(env, a, "path")
	if err != nil {
		return cty.NilVal, err
	}
	content, err := a.text("content")
	if err != nil {
		return cty.NilVal, err
	}
	perm := fs.FileMode(0o644)
	if m, ok, err := a.mode("mode"); err != nil {
		return cty.NilVal, err
	} else if ok {
		perm = fs.FileMode(m)
	} else if fi, err := os.Stat(path); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := WriteFileAtomic(path, []byte(content), perm); err != nil {
		return cty.NilVal, err
	}
	return pathBytes(rel, len(content)), nil
}

// file.append {path, content} → {path, bytes}.
func fileAppend(_ context.Context, env Env, a args) (cty.Value, error) {
	path, rel, err := pathArg(env, a, "path")
	if err != nil {
		return cty.NilVal, err
	}
	content, err := a.text("content")
	if err != nil {
		return cty.NilVal, err
	}
	if err := appendFile(path, []byte(content)); err != nil {
		return cty.NilVal, err
	}
	return pathBytes(rel, len(content)), nil
}

// jsonl.append {path, record} → {path}. The record is written as one line in
// a single write to a file opened with O_APPEND, so concurrent appenders
// (parallel for_each items) never interleave within a line.
func jsonlAppend(_ context.Context, env Env, a args) (cty.Value, error) {
	path, rel, err := pathArg(env, a, "path")
	if err != nil {
		return cty.NilVal, err
	}
	rec, ok := a["record"]
	if !ok {
		return cty.NilVal, errors.New(`argument "record" is required`)
	}
	if ty := rec.Type(); !ty.IsObjectType() && !ty.IsMapType() {
		return cty.NilVal, fmt.Errorf(`argument "record" must be an object, not %s`, ty.FriendlyName())
	}
	line, err := CtyToJSON(rec)
	if err != nil {
		return cty.NilVal, fmt.Errorf(`argument "record": %w`, err)
	}
	if err := appendFile(path, append(line, '\n')); err != nil {
		return cty.NilVal, err
	}
	return cty.ObjectVal(map[string]cty.Value{"path": cty.StringVal(rel)}), nil
}

// json.read {path} → {value}.
func jsonRead(_ context.Context, env Env, a args) (cty.Value, error) {
	path, rel, err := pathArg(env, a, "path")
	if err != nil {
		return cty.NilVal, err
	}
	data, err := readConfined(path)
	if err != nil {
		return cty.NilVal, err
	}
	v, err := JSONToCty(data)
	if err != nil {
		return cty.NilVal, fmt.Errorf("%s is not valid JSON: %w", rel, err)
	}
	return cty.ObjectVal(map[string]cty.Value{"value": v}), nil
}

// WriteFileAtomic replaces path with data so that a reader, or a run that
// resumes after a crash, sees either the old file or the new one and never
// a torn mix: the data goes to a temporary file in the same directory, is
// synced, and is renamed over path; then the directory is synced so the
// rename itself survives a power cut. Missing parent directories are
// created.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := WriteTemp(dir, filepath.Base(path), data, perm, true)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return SyncDir(dir)
}

// WriteTemp writes data to a new hidden temporary file in dir, named
// after base, with mode perm, synced to disk when sync is set, and
// returns its name: the caller renames it into place (an atomic write)
// or removes it. On an error no file is left.
func WriteTemp(dir, base string, data []byte, perm fs.FileMode, sync bool) (string, error) {
	t, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return "", err
	}
	_, err = t.Write(data)
	if err == nil {
		err = t.Chmod(perm)
	}
	if err == nil && sync {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(t.Name())
		return "", err
	}
	return t.Name(), nil
}

func appendFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := OpenConfined(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readConfined is os.ReadFile through OpenConfined.
func readConfined(path string) ([]byte, error) {
	f, err := OpenConfined(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// SyncDir syncs a directory, so that a rename or a new file in it
// survives a power cut.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// pathArg resolves a required path argument inside the workdir and also
// returns the name results should show.
func pathArg(env Env, a args, name string) (abs, rel string, err error) {
	p, err := a.required(name)
	if err != nil {
		return "", "", err
	}
	abs, err = ResolvePath(env.Workdir, p)
	if err != nil {
		return "", "", fmt.Errorf("argument %q: %w", name, err)
	}
	return abs, relToRoot(env.Workdir, abs), nil
}

func pathBytes(rel string, n int) cty.Value {
	return cty.ObjectVal(map[string]cty.Value{
		"path":  cty.StringVal(rel),
		"bytes": cty.NumberIntVal(int64(n)),
	})
}
