package lsp

import (
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// Location is an LSP location.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

func (s *Server) hover(uri string, p Position) any {
	d := s.docs[uri]
	b := s.bookOf(d)
	if b == nil {
		return nil
	}
	off := offset(d.text, p)
	t, ok := resolve(b.pb, s.refAt(d.path, d.text, off))
	if !ok || t.hover == "" {
		if t.hover = overrideHover(b.pb, d.path, off); t.hover == "" {
			return nil
		}
	}
	return map[string]any{"contents": map[string]any{"kind": "markdown", "value": t.hover}}
}

func (s *Server) definition(uri string, p Position) any {
	d := s.docs[uri]
	b := s.bookOf(d)
	if b == nil {
		return nil
	}
	r := s.refAt(d.path, d.text, offset(d.text, p))
	if r.quoted == "extends" {
		return s.upstream(d, r.parts[0])
	}
	t, ok := resolve(b.pb, r)
	if !ok {
		return nil
	}
	u := s.fileURI(t.decl.Filename)
	if u == "" {
		return nil
	}
	src := b.srcs[t.decl.Filename]
	if od := s.docs[u]; od != nil {
		src = od.text
	}
	return []Location{{URI: u, Range: toRange(src, t.decl)}}
}

// CompletionItem is an LSP completion item.
type CompletionItem struct {
	Label  string `json:"label"`
	Kind   int    `json:"kind"`
	Detail string `json:"detail,omitempty"`
}

// Completion item kinds.
const (
	kindFunction = 3
	kindField    = 5
	kindVariable = 6
	kindModule   = 9
)

func (s *Server) completion(uri string, p Position) any {
	d := s.docs[uri]
	if d != nil && isHCL(d.path) {
		if items, ok := schemaCompletion(d, offset(d.text, p)); ok {
			return items
		}
	}
	b := s.bookOf(d)
	if b == nil {
		return []CompletionItem{}
	}
	pb := b.pb
	r := refAt(d.path, d.text, offset(d.text, p), false)
	items := []CompletionItem{}
	steps := func() {
		for _, st := range pb.AllSteps() {
			items = append(items, CompletionItem{Label: st.Name, Kind: kindFunction, Detail: kindOf(st)})
		}
	}
	switch r.quoted {
	case "goto", "next", "requeue":
		steps()
		return items
	case "agent":
		for _, n := range slices.Sorted(mapsKeys(pb.Agents)) {
			items = append(items, CompletionItem{Label: n, Kind: kindModule, Detail: "agent"})
		}
		return items
	case "prompt":
		for _, n := range slices.Sorted(mapsKeys(pb.Prompts)) {
			items = append(items, CompletionItem{Label: n, Kind: kindModule, Detail: "prompt"})
		}
		return items
	}
	switch {
	case len(r.parts) == 2 && r.parts[0] == "steps":
		steps()
	case len(r.parts) >= 4 && r.parts[0] == "steps" && r.parts[2] == "output":
		st := pb.Step(r.parts[1])
		if st == nil {
			break
		}
		t := st.Returns
		for _, n := range r.parts[3 : len(r.parts)-1] {
			for t.IsListType() || t.IsSetType() || t.IsMapType() {
				t = t.ElementType()
			}
			if !t.IsObjectType() || !t.HasAttribute(n) {
				return items
			}
			t = t.AttributeType(n)
		}
		for t.IsListType() || t.IsSetType() || t.IsMapType() {
			t = t.ElementType()
		}
		if t.IsObjectType() {
			for _, n := range slices.Sorted(mapsKeys(t.AttributeTypes())) {
				items = append(items, CompletionItem{Label: n, Kind: kindField, Detail: fieldDetail(t, n)})
			}
		}
	case len(r.parts) == 3 && r.parts[0] == "steps":
		for _, n := range []string{"output", "status", "error", "attempts", "started_at"} {
			items = append(items, CompletionItem{Label: n, Kind: kindField})
		}
	case len(r.parts) == 2 && r.parts[0] == "inputs":
		for _, in := range pb.Inputs {
			items = append(items, CompletionItem{Label: in.Name, Kind: kindVariable, Detail: lang.TypeText(in.Type)})
		}
	case len(r.parts) == 2 && (r.parts[0] == "var" || r.parts[0] == "vars"):
		for _, v := range pb.Vars {
			items = append(items, CompletionItem{Label: v.Name, Kind: kindVariable, Detail: lang.TypeText(v.Type)})
		}
	case len(r.parts) == 2 && r.parts[0] == "local":
		seen := map[string]bool{}
		for _, l := range allLocals(pb) {
			if !seen[l.Name] {
				seen[l.Name] = true
				items = append(items, CompletionItem{Label: l.Name, Kind: kindVariable, Detail: lang.TypeText(l.Type)})
			}
		}
	case len(r.parts) == 2 && r.parts[0] == "type":
		for _, n := range slices.Sorted(mapsKeys(pb.Types)) {
			items = append(items, CompletionItem{Label: n, Kind: kindModule, Detail: lang.TypeText(pb.Types[n].Type)})
		}
	case len(r.parts) == 2 && r.parts[0] == "budget":
		for _, n := range slices.Sorted(mapsKeys(pb.Budgets)) {
			items = append(items, CompletionItem{Label: n, Kind: kindModule, Detail: "budget"})
		}
	case len(r.parts) == 2 && r.parts[0] == lang.RootParam:
		if t := templateAt(pb, d.path, r.off); t != nil {
			for _, p := range t.Params {
				items = append(items, CompletionItem{Label: p.Name, Kind: kindVariable, Detail: lang.TypeText(p.Type)})
			}
		}
	case len(r.parts) == 2 && r.parts[0] == "template":
		for _, t := range pb.Templates {
			items = append(items, CompletionItem{Label: t.Name, Kind: kindModule, Detail: "template"})
		}
	case len(r.parts) == 2 && r.parts[0] == "agent":
		for _, n := range slices.Sorted(mapsKeys(pb.Agents)) {
			items = append(items, CompletionItem{Label: n, Kind: kindModule, Detail: "agent"})
		}
	case len(r.parts) == 2 && r.parts[0] == "prompt":
		for _, n := range slices.Sorted(mapsKeys(pb.Prompts)) {
			items = append(items, CompletionItem{Label: n, Kind: kindModule})
		}
	case len(r.parts) == 1:
		// The names and functions of the language at the cursor: an
		// expr condition's, or HCL values'.
		cond := inCondition(d.text, offset(d.text, p))
		roots := []string{"steps", "inputs", "local", "vars", "var", "prompt", "item"}
		if !cond {
			roots = append(roots, "type", "budget", "agent", "template")
		}
		for _, n := range roots {
			items = append(items, CompletionItem{Label: n, Kind: kindModule})
		}
		for _, f := range functions() {
			if cond && f.inConds || !cond && f.inValues {
				items = append(items, CompletionItem{Label: f.name, Kind: kindFunction, Detail: f.what})
			}
		}
	}
	return items
}

func fieldDetail(t cty.Type, n string) string {
	s := lang.TypeText(t.AttributeType(n))
	if t.AttributeOptional(n) {
		s += " (optional)"
	}
	return s
}

// TextEdit is an LSP text edit.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// format formats a document as apl fmt does: one edit over the whole
// text, none when it is formatted already or does not parse.
func (s *Server) format(uri string) any {
	d := s.docs[uri]
	if d == nil || !isHCL(d.path) {
		return []TextEdit{}
	}
	out, diags := lang.Format(d.text, d.path)
	if diags.HasErrors() || string(out) == string(d.text) {
		return []TextEdit{}
	}
	return []TextEdit{{Range: Range{End: position(d.text, len(d.text))}, NewText: string(out)}}
}

// DocumentSymbol is an LSP document symbol.
type DocumentSymbol struct {
	Name           string           `json:"name"`
	Detail         string           `json:"detail,omitempty"`
	Kind           int              `json:"kind"`
	Range          Range            `json:"range"`
	SelectionRange Range            `json:"selectionRange"`
	Children       []DocumentSymbol `json:"children,omitempty"`
}

// symbolKinds are the blocks the outline shows, with their LSP kinds;
// others are left out, with what they hold.
var symbolKinds = map[string]int{
	"playbook": 2, "input": 13, "var": 13, "locals": 8, "type": 23, "prompt": 15,
	"agent": 5, "driver": 5, "budget": 8, "mode": 8, "step": 12, "gate": 3,
	"rule": 24, "otherwise": 24, "check": 24, "for_each": 3, "on_failure": 3,
	"finally": 3, "output": 8, "test": 12, "mock": 7, "limits": 8,
}

func (s *Server) symbols(uri string) any {
	d := s.docs[uri]
	if d == nil || !isHCL(d.path) {
		return []DocumentSymbol{}
	}
	f, _ := hclsyntax.ParseConfig(d.text, d.path, hcl.InitialPos)
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return []DocumentSymbol{}
	}
	return blockSymbols(d.text, body)
}

func blockSymbols(src []byte, body *hclsyntax.Body) []DocumentSymbol {
	out := []DocumentSymbol{}
	for _, b := range body.Blocks {
		kind, ok := symbolKinds[b.Type]
		if !ok {
			continue
		}
		name := b.Type
		if len(b.Labels) > 0 {
			name = b.Labels[0]
		}
		detail := b.Type
		if len(b.Labels) > 1 {
			detail += " " + strings.Join(b.Labels[1:], " ")
		}
		sym := DocumentSymbol{Name: name, Detail: detail, Kind: kind,
			Range: toRange(src, b.Range()), SelectionRange: toRange(src, b.DefRange())}
		if b.Body != nil {
			if c := blockSymbols(src, b.Body); len(c) > 0 {
				sym.Children = c
			}
		}
		out = append(out, sym)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Range.Start, out[j].Range.Start
		return a.Line < b.Line || a.Line == b.Line && a.Character < b.Character
	})
	return out
}

// upstream is where extends = "written" leads: the upstream's file, or
// the first file of its directory (the stdlib's written out, its
// playbook.hcl first); none for a path out of the project.
func (s *Server) upstream(d *document, written string) any {
	if name, ok := strings.CutPrefix(written, lang.StdlibPrefix); ok {
		fsys := s.opts.Loader.Stdlib
		if fsys == nil {
			return nil
		}
		entries, _ := fs.ReadDir(fsys, name)
		var files []string
		for _, e := range entries {
			if isHCL(e.Name()) && !isTestFile(e.Name()) {
				files = append(files, e.Name())
			}
		}
		if len(files) == 0 {
			return nil
		}
		first := files[0]
		if slices.Contains(files, "playbook.hcl") {
			first = "playbook.hcl"
		}
		if u := s.fileURI(written + "/" + first); u != "" {
			return []Location{{URI: u}}
		}
		return nil
	}
	if written == "" {
		return nil
	}
	p := filepath.Clean(filepath.Join(filepath.Dir(d.path), written))
	proj := s.project(d.path)
	if _, err := proj.Resolve(p); err != nil {
		return nil
	}
	if info, err := proj.Stat(p); err == nil && info.IsDir() {
		files := s.hclFiles(p)
		if len(files) == 0 {
			return nil
		}
		p = files[0]
	}
	return []Location{{URI: pathURI(p)}}
}
