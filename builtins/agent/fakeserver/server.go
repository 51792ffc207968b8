// Package fakeserver is a fake model server for tests: it speaks the
// Anthropic Messages API (JSON and SSE), the OpenAI Responses API (SSE) and
// Chat Completions (JSON and SSE), and Gemini's generateContent and
// streamGenerateContent, on 127.0.0.1 only.
//
// A test scripts the answers (Push), and reads back what was asked
// (Requests): model, system prompt, last user text and the raw body. Each
// answer can be text, an HTTP error, an answer cut off mid-stream, or a run
// of errors before a success. The server knows nothing of apl; the driver
// tests and the conformance suite both use it, so that what real CLIs send
// and what apl's own HTTP drivers send are checked against the same wire
// formats.
//
// Requests that are not model turns (token counting, model lists, a CLI's
// start-up probes) are answered with a plausible empty success and recorded,
// but consume no scripted reply.
package fakeserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Reply is one scripted answer.
type Reply struct {
	// Text is the answer. When the request forces a tool (Anthropic
	// tool_choice of type "tool" or "any", or a single tool offered for
	// structured output) and Text is a JSON object, the answer is a call of
	// that tool with Text as its input instead.
	Text string
	// InputTokens, OutputTokens and CachedTokens are the usage served.
	InputTokens, OutputTokens, CachedTokens int
	// Status, when non-zero, makes the answer an HTTP error with this status
	// and Message in the API's error shape.
	Status  int
	Message string
	// RetryAfter is sent as the Retry-After header of an error answer.
	RetryAfter string
	// Cut makes the server close the connection halfway through the answer:
	// after the first events of a stream, or the first bytes of a JSON body.
	Cut bool
	// Times is how many requests this reply serves (default 1).
	Times int
	// StopReason overrides the stop reason ("max_tokens", "refusal") of
	// the Anthropic APIs; finish_reason of the OpenAI ones.
	StopReason string
}

// Request is one request the server received.
type Request struct {
	// API is "anthropic", "responses", "chat", "gemini", or "other".
	API    string
	Method string
	Path   string
	Header http.Header
	// Model is the model asked for, from the body or the Gemini path.
	Model string
	// System is the system prompt, its parts joined by newlines.
	System string
	// Prompt is the text of the last user message.
	Prompt string
	// Texts is every text the conversation holds, in order, so tests can
	// check that a resumed session sent the earlier turns.
	Texts []string
	// Stream reports whether a streaming answer was asked for.
	Stream bool
	// Turn reports whether the request consumed a scripted reply.
	Turn bool
	Body []byte
}

// Server is a running fake model server.
type Server struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:41234, with no
	// path: APIs are routed by their path suffix, so any prefix works.
	URL string

	srv *httptest.Server

	mu       sync.Mutex
	queue    []Reply
	fallback Reply
	requests []Request
	seq      int
}

// New starts a server on a free port of 127.0.0.1. Its default reply, once
// the script is used up, is the text "ok" with 10 input and 5 output
// tokens.
func New() *Server {
	s, err := NewAt("127.0.0.1:0")
	if err != nil {
		// httptest listens on 127.0.0.1 already; fall back to it.
		s = newServer()
		s.srv.Start()
		s.URL = s.srv.URL
	}
	return s
}

// NewAt is New on a given address, for a client whose endpoint is fixed:
// examples/local-openai's driver block names localhost:11434, so its
// cassette is recorded with the server there. It fails when the address is
// taken.
func NewAt(addr string) (*Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := newServer()
	s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	s.URL = s.srv.URL
	return s, nil
}

func newServer() *Server {
	s := &Server{fallback: Reply{Text: "ok", InputTokens: 10, OutputTokens: 5}}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	return s
}

// Close stops the server, cutting any open connection.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Push appends replies to the script. Model turns take them in order.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range replies {
		if r.Times <= 0 {
			r.Times = 1
		}
		s.queue = append(s.queue, r)
	}
}

// SetDefault sets the reply given once the script is used up.
func (s *Server) SetDefault(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = r
}

// Reset forgets the script and the recorded requests.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue, s.requests = nil, nil
}

// Requests returns a copy of the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Turns returns the requests that were model turns.
func (s *Server) Turns() []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Turn {
			out = append(out, r)
		}
	}
	return out
}

// next takes the next scripted reply, or the default one.
func (s *Server) next() Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return s.fallback
	}
	r := s.queue[0]
	r.Times--
	if r.Times <= 0 {
		s.queue = s.queue[1:]
	} else {
		s.queue[0] = r
	}
	return r
}

// id returns a fresh identifier with prefix.
func (s *Server) id(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return prefix + strings.Repeat("0", 3) + itoa(s.seq)
}

func (s *Server) record(r Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := Request{API: "other", Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	p := r.URL.Path
	switch {
	case r.Method != http.MethodPost:
		s.record(req)
		s.other(w, r)
	case strings.HasSuffix(p, "/messages/count_tokens"):
		req.API = "anthropic"
		s.record(req)
		writeJSON(w, 200, map[string]any{"input_tokens": 10})
	case strings.HasSuffix(p, "/messages"):
		req.API = "anthropic"
		s.anthropic(w, r, req)
	case strings.HasSuffix(p, "/responses"):
		req.API = "responses"
		s.responses(w, r, req)
	case strings.HasSuffix(p, "/chat/completions"):
		req.API = "chat"
		s.chat(w, r, req)
	case strings.HasSuffix(p, ":countTokens"):
		req.API = "gemini"
		s.record(req)
		writeJSON(w, 200, map[string]any{"totalTokens": 10})
	case strings.HasSuffix(p, ":generateContent"), strings.HasSuffix(p, ":streamGenerateContent"):
		req.API = "gemini"
		s.gemini(w, r, req)
	default:
		s.record(req)
		writeJSON(w, 200, map[string]any{})
	}
}

// other answers the GETs CLIs make at start-up (model lists and the like)
// with an empty success.
func (s *Server) other(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/models"):
		writeJSON(w, 200, map[string]any{"object": "list", "data": []any{}, "models": []any{}})
	default:
		writeJSON(w, 200, map[string]any{})
	}
}

// fail writes r's HTTP error in the shape of api. It reports whether it
// did.
func fail(w http.ResponseWriter, api string, r Reply) bool {
	if r.Status == 0 {
		return false
	}
	msg := r.Message
	if msg == "" {
		msg = http.StatusText(r.Status)
	}
	if r.RetryAfter != "" {
		w.Header().Set("Retry-After", r.RetryAfter)
	}
	var body any
	switch api {
	case "anthropic":
		typ := "api_error"
		switch {
		case r.Status == 429:
			typ = "rate_limit_error"
		case r.Status == 529:
			typ = "overloaded_error"
		case r.Status < 500:
			typ = "invalid_request_error"
		}
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
	case "gemini":
		status := "INTERNAL"
		switch {
		case r.Status == 429:
			status = "RESOURCE_EXHAUSTED"
		case r.Status < 500:
			status = "INVALID_ARGUMENT"
		}
		body = map[string]any{"error": map[string]any{"code": r.Status, "message": msg, "status": status}}
	default:
		typ := "server_error"
		if r.Status == 429 {
			typ = "rate_limit_exceeded"
		} else if r.Status < 500 {
			typ = "invalid_request_error"
		}
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}}
	}
	writeJSON(w, r.Status, body)
	return true
}

// cut writes the first half of data and closes the connection without
// finishing the answer.
func cut(w http.ResponseWriter, data []byte) {
	if f, ok := w.(http.Flusher); ok {
		w.Write(data[:len(data)/2])
		f.Flush()
	}
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
	}
}

// sse writes a stream of server-sent events; with cutAfter > 0 the
// connection dies after that many events.
func sse(w http.ResponseWriter, events []event, cutAfter int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	f, _ := w.(http.Flusher)
	for i, ev := range events {
		if cutAfter > 0 && i == cutAfter {
			if hj, ok := w.(http.Hijacker); ok {
				if conn, _, err := hj.Hijack(); err == nil {
					conn.Close()
				}
			}
			return
		}
		var b bytes.Buffer
		if ev.name != "" {
			b.WriteString("event: " + ev.name + "\n")
		}
		data, _ := json.Marshal(ev.data)
		if raw, ok := ev.data.(rawData); ok {
			data = []byte(raw)
		}
		b.WriteString("data: ")
		b.Write(data)
		b.WriteString("\n\n")
		w.Write(b.Bytes())
		if f != nil {
			f.Flush()
		}
	}
}

// rawData is event data written as it is, not as JSON: "[DONE]".
type rawData string

// event is one server-sent event.
type event struct {
	name string
	data any
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func marshal(v any) []byte {
	data, _ := json.Marshal(v)
	return data
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for n >= 10 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	i--
	b[i] = byte('0' + n)
	return string(b[i:])
}

// isObject reports whether text is a JSON object, the only answer a forced
// tool call can carry.
func isObject(text string) bool {
	t := strings.TrimSpace(text)
	return strings.HasPrefix(t, "{") && json.Valid([]byte(t))
}

// textOf flattens a message content that is either a string or a list of
// parts with "text" fields.
func textOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var parts []string
		for _, p := range v {
			if m, ok := p.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					parts = append(parts, t)
				} else if c, ok := m["content"]; ok {
					// A tool result's content.
					if t := textOf(c); t != "" {
						parts = append(parts, t)
					}
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}
