package lsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Diagnostic is an LSP diagnostic.
type Diagnostic struct {
	Range    Range  `json:"range"`
	Severity int    `json:"severity"` // 1 error, 2 warning
	Source   string `json:"source"`
	Message  string `json:"message"`
}

// check loads again the playbooks that read the file at path, which
// changed (opened, edited, saved or closed), and those of documents not
// loaded yet, and publishes what changed in their diagnostics: always for
// path, and an empty list for a file whose problems are gone. A playbook
// reads its own files, its upstreams', its sub-playbooks', its prompt
// files and its test files; a playbook that reads none of them keeps its
// diagnostics, so that an edit costs one load, not one per open playbook.
//
// An edit of a playbook's own file is published in two steps: the load's
// diagnostics at once, with the test files' as they were, and then the
// test files' checked against the playbook as it is now. The edited file
// hears first; checking the tests would delay it by a third.
func (s *Server) check(path string) {
	refs := map[string]bool{}
	dir := filepath.Dir(path)
	for _, d := range s.docs {
		// Which playbook a file belongs to depends on the playbook files
		// of its directory and of the one above (tests/, prompts/).
		if !d.refKnown || filepath.Dir(d.path) == dir || filepath.Dir(filepath.Dir(d.path)) == dir {
			if ref := s.stdlibRef(d.path); ref != "" {
				d.ref = ref
			} else if isHCL(d.path) {
				d.ref = s.refOf(d.path)
			} else {
				d.ref = s.promptRef(d.path)
			}
			d.refKnown = true
		}
		if d.ref != "" {
			refs[d.ref] = true
		}
	}
	for ref := range s.books {
		if !refs[ref] {
			s.drop(ref)
		}
	}
	changedRef := ""
	if d := s.docByPath(path); d != nil {
		changedRef = d.ref
	} else if isHCL(path) {
		changedRef = s.refOf(path)
	}
	var late []*book // loaded, their tests not checked yet
	for _, ref := range slices.Sorted(mapsKeys(refs)) {
		b := s.books[ref]
		if b != nil && !b.deps[path] && ref != changedRef {
			continue
		}
		nb := s.load(ref)
		if b != nil && !b.testsOf(path) && nb.testsDue {
			nb.testDiagnostics = b.testDiagnostics // until checked again below
			late = append(late, nb)
		} else {
			s.loadTests(nb)
		}
		s.put(nb)
	}
	s.publish(pathURI(path))
	for _, b := range late {
		s.loadTests(b)
	}
	if len(late) > 0 {
		s.publish("")
	}
}

// publish sends the diagnostics of every loaded playbook that changed
// since they were last published, and always those of the URI force.
func (s *Server) publish(force string) {
	byURI := map[string][]Diagnostic{}
	for _, ref := range slices.Sorted(mapsKeys(s.books)) {
		b := s.books[ref]
		for _, m := range []map[string][]Diagnostic{b.diagnostics, b.testDiagnostics} {
			for u, ds := range m {
				byURI[u] = append(byURI[u], ds...)
			}
		}
	}
	for _, d := range s.docs {
		if _, ok := byURI[d.uri]; !ok && isHCL(d.path) {
			byURI[d.uri] = []Diagnostic{} // an open file with none hears so
		}
	}
	for u, p := range s.published {
		if _, ok := byURI[u]; !ok {
			if p == "[]" {
				delete(s.published, u) // cleared already
				continue
			}
			byURI[u] = []Diagnostic{}
		}
	}
	for _, u := range slices.Sorted(mapsKeys(byURI)) {
		ds := byURI[u]
		b, _ := json.Marshal(ds)
		if string(b) == s.published[u] && u != force {
			continue
		}
		s.published[u] = string(b)
		s.notify("textDocument/publishDiagnostics", map[string]any{"uri": u, "diagnostics": ds})
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func isHCL(path string) bool { return strings.HasSuffix(path, ".hcl") }

func isTestFile(path string) bool { return strings.HasSuffix(path, lang.TestFileSuffix) }

// project is the project a file lies in, as the loader finds it,
// remembered by directory.
func (s *Server) project(path string) *lang.Project {
	key := ""
	if s.opts.Loader.Root == "" {
		key = filepath.Dir(path)
	}
	if p := s.projects[key]; p != nil {
		return p
	}
	if len(s.projects) > 1024 {
		clear(s.projects)
	}
	p := lang.FindProject(path, s.opts.Loader.Allow)
	if key == "" {
		p = lang.NewProject(s.opts.Loader.Root, s.opts.Loader.Allow)
	}
	s.projects[key] = p
	return p
}

// text is a file's text: the editor's buffer when it is open, else the
// file on disk if it lies in the project.
func (s *Server) text(path string) ([]byte, bool) {
	if d := s.docByPath(path); d != nil {
		return d.text, true
	}
	b, err := s.project(path).ReadFile(path)
	return b, err == nil
}

func (s *Server) docByPath(path string) *document { return s.byPath[path] }

// hasDocIn reports whether a playbook file of dir is open.
func (s *Server) hasDocIn(dir string) bool {
	for _, d := range s.docs {
		if isHCL(d.path) && filepath.Dir(d.path) == dir {
			return true
		}
	}
	return false
}

// refOf is the playbook a file belongs to, as apl validate DIR/... finds
// playbooks: a directory whose files (test files aside) hold one playbook
// block is one playbook; a directory with several holds that many
// single-file playbooks, and X_test.hcl tests X.hcl. A file in a tests/
// folder tests the playbook of the directory above.
func (s *Server) refOf(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "tests" && len(s.playbookFiles(filepath.Dir(dir))) > 0 {
		return filepath.Dir(dir)
	}
	if len(s.playbookFiles(dir)) <= 1 {
		return dir
	}
	if isTestFile(path) {
		return strings.TrimSuffix(path, lang.TestFileSuffix) + ".hcl"
	}
	return path
}

// promptRef is the playbook a file that is no HCL (a prompt file) most
// likely belongs to: the one playbook of its directory or of the one
// above (prompts/plan.md); "" when there is none, or more than one.
func (s *Server) promptRef(path string) string {
	dir := filepath.Dir(path)
	for range 2 {
		switch files := s.playbookFiles(dir); len(files) {
		case 0:
			dir = filepath.Dir(dir)
			continue
		case 1:
			return dir
		}
		return ""
	}
	return ""
}

// playbookFiles lists the .hcl files of dir (test files aside) that
// declare a playbook block, open buffers in place of the disk's.
func (s *Server) playbookFiles(dir string) []string {
	var out []string
	for _, p := range s.hclFiles(dir) {
		if src, ok := s.text(p); ok && s.declaresPlaybook(src, p) {
			out = append(out, p)
		}
	}
	return out
}

// hclFiles lists the playbook .hcl files of dir, on disk inside the
// project or open in the editor.
func (s *Server) hclFiles(dir string) []string {
	seen := map[string]bool{}
	if entries, err := s.project(dir).ReadDir(dir); err == nil {
		for _, e := range entries {
			if !e.IsDir() {
				seen[filepath.Join(dir, e.Name())] = true
			}
		}
	}
	for _, d := range s.docs {
		if filepath.Dir(d.path) == dir {
			seen[d.path] = true
		}
	}
	var out []string
	for p := range seen {
		if isHCL(p) && !isTestFile(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// declaresPlaybook is declaresPlaybook, remembered by the text's hash:
// finding a document's playbook parses the files beside it at every
// edit, and most of them did not change.
func (s *Server) declaresPlaybook(src []byte, name string) bool {
	h := fnv.New64a()
	h.Write([]byte(name))
	h.Write([]byte{0})
	h.Write(src)
	key := h.Sum64()
	if v, ok := s.declares[key]; ok {
		return v
	}
	if len(s.declares) > 4096 {
		clear(s.declares) // bounded: old texts are not asked for again
	}
	v := declaresPlaybook(s.parses, src, name)
	s.declares[key] = v
	return v
}

// declaresPlaybook reports whether an HCL file has a top-level playbook
// block; a file too broken to parse counts when a line starts one.
// The parse is the cache's, which the load then finds there.
func declaresPlaybook(c *lang.ParseCache, src []byte, name string) bool {
	if f, diags := c.Parse(src, name); f != nil && !diags.HasErrors() {
		if body, ok := f.Body.(*hclsyntax.Body); ok {
			for _, b := range body.Blocks {
				if b.Type == "playbook" {
					return true
				}
			}
			return false
		}
	}
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "playbook ") {
			return true
		}
	}
	return false
}

// overlay is what the load reads in place of the file system: every open
// document, and in those of dirs where a playbook file is open, the other
// files beside it (the loader reads a directory from its Files alone once
// any file of it is there).
func (s *Server) overlay(dirs map[string]bool) map[string][]byte {
	files := map[string][]byte{}
	for _, d := range s.docs {
		files[d.path] = d.text
	}
	for dir := range dirs {
		if !s.hasDocIn(dir) {
			continue
		}
		for _, p := range s.hclFiles(dir) {
			if _, ok := files[p]; !ok {
				if b, ok := s.text(p); ok {
					files[p] = b
				}
			}
		}
	}
	return files
}

// load loads the playbook ref as apl validate does, from the editor's
// buffers over the disk, and turns what it reports into LSP diagnostics
// by file. Its test files are checked apart (loadTests).
func (s *Server) load(ref string) *book {
	ld := s.opts.Loader
	ld.Cache = nil
	ld.Parses = s.parses
	ld.Subs = s.subs
	// The directories the load reads: the playbook's, and those the last
	// load of it read. One it reads now that holds an open file and was
	// not given whole loads it again.
	dirs := map[string]bool{ref: true}
	if isHCL(ref) {
		dirs = map[string]bool{filepath.Dir(ref): true}
	}
	if old := s.books[ref]; old != nil {
		for p := range old.deps {
			dirs[filepath.Dir(p)] = true
		}
	}
	var pb *lang.Playbook
	var diags hcl.Diagnostics
	deps := map[string]bool{ref: true}
	for again := true; again; {
		ld.Files = s.overlay(dirs)
		s.keptSubs()
		pb, diags = ld.Load(ref)
		files, _ := lang.Files(pb)
		again = false
		for p := range files {
			deps[p] = true
			if dir := filepath.Dir(p); !dirs[dir] {
				dirs[dir] = true
				again = again || s.hasDocIn(dir)
			}
		}
	}
	b := &book{ref: ref, pb: pb, srcs: map[string][]byte{}, diagnostics: map[string][]Diagnostic{}, deps: deps}
	for n, src := range pb.Sources {
		b.srcs[n] = src
	}
	b.diagnostics = s.lspDiagnostics(b, diags)
	// Test files are checked against a playbook that loads; they are
	// read with their check (loadTests), after the load's diagnostics are
	// published.
	if b.testsDue = !diags.HasErrors(); b.testsDue {
		b.loader = ld
	}
	return b
}

// maxSubs bounds the sub-playbook loads the server keeps, as maxBooks
// bounds the playbooks: a kept stdlib:phase-runner holds about 2 MB.
const maxSubs = 16

// keptSubs forgets the kept sub-playbook loads that loading again might
// change: one with errors (a missing file may since have appeared), one
// a file of which (its own, its prompt files', its upstreams', its
// sub-playbooks') now reads otherwise in the editor or on disk, one a
// directory of which now holds other playbook files; and all of them
// beyond maxSubs. The stdlib's files never change.
func (s *Server) keptSubs() {
	n := 0
	s.subs.Forget(func(pb *lang.Playbook, diags hcl.Diagnostics) bool {
		n++
		return n > maxSubs || diags.HasErrors() || s.changedSince(pb)
	})
}

// changedSince reports whether a file pb was loaded from reads otherwise
// now, or a directory of its playbook files holds others.
func (s *Server) changedSince(pb *lang.Playbook) bool {
	files, err := lang.Files(pb)
	if err != nil {
		return true
	}
	dirs := map[string]int{}
	for p, src := range files {
		if now, ok := s.text(p); !ok || !bytes.Equal(now, src) {
			return true
		}
		if isHCL(p) && !isTestFile(p) {
			dirs[filepath.Dir(p)]++
		}
	}
	for dir, n := range dirs {
		if len(s.hclFiles(dir)) != n {
			return true
		}
	}
	return false
}

// loadTests reads the test files of b, the editor's buffers over the
// disk, and checks them against its playbook.
func (s *Server) loadTests(b *book) {
	if b.pb == nil {
		return // put away since: its tests are checked when it is loaded again
	}
	b.testDiagnostics = nil
	if !b.testsDue {
		return
	}
	b.testsDue = false
	ld := b.loader
	b.loader = lang.Loader{} // it holds the buffers as they were
	tests, _ := ld.TestFiles(b.ref)
	if tests == nil {
		tests = map[string][]byte{}
	}
	for _, d := range s.docs {
		if s.testsOf(b.ref, d.path) {
			tests[d.path] = d.text
		}
	}
	for n, src := range tests {
		b.srcs[n] = src
		b.tests = append(b.tests, n)
		b.deps[n] = true
	}
	slices.Sort(b.tests)
	if len(tests) == 0 {
		return
	}
	_, diags := lang.LoadTests(b.pb, tests)
	b.testDiagnostics = s.lspDiagnostics(b, diags)
}

// testsOf reports whether path is one of b's test files.
func (b *book) testsOf(path string) bool {
	_, ok := slices.BinarySearch(b.tests, path)
	return ok
}

// lspDiagnostics are a load's diagnostics as LSP's, by URI.
func (s *Server) lspDiagnostics(b *book, diags hcl.Diagnostics) map[string][]Diagnostic {
	out := map[string][]Diagnostic{}
	for _, d := range diags {
		u, rng := s.locate(b, b.ref, d.Subject)
		if u == "" {
			continue
		}
		sev := 1
		if d.Severity == hcl.DiagWarning {
			sev = 2
		}
		msg := d.Summary
		if d.Detail != "" {
			msg += ": " + d.Detail
		}
		if d.Subject != nil && pathURIOf(d.Subject.Filename) == "" {
			msg += fmt.Sprintf(" (at %s)", d.Subject)
		}
		out[u] = append(out[u], Diagnostic{Range: rng, Severity: sev, Source: "apl", Message: msg})
	}
	return out
}

// testsOf reports whether path is a test file of the playbook ref.
func (s *Server) testsOf(ref, path string) bool {
	if !isHCL(path) {
		return false
	}
	if strings.HasSuffix(ref, ".hcl") {
		return path == strings.TrimSuffix(ref, ".hcl")+lang.TestFileSuffix
	}
	dir := filepath.Dir(path)
	return dir == ref && isTestFile(path) || dir == filepath.Join(ref, "tests")
}

// locate is the URI and range a diagnostic is shown at. One without a
// range, or in a file the editor cannot open (the stdlib's), is shown at
// the top of the playbook's first open file.
func (s *Server) locate(b *book, ref string, r *hcl.Range) (string, Range) {
	if r != nil {
		u := pathURIOf(r.Filename)
		if u == "" && s.stdlibOut != nil && s.docs[s.fileURI(r.Filename)] != nil {
			u = s.fileURI(r.Filename) // a stdlib file written out, open
		}
		if u != "" {
			src := b.srcs[r.Filename]
			if d := s.docs[u]; d != nil {
				src = d.text
			}
			return u, toRange(src, *r)
		}
	}
	var uris []string
	for _, d := range s.docs {
		if d.ref == ref && isHCL(d.path) {
			uris = append(uris, d.uri)
		}
	}
	if len(uris) == 0 {
		return "", Range{}
	}
	slices.Sort(uris)
	return uris[0], Range{}
}

// pathURIOf is the URI of a diagnostic's file, "" for one that is no
// absolute path (stdlib:NAME/main.hcl).
func pathURIOf(name string) string {
	if !filepath.IsAbs(name) {
		return ""
	}
	return pathURI(name)
}
