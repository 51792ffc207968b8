package main

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

type forkCmd struct {
	Name string `arg:"" help:"The stdlib playbook, stdlib:NAME (or NAME)."`
	Dir  string `arg:"" help:"The directory to copy it into; it must not exist, or be empty."`
}

// forkFile records where a forked playbook came from, and the upstream's
// files as they were forked (the base apl diff tells the fork's changes
// from upstream's by). It is a txtar archive whose comment is the record,
// in HCL; it is not a .hcl file, so the playbook does not load it.
const forkFile = ".apl-fork"

func (c *forkCmd) Run(e *env) error {
	name := strings.TrimPrefix(c.Name, lang.StdlibPrefix)
	ref := lang.StdlibPrefix + name
	lib := e.loader.Stdlib
	if lib == nil {
		return exitWith(exitInternal, fmt.Errorf("no stdlib is built into this apl"))
	}
	if st, err := fs.Stat(lib, name); err != nil || !st.IsDir() || name == "." || strings.Contains(name, "/") {
		return exitWith(exitUsage, fmt.Errorf("there is no stdlib playbook %q; apl stdlib list shows them", name))
	}
	// Only a playbook that loads is worth a copy, and its hash is what the
	// fork records.
	pb, _, err := e.load(ref)
	if err != nil {
		return err
	}
	if entries, err := os.ReadDir(c.Dir); err == nil && len(entries) > 0 {
		return exitWith(exitUsage, fmt.Errorf("%s is not empty; fork writes only into a new or empty directory, and overwrites nothing", c.Dir))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return exitWith(exitUsage, err)
	}
	files := map[string][]byte{}
	err = fs.WalkDir(lib, name, func(p string, d fs.DirEntry, err error) error {
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
		dst := filepath.Join(c.Dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		files[rel] = b
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		return exitWith(exitInternal, fmt.Errorf("copying %s into %s: %w", ref, c.Dir, err))
	}
	// The base is what apl diff compares: the playbook's files and the
	// prompt files they read, not its tests or README.
	base := map[string][]byte{}
	for n, b := range pb.Sources {
		if rel, ok := strings.CutPrefix(filepath.ToSlash(n), ref+"/"); ok {
			base[rel] = b
		}
	}
	rec := &forkRecord{Upstream: ref, Version: buildVersion(), Hash: "sha256:" + pb.Hash, Base: base}
	if err := os.WriteFile(filepath.Join(c.Dir, forkFile), rec.format(c.Dir), 0o644); err != nil {
		return exitWith(exitInternal, err)
	}
	fmt.Fprintf(e.stdout, "forked %s into %s (%d files); apl diff %s %s shows what changed since\n",
		ref, c.Dir, len(files), shellQuote(c.Dir), ref)
	return nil
}

// forkRecord is what .apl-fork holds.
type forkRecord struct {
	Upstream string // stdlib:NAME
	Version  string // the apl that forked it
	Hash     string // "sha256:" and the upstream's source hash, as resume uses it
	// Base is the upstream's files as forked, by path in its directory;
	// nil for a fork made by an apl that did not keep them.
	Base map[string][]byte
}

// format writes the record: the attributes, then the base files. A file
// holding a line that looks like a txtar marker is quoted, and one without
// a final newline gets one; the record lists both, so that reading it
// gives each file back byte for byte. A file that cannot be quoted (not
// text) is left out: apl diff compares only playbook and prompt files.
func (r *forkRecord) format(dir string) []byte {
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
`, shellQuote(dir), r.Upstream, r.Upstream, r.Version, r.Hash)
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

// readFork reads DIR/.apl-fork, inside dir's project or the directories
// allow names; nil and no error when dir is no fork.
func readFork(dir string, allow []string) (*forkRecord, error) {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil // a file or stdlib:NAME
	}
	data, err := lang.FindProject(dir, allow).ReadFile(filepath.Join(dir, forkFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ar := txtar.Parse(data)
	f, diags := hclsyntax.ParseConfig(ar.Comment, forkFile, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, fmt.Errorf("%s: %s", filepath.Join(dir, forkFile), diags.Error())
	}
	attrs, _ := f.Body.JustAttributes()
	rec := &forkRecord{}
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
				return nil, fmt.Errorf("%s: %s: %w", filepath.Join(dir, forkFile), file.Name, err)
			}
		}
		if noNewline[file.Name] {
			data = data[:len(data)-1]
		}
		rec.Base[file.Name] = data
	}
	return rec, nil
}

// writeBase writes a fork's base files into a new temporary directory, to
// load them as a playbook; the caller removes it.
func (r *forkRecord) writeBase() (string, error) {
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
