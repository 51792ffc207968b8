package lsp

import "github.com/apl-lang/apl/lang"

// maxBooks is how many playbooks the server keeps loaded. A loaded
// stdlib:phase-runner holds about 2 MB; the parse cache, bounded apart,
// keeps the trees of the files of those put away.
const maxBooks = 16

// use marks b as used now.
func (s *Server) use(b *book) {
	s.tick++
	b.used = s.tick
}

// put keeps b, loaded, and puts away the least recently used books
// beyond maxBooks.
func (s *Server) put(b *book) {
	s.use(b)
	s.books[b.ref] = b
	loaded := 0
	for _, o := range s.books {
		if o.pb != nil {
			loaded++
		}
	}
	for ; loaded > maxBooks; loaded-- {
		var oldest *book
		for _, o := range s.books {
			if o.pb != nil && (oldest == nil || o.used < oldest.used) {
				oldest = o
			}
		}
		oldest.pb, oldest.srcs, oldest.loader = nil, nil, lang.Loader{}
	}
}

// drop forgets the playbook ref, which no open document belongs to now.
func (s *Server) drop(ref string) { delete(s.books, ref) }

// bookOf is the loaded playbook of an open document, loaded again if it
// was put away; nil when there is none.
func (s *Server) bookOf(d *document) *book {
	if d == nil || d.ref == "" {
		return nil
	}
	b := s.books[d.ref]
	if b == nil {
		return nil
	}
	if b.pb == nil {
		b = s.load(d.ref)
		s.loadTests(b)
		s.put(b)
	}
	s.use(b)
	return b
}
