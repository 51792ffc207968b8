package lsp

import (
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// references finds every use of what the cursor names, in every file of
// its playbook: each name the syntax tree holds (a traversal's parts, a
// block's label, a name quoted in goto or next, a word of an expr
// condition) that resolves to the same declaration, so that a step's
// name in a goto, a condition, a template and a test file's mock all
// count, and a prompt or input of the same name, or the word in a
// comment or a description, does not.
func (s *Server) references(uri string, p Position) any {
	out := []Location{}
	d := s.docs[uri]
	b := s.bookOf(d)
	if b == nil {
		return out
	}
	r := s.refAt(d.path, d.text, offset(d.text, p))
	want, ok := resolve(b.pb, r)
	if !ok || want.decl.Filename == "" {
		return out
	}
	name := r.parts[0]
	if r.quoted == "" || r.quoted == "(" {
		name = r.parts[min(r.at, len(r.parts)-1)]
	}
	if name == "" {
		return out
	}
	for _, file := range slices.Sorted(mapsKeys(b.srcs)) {
		u := s.fileURI(file)
		if u == "" {
			continue
		}
		src := b.srcs[file]
		if od := s.docs[u]; od != nil {
			src = od.text
		}
		for _, at := range s.names(file, src, name) {
			if t, ok := resolve(b.pb, s.refAt(file, src, at)); ok && t.decl == want.decl {
				out = append(out, Location{URI: u, Range: Range{Start: position(src, at), End: position(src, at+len(name))}})
			}
		}
	}
	return out
}

// names are the byte offsets where name is written as a name in a file:
// in its syntax tree, a part of a traversal (steps.name.output), a
// block's label, or a whole word of a string that holds names (an expr
// condition, or goto = "name"). An HCL file is parsed as a playbook file,
// any other as a prompt template.
func (s *Server) names(filename string, src []byte, name string) []int {
	var out []int
	word := func(start, end int) {
		for i := start; i+len(name) <= end; {
			j := wordIndex(string(src[i:end]), name)
			if j < 0 {
				return
			}
			out = append(out, i+j)
			i += j + len(name)
		}
	}
	traversals := func(n hclsyntax.Node) {
		hclsyntax.VisitAll(n, func(n hclsyntax.Node) hcl.Diagnostics {
			if t, ok := n.(*hclsyntax.ScopeTraversalExpr); ok {
				r := t.SrcRange
				word(r.Start.Byte, min(r.End.Byte, len(src)))
			}
			return nil
		})
	}
	if !isHCL(filename) {
		if tmpl, _ := hclsyntax.ParseTemplate(src, filename, hcl.InitialPos); tmpl != nil {
			traversals(tmpl)
		}
		return out
	}
	f, _ := s.parses.Parse(src, filename)
	if f == nil {
		return out
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return out
	}
	var walk func(*hclsyntax.Body)
	walk = func(body *hclsyntax.Body) {
		for _, a := range body.Attributes {
			traversals(a.Expr)
			if nameStrings[a.Name] {
				if t, ok := a.Expr.(*hclsyntax.TemplateExpr); ok && t.IsStringLiteral() {
					r := t.SrcRange
					word(r.Start.Byte, min(r.End.Byte, len(src)))
				}
			}
		}
		for _, b := range body.Blocks {
			for _, r := range b.LabelRanges {
				word(r.Start.Byte, min(r.End.Byte, len(src)))
			}
			walk(b.Body)
		}
	}
	walk(body)
	slices.Sort(out)
	return slices.Compact(out)
}

// nameStrings are the attributes whose string holds names: expr
// conditions, and the steps, agents and playbooks quoted by name.
var nameStrings = map[string]bool{
	"when": true, "condition": true, "progress_when": true, "until": true, "for_each": true,
	"goto": true, "next": true, "requeue": true, "agent": true,
}
