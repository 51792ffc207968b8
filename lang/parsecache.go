package lang

import (
	"bytes"
	"cmp"
	"container/list"
	"hash/maphash"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// A ParseCache keeps parsed files across loads (Loader.Parses), so that a
// process loading the same playbook again and again as one of its files
// changes (apl lsp, at each keystroke) parses only the file that changed:
// the playbook's other files, its upstreams', the stdlib's, its prompt
// files and its test files are taken from the cache. A file is found by
// its name and its exact content, so a changed file is parsed again and
// no load ever sees a stale tree.
//
// The load treats parsed trees as read-only (extends merges copies of
// them), so loads share them, on any number of goroutines. The cache
// holds at most a given number of source bytes, dropping the files least
// recently used beyond that.
type ParseCache struct {
	max  int // source bytes
	seed maphash.Seed

	mu      sync.Mutex
	size    int // source bytes held
	entries map[parseKey]*list.Element
	lru     list.List // of *parseEntry, most recently used first

	hits, misses atomic.Int64
}

// parseKey finds a parsed file: how it was parsed (a config file or a
// template), its name (ranges and diagnostics carry it) and its content's
// hash, which a hit checks against the content itself.
type parseKey struct {
	template bool
	name     string
	hash     uint64
}

type parseEntry struct {
	key   parseKey
	src   []byte
	file  *hcl.File            // a config file
	tmpl  hclsyntax.Expression // a template
	diags hcl.Diagnostics
}

// NewParseCache returns a cache that holds parsed files of at most
// maxBytes source bytes in all. A parsed tree takes some twenty times the
// memory of its source.
func NewParseCache(maxBytes int) *ParseCache {
	return &ParseCache{max: maxBytes, seed: maphash.MakeSeed(), entries: map[parseKey]*list.Element{}}
}

// ParseStats says what a ParseCache holds and how it served.
type ParseStats struct {
	Files, Bytes int   // held now
	Hits, Misses int64 // since it was made
}

// Stats reports what c holds and how often it was asked.
func (c *ParseCache) Stats() ParseStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ParseStats{Files: c.lru.Len(), Bytes: c.size, Hits: c.hits.Load(), Misses: c.misses.Load()}
}

func (c *ParseCache) key(template bool, src []byte, name string) parseKey {
	return parseKey{template, name, maphash.Bytes(c.seed, src)}
}

// get returns the entry for src, nil on a miss.
func (c *ParseCache) get(k parseKey, src []byte) *parseEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.entries[k]
	if el == nil || !bytes.Equal(el.Value.(*parseEntry).src, src) {
		c.misses.Add(1)
		return nil
	}
	c.hits.Add(1)
	c.lru.MoveToFront(el)
	return el.Value.(*parseEntry)
}

// put keeps e, dropping the least recently used entries beyond the bound.
// A file larger than the whole bound is not kept.
func (c *ParseCache) put(e *parseEntry) {
	if len(e.src) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.entries[e.key]; old != nil {
		c.size -= len(old.Value.(*parseEntry).src)
		c.lru.Remove(old)
	}
	c.entries[e.key] = c.lru.PushFront(e)
	c.size += len(e.src)
	for c.size > c.max {
		last := c.lru.Back()
		le := last.Value.(*parseEntry)
		c.lru.Remove(last)
		delete(c.entries, le.key)
		c.size -= len(le.src)
	}
}

// template is a prompt file parsed as a template, from the cache when it
// holds it. A nil cache parses.
func (c *ParseCache) template(src []byte, name string) (hclsyntax.Expression, hcl.Diagnostics) {
	parse := func() (hclsyntax.Expression, hcl.Diagnostics) {
		return hclsyntax.ParseTemplate(src, name, hcl.Pos{Line: 1, Column: 1, Byte: 0})
	}
	if c == nil {
		return parse()
	}
	k := c.key(true, src, name)
	if e := c.get(k, src); e != nil {
		return e.tmpl, e.diags
	}
	t, d := parse()
	c.put(&parseEntry{key: k, src: src, tmpl: t, diags: d})
	return t, d
}

// parseFiles parses the named files of srcs, those c does not hold on as
// many goroutines as there are CPUs (GOMAXPROCS), largest files first:
// parsing is most of the cost of a load, and files parse independently.
// The results are in the order of names. A nil cache parses every file.
func (c *ParseCache) parseFiles(srcs map[string][]byte, names []string) []parsedFile {
	out := make([]parsedFile, len(names))
	var todo []int
	for i, n := range names {
		if c != nil {
			if e := c.get(c.key(false, srcs[n], n), srcs[n]); e != nil {
				out[i] = parsedFile{e.file, e.diags}
				continue
			}
		}
		todo = append(todo, i)
	}
	slices.SortStableFunc(todo, func(a, b int) int { return cmp.Compare(len(srcs[names[b]]), len(srcs[names[a]])) })
	parallel(len(todo), len(todo), func(n int) {
		i := todo[n]
		_, f, d := ParseConfig(srcs[names[i]], names[i])
		out[i] = parsedFile{f, d}
		if c != nil {
			c.put(&parseEntry{key: c.key(false, srcs[names[i]], names[i]), src: srcs[names[i]], file: f, diags: d})
		}
	})
	return out
}

// Prefetch parses the files of srcs that c does not hold, on as many
// goroutines as there are CPUs, so that a load or LoadTests that reads
// them later finds them parsed: apl validate parses a playbook's test
// files while the playbook loads.
func (c *ParseCache) Prefetch(srcs map[string][]byte) {
	c.parseFiles(srcs, slices.Sorted(maps.Keys(srcs)))
}

// parseFiles parses the files of one layer of the playbook, through the
// Loader's cache when it has one.
func (l *loader) parseFiles(srcs map[string][]byte, names []string) []parsedFile {
	return l.ld.Parses.parseFiles(srcs, names)
}

// parseCache is the cache of the Loader that loaded p, for its test files.
func (p *Playbook) parseCache() *ParseCache {
	if p == nil {
		return nil
	}
	return p.parses
}

// Parse is ParseConfig's file and diagnostics for src, from c when it
// holds them; a nil cache parses. The file is shared and must not be
// changed.
func (c *ParseCache) Parse(src []byte, name string) (*hcl.File, hcl.Diagnostics) {
	p := c.parseFiles(map[string][]byte{name: src}, []string{name})[0]
	return p.file, p.diags
}
