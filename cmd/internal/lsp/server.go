package lsp

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/apl-lang/apl/lang"
)

// Options configure a Server.
type Options struct {
	// Loader loads playbooks as apl validate does: its builtins, drivers
	// and stdlib. The server copies it for each load.
	Loader lang.Loader
	// Log receives what the server has to say that is no reply: a
	// malformed request, a recovered internal error. nil discards it.
	Log io.Writer
	// StdlibDir is where the stdlib's files are written, read-only, for
	// go to definition to open them; empty: apl's directory in the user's
	// cache directory.
	StdlibDir string
	// HeapHeadroom, when positive, is how much the heap may grow by
	// between garbage collections at least, for as long as Serve runs
	// (apl lsp: the constant HeapHeadroom); 0 leaves the collector's
	// pace alone.
	HeapHeadroom int64
}

// A Server serves one client. It handles one message at a time, in the
// order they arrive, so that diagnostics always follow the edits.
type Server struct {
	opts Options
	out  *writer

	initialized bool
	shutdown    bool

	docs   map[string]*document // open documents by URI
	byPath map[string]*document // and by path
	// books are the playbooks of open documents, by ref (the absolute
	// path of a playbook file or directory).
	books map[string]*book
	// published are the diagnostics last published, as JSON, by URI:
	// those of a file that has none now are cleared.
	published map[string]string
	// declares remembers which texts declare a playbook block.
	declares map[uint64]bool
	// parses keeps parsed files across loads: an edit parses the file
	// edited, not the playbook's others, its upstreams' or its tests.
	parses *lang.ParseCache
	// subs keeps the loads of sub-playbooks across loads, until a file
	// they read changes (keptSubs): an edit of a playbook that runs
	// stdlib:phase-runner decodes the playbook, not phase-runner too.
	subs *lang.Cache
	tick uint64 // counts uses of books
	// projects are the projects of directories (project).
	projects map[string]*lang.Project
	// stdlibOut is where the stdlib was written out, once it was
	// (stdlibDir).
	stdlibOut *string
	// in is what Serve reads; pending are the files edited and not
	// checked yet, because more messages were waiting.
	in      *bufio.Reader
	pending []string
}

// flush checks the files edited and not checked yet.
func (s *Server) flush() {
	paths := s.pending
	s.pending = nil
	for i, p := range paths {
		if !slices.Contains(paths[:i], p) {
			s.check(p)
		}
	}
}

// A document is a file open in the editor.
type document struct {
	uri  string
	path string // absolute
	// ref is the playbook the document belongs to, found when it was
	// last checked; "" for a file that is no HCL.
	ref      string
	refKnown bool // ref is found, and no file that decides it changed since
	text     []byte
	version  int
}

// A book is a loaded playbook and what the server published for it.
// Beyond maxBooks, those least recently used are put away: their
// playbook and sources dropped, their diagnostics and what they read
// kept, so that memory stays bounded however many playbooks are open and
// one put away is loaded again only when it is asked about or changes.
type book struct {
	ref   string
	pb    *lang.Playbook    // nil once put away
	srcs  map[string][]byte // every file of the load, by file name
	tests []string          // its test files, sorted
	// diagnostics are the load's, by URI; testDiagnostics its test
	// files'.
	diagnostics, testDiagnostics map[string][]Diagnostic
	// testsDue says the test files are not read and checked yet, by
	// loader, the load's.
	testsDue bool
	loader   lang.Loader
	// deps are the files the load read, by absolute path: a change to
	// one of them loads the playbook again.
	deps map[string]bool
	used uint64 // when it was last used, for putting away
}

// NewServer returns a Server.
func NewServer(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	return &Server{opts: opts, docs: map[string]*document{}, byPath: map[string]*document{}, projects: map[string]*lang.Project{}, books: map[string]*book{}, declares: map[uint64]bool{}, published: map[string]string{},
		parses: lang.NewParseCache(parseCacheBytes), subs: lang.NewCache()}
}

// errExit ends Serve after the client's exit notification.
var errExit = errors.New("exit")

// Serve reads requests from r and writes replies and notifications to w
// until the client says exit or r ends. It returns nil after an exit that
// followed shutdown, as the protocol's exit code 0.
func (s *Server) Serve(r io.Reader, w io.Writer) error {
	s.out = &writer{w: w}
	br := bufio.NewReaderSize(r, 64<<10)
	s.in = br
	if s.opts.HeapHeadroom > 0 {
		defer debug.SetGCPercent(debug.SetGCPercent(100)) // as it was once Serve returns
		s.paceGC()
	}
	for {
		m, err := readMessage(br)
		var rerr *rpcError
		switch {
		case errors.As(err, &rerr):
			// Not JSON: answered with no id, as JSON-RPC says.
			s.out.write(&message{ID: nullID(), Error: rerr})
			continue
		case err == io.EOF:
			return errors.New("the client closed the connection without exit")
		case err != nil:
			return err
		}
		err = s.handle(m)
		s.paceGC()
		if err == errExit {
			if s.shutdown {
				return nil
			}
			return errors.New("the client said exit before shutdown")
		}
	}
}

func nullID() *json.RawMessage {
	raw := json.RawMessage("null")
	return &raw
}

// handle answers one message. A panic in a handler is an internal error
// of the server: it is answered as one and the server keeps serving.
func (s *Server) handle(m *message) (err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(s.opts.Log, "apl lsp: internal error in %s: %v\n%s", m.Method, p, debug.Stack())
			if m.ID != nil {
				s.out.write(&message{ID: m.ID, Error: &rpcError{codeInternalError, fmt.Sprintf("internal error: %v", p)}})
			}
		}
	}()
	if m.Method == "" {
		return nil // a response to a request of ours: the server sends none
	}
	if m.Method == "exit" {
		return errExit
	}
	if m.Method != "textDocument/didChange" {
		s.flush() // what follows edits sees them checked
	}
	result, rerr := s.dispatch(m)
	if m.ID == nil {
		if rerr != nil {
			fmt.Fprintf(s.opts.Log, "apl lsp: %s: %s\n", m.Method, rerr.Message)
		}
		return nil
	}
	reply := &message{ID: m.ID, Result: result, Error: rerr}
	if rerr == nil && result == nil {
		reply.Result = json.RawMessage("null")
	}
	return s.out.write(reply)
}

// dispatch runs the handler of m's method.
func (s *Server) dispatch(m *message) (any, *rpcError) {
	if !s.initialized && m.Method != "initialize" {
		return nil, &rpcError{codeNotInitialized, "the server is not initialized"}
	}
	switch m.Method {
	case "initialize":
		s.initialized = true
		return initializeResult, nil
	case "initialized", "$/cancelRequest", "$/setTrace", "workspace/didChangeConfiguration", "workspace/didChangeWatchedFiles":
		return nil, nil
	case "shutdown":
		s.shutdown = true
		return nil, nil
	case "textDocument/didOpen":
		var p struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int    `json:"version"`
				Text    string `json:"text"`
			} `json:"textDocument"`
		}
		if err := params(m, &p); err != nil {
			return nil, err
		}
		path, err := uriPath(p.TextDocument.URI)
		if err != nil {
			return nil, err
		}
		d := &document{uri: p.TextDocument.URI, path: path, text: []byte(p.TextDocument.Text), version: p.TextDocument.Version}
		s.docs[d.uri] = d
		s.byPath[path] = d
		s.check(path)
		return nil, nil
	case "textDocument/didChange":
		var p struct {
			TextDocument struct {
				URI     string `json:"uri"`
				Version int    `json:"version"`
			} `json:"textDocument"`
			ContentChanges []struct {
				Range *Range `json:"range"`
				Text  string `json:"text"`
			} `json:"contentChanges"`
		}
		if err := params(m, &p); err != nil {
			return nil, err
		}
		d := s.docs[p.TextDocument.URI]
		if d == nil {
			return nil, &rpcError{codeInvalidParams, "the document " + p.TextDocument.URI + " is not open"}
		}
		for _, c := range p.ContentChanges {
			if c.Range == nil {
				d.text = []byte(c.Text)
				continue
			}
			start, end := offset(d.text, c.Range.Start), offset(d.text, c.Range.End)
			if end < start {
				start, end = end, start
			}
			d.text = append(append(append([]byte{}, d.text[:start]...), c.Text...), d.text[end:]...)
		}
		d.version = p.TextDocument.Version
		// Edits that arrive faster than they are checked (fast typing)
		// are checked once, after the last of them: while another
		// message is already waiting, the check waits too.
		s.pending = append(s.pending, d.path)
		if s.in == nil || s.in.Buffered() == 0 {
			s.flush()
		}
		return nil, nil
	case "textDocument/didSave":
		var p textDocumentParams
		if err := params(m, &p); err != nil {
			return nil, err
		}
		if path, err := uriPath(p.TextDocument.URI); err == nil {
			s.check(path)
		}
		return nil, nil
	case "textDocument/didClose":
		var p textDocumentParams
		if err := params(m, &p); err != nil {
			return nil, err
		}
		if d := s.docs[p.TextDocument.URI]; d != nil {
			delete(s.docs, d.uri)
			if s.byPath[d.path] == d {
				delete(s.byPath, d.path)
			}
			s.check(d.path)
		}
		return nil, nil
	case "textDocument/hover":
		var p positionParams
		if err := params(m, &p); err != nil {
			return nil, err
		}
		return s.hover(p.TextDocument.URI, p.Position), nil
	case "textDocument/definition":
		var p positionParams
		if err := params(m, &p); err != nil {
			return nil, err
		}
		return s.definition(p.TextDocument.URI, p.Position), nil
	case "textDocument/references":
		var p positionParams
		if err := params(m, &p); err != nil {
			return nil, err
		}
		return s.references(p.TextDocument.URI, p.Position), nil
	case "textDocument/completion":
		var p positionParams
		if err := params(m, &p); err != nil {
			return nil, err
		}
		return s.completion(p.TextDocument.URI, p.Position), nil
	case "textDocument/formatting":
		var p textDocumentParams
		if err := params(m, &p); err != nil {
			return nil, err
		}
		return s.format(p.TextDocument.URI), nil
	case "textDocument/codeAction":
		var p struct {
			TextDocument struct {
				URI string `json:"uri"`
			} `json:"textDocument"`
			Context struct {
				Diagnostics []Diagnostic `json:"diagnostics"`
			} `json:"context"`
		}
		if err := params(m, &p); err != nil {
			return nil, err
		}
		return s.codeActions(p.TextDocument.URI, p.Context.Diagnostics), nil
	case "textDocument/documentSymbol":
		var p textDocumentParams
		if err := params(m, &p); err != nil {
			return nil, err
		}
		return s.symbols(p.TextDocument.URI), nil
	}
	if strings.HasPrefix(m.Method, "$/") {
		return nil, nil // optional notifications a server may ignore
	}
	return nil, &rpcError{codeMethodNotFound, "apl lsp does not handle " + m.Method}
}

var initializeResult = map[string]any{
	"capabilities": map[string]any{
		"textDocumentSync": map[string]any{
			"openClose": true,
			"change":    2, // incremental
			"save":      map[string]any{"includeText": false},
		},
		"hoverProvider":              true,
		"definitionProvider":         true,
		"referencesProvider":         true,
		"documentFormattingProvider": true,
		"documentSymbolProvider":     true,
		"codeActionProvider":         map[string]any{"codeActionKinds": []string{"quickfix"}},
		"completionProvider":         map[string]any{"triggerCharacters": []string{".", "\""}},
	},
	"serverInfo": map[string]any{"name": "apl lsp"},
}

type textDocumentParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
}

type positionParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Position Position `json:"position"`
}

func params(m *message, v any) *rpcError {
	if err := json.Unmarshal(m.Params, v); err != nil {
		return &rpcError{codeInvalidParams, m.Method + ": " + err.Error()}
	}
	return nil
}

// uriPath is the absolute path of a file: URI.
func uriPath(uri string) (string, *rpcError) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return "", &rpcError{codeInvalidParams, fmt.Sprintf("apl lsp serves file: URIs, not %q", uri)}
	}
	return filepath.Clean(filepath.FromSlash(u.Path)), nil
}

// pathURI is the file: URI of an absolute path.
func pathURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// notify sends a notification.
func (s *Server) notify(method string, params any) {
	b, err := json.Marshal(params)
	if err != nil {
		return
	}
	s.out.write(&message{Method: method, Params: b})
}

// parseCacheBytes bounds the source the parse cache holds.
const parseCacheBytes = 4 << 20
