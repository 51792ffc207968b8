package lsp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/apl-lang/apl/lang"
)

// The stdlib's playbooks are embedded in apl: an editor cannot open
// stdlib:phase-runner/steps.hcl. To jump into one, the server writes the
// stdlib out once, read-only (mode 0444), into a directory named after
// its content (Options.StdlibDir, by default apl/stdlib-HASH in the
// user's cache directory), and answers with that file's URI. A file of it
// open in the editor is the stdlib playbook: hover and go to definition
// work in it, and its diagnostics are the stdlib's.

// stdlibDir is where the stdlib is written out, "" when there is none.
func (s *Server) stdlibDir() string {
	if s.stdlibOut != nil {
		return *s.stdlibOut
	}
	dir := ""
	s.stdlibOut = &dir
	fsys := s.opts.Loader.Stdlib
	if fsys == nil {
		return ""
	}
	h := sha256.New()
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, p)
		h.Write([]byte(p + "\x00"))
		h.Write(b)
		return nil
	})
	if err != nil {
		return ""
	}
	base := s.opts.StdlibDir
	if base == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(cache, "apl")
	}
	out := filepath.Join(base, "stdlib-"+hex.EncodeToString(h.Sum(nil))[:12])
	for _, p := range files {
		b, _ := fs.ReadFile(fsys, p)
		dst := filepath.Join(out, filepath.FromSlash(p))
		if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := writeReadOnly(dst, b); err != nil {
			return ""
		}
	}
	if real, err := filepath.EvalSymlinks(out); err == nil {
		out = real
	}
	dir = out
	return dir
}

// fileURI is the URI of a file a load names: an absolute path, or a
// stdlib file written out for the editor; "" for none.
func (s *Server) fileURI(name string) string {
	if filepath.IsAbs(name) {
		return pathURI(name)
	}
	if rest, ok := strings.CutPrefix(name, lang.StdlibPrefix); ok {
		if dir := s.stdlibDir(); dir != "" {
			return pathURI(filepath.Join(dir, filepath.FromSlash(path.Clean(rest))))
		}
	}
	return ""
}

// stdlibRef is the stdlib playbook a file written out belongs to
// (stdlib:phase-runner), "" for a file that is none of them.
func (s *Server) stdlibRef(p string) string {
	if s.opts.Loader.Stdlib == nil || s.stdlibOut == nil && !strings.Contains(p, string(filepath.Separator)+"stdlib-") {
		return "" // not written out by this server or an earlier one
	}
	dir := s.stdlibDir()
	if dir == "" {
		return ""
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	name, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return lang.StdlibPrefix + name
}

// writeReadOnly writes a file of mode 0444 at dst, through a temporary
// file renamed into place: another server writing the same file at once
// leaves one whole copy, and a read-only file already there is replaced.
func writeReadOnly(dst string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(dst), ".apl-stdlib-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o444)
	}
	if err == nil {
		err = os.Rename(f.Name(), dst)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
