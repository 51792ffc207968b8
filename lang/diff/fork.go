package diff

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/rogpeppe/go-internal/txtar"
	"github.com/zclconf/go-cty/cty"
)

// ForkFile records where a forked playbook came from, and the upstream's
// files as they were forked (the base apl diff tells the fork's changes
// from upstream's by). It is a txtar archive whose comment is the record,
// in HCL; it is not a .hcl file, so the playbook does not load it.
const ForkFile = ".apl-fork"

// Copy copies the files of directory name of lib (a stdlib) into dir, and
// writes rec into dir's .apl-fork; shown is dir as the record's comment
// names it, in the command that diffs the fork. It returns how many files
// it copied.
func Copy(lib fs.FS, name, dir, shown string, rec *Record) (int, error) {
	n := 0
	err := fs.WalkDir(lib, name, func(p string, d fs.DirEntry, err error) error {
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
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		n++
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return n, err
	}
	return n, os.WriteFile(filepath.Join(dir, ForkFile), rec.Format(shown), 0o644)
}

// NewRecord is the record of a fork of pb, the stdlib playbook ref, by
// apl version: its hash, and as the base the playbook's files and the
// prompt files they read, not its tests or README.
func NewRecord(pb *lang.Playbook, ref, version string) *Record {
	base := map[string][]byte{}
	for n, b := range pb.Sources {
		if rel, ok := strings.CutPrefix(filepath.ToSlash(n), ref+"/"); ok {
			base[rel] = b
		}
	}
	return &Record{Upstream: ref, Version: version, Hash: "sha256:" + pb.Hash, Base: base}
}

// Record is what .apl-fork holds.
type Record struct {
	Upstream string // stdlib:NAME
	Version  string // the apl that forked it
	Hash     string // "sha256:" and the upstream's source hash, as resume uses it
	// Base is the upstream's files as forked, by path in its directory;
	// nil for a fork made by an apl that did not keep them.
	Base map[string][]byte
}

// Format writes the record: the attributes, then the base files. A file
// holding a line that looks like a txtar marker is quoted, and one without
// a final newline gets one; the record lists both, so that reading it
// gives each file back byte for byte. A file that cannot be quoted (not
// text) is left out: apl diff compares only playbook and prompt files.
func (r *Record) Format(shown string) []byte {
	var files []txtar.File
	var quoted, noNewline []string
	for _, n := range slices.Sorted(maps.Keys(r.Base)) {
		data := r.Base[n]
		if len(data) > 0 && data[len(data)-1] != '\n' {
			noNewline = append(noNewline, n)
			data = append(slices.Clip(data), '\n')
		}
		if txtar.NeedsQuote(data) {
			q, err := txtar.Quote(data)
			if err != nil {
				continue
			}
			quoted = append(quoted, n)
			data = q
		}
		files = append(files, txtar.File{Name: n, Data: data})
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# apl fork copied this playbook from apl's stdlib. See what changed since:
#   apl diff %s %s
upstream    = %q
apl_version = %q
hash        = %q
`, shown, r.Upstream, r.Upstream, r.Version, r.Hash)
	list := func(name string, xs []string) {
		if len(xs) > 0 {
			q := make([]string, len(xs))
			for i, x := range xs {
				q[i] = fmt.Sprintf("%q", x)
			}
			fmt.Fprintf(&b, "%s = [%s]\n", name, strings.Join(q, ", "))
		}
	}
	list("quoted", quoted)
	list("no_final_newline", noNewline)
	b.WriteString(`
# Below are upstream's files as they were forked: apl diff compares your
# copy and today's upstream with them, to tell your changes from upstream's.
# Leave them as they are.
`)
	return txtar.Format(&txtar.Archive{Comment: []byte(b.String()), Files: files})
}

// ReadFork reads DIR/.apl-fork, inside dir's project or the directories
// allow names; nil and no error when dir is no fork.
func ReadFork(dir string, allow []string) (*Record, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil // a file or stdlib:NAME
	}
	data, err := lang.FindProject(dir, allow).ReadFile(filepath.Join(dir, ForkFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ar := txtar.Parse(data)
	f, diags := hclsyntax.ParseConfig(ar.Comment, ForkFile, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s: %s", filepath.Join(dir, ForkFile), diags.Error())
	}
	attrs, _ := f.Body.JustAttributes()
	rec := &Record{}
	str := func(name string) string {
		if a := attrs[name]; a != nil {
			if v, d := a.Expr.Value(nil); !d.HasErrors() && v.Type() == cty.String && !v.IsNull() {
				return v.AsString()
			}
		}
		return ""
	}
	set := func(name string) map[string]bool {
		out := map[string]bool{}
		if a := attrs[name]; a != nil {
			if v, d := a.Expr.Value(nil); !d.HasErrors() && v.CanIterateElements() {
				for _, x := range v.AsValueSlice() {
					if x.Type() == cty.String && !x.IsNull() {
						out[x.AsString()] = true
					}
				}
			}
		}
		return out
	}
	rec.Upstream, rec.Version, rec.Hash = str("upstream"), str("apl_version"), str("hash")
	if len(ar.Files) == 0 {
		return rec, nil
	}
	quoted, noNewline := set("quoted"), set("no_final_newline")
	rec.Base = map[string][]byte{}
	for _, file := range ar.Files {
		data := file.Data
		if quoted[file.Name] {
			if data, err = txtar.Unquote(data); err != nil {
				return nil, fmt.Errorf("%s: %s: %w", filepath.Join(dir, ForkFile), file.Name, err)
			}
		}
		if noNewline[file.Name] {
			data = data[:len(data)-1]
		}
		rec.Base[file.Name] = data
	}
	return rec, nil
}

// LoadBase loads the fork's base: upstream's playbook as it was forked.
func (r *Record) LoadBase(ld *lang.Loader) (*lang.Playbook, hcl.Diagnostics, error) {
	dir, err := r.writeBase()
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	pb, diags := ld.Load(dir)
	return pb, diags, nil
}

// writeBase writes a fork's base files into a new temporary directory, to
// load them as a playbook; the caller removes it.
func (r *Record) writeBase() (string, error) {
	dir, err := os.MkdirTemp("", "apl-fork-base-")
	if err != nil {
		return "", err
	}
	for n, data := range r.Base {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			continue // a name that climbs out: not one fork wrote
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}
