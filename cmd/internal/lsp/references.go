package lsp

import (
	"slices"
)

// references finds every use of what the cursor names, in every file of
// its playbook: each whole-word occurrence of the name that resolves to
// the same declaration, so that a step's name in a goto, a condition, a
// template and a test file's mock all count, and a prompt or input of the
// same name does not.
func (s *Server) references(uri string, p Position) any {
	out := []Location{}
	d := s.docs[uri]
	b := s.bookOf(d)
	if b == nil {
		return out
	}
	r := refAt(d.text, offset(d.text, p), true)
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
		text := string(src)
		for i := 0; ; {
			j := wordIndex(text[i:], name)
			if j < 0 {
				break
			}
			at := i + j
			i = at + len(name)
			if t, ok := resolve(b.pb, refAt(src, at, true)); ok && t.decl == want.decl {
				out = append(out, Location{URI: u, Range: Range{Start: position(src, at), End: position(src, at+len(name))}})
			}
		}
	}
	return out
}
