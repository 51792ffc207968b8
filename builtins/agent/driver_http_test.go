package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins/agent/fakeserver"
	"github.com/google/go-cmp/cmp"
)

// testKey is the API key the HTTP tests put in the environment; it must
// never show in an error.
const testKey = "sk-test-0123456789abcdef"

// reply is one canned HTTP answer.
type reply struct {
	status int
	header map[string]string
	body   string
}

// seen is one request the fake server received.
type seen struct {
	path   string
	header http.Header
	body   map[string]any
}

// fakeServer answers with replies in order, repeating the last, and keeps
// what it was sent.
type fakeServer struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	got     []seen
}

func newFakeServer(t *testing.T, replies ...reply) *fakeServer {
	s := &fakeServer{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			t.Errorf("request body is not JSON: %s", data)
		}
		s.mu.Lock()
		s.got = append(s.got, seen{path: r.URL.Path, header: r.Header.Clone(), body: body})
		rep := s.replies[min(len(s.got), len(s.replies))-1]
		s.mu.Unlock()
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		// A server that echoes credentials back must not leak them through
		// our errors.
		w.WriteHeader(rep.status)
		io.WriteString(w, strings.ReplaceAll(rep.body, "$AUTH", r.Header.Get("Authorization")+r.Header.Get("X-Api-Key")))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeServer) requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.got...)
}

// sleeps records the waits of the retry loop instead of waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

const openaiOK = `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,` +
	`"message":{"role":"assistant","content":"{\"verdict\":\"PASS\"}","refusal":null},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":20}}}`

const anthropicOK = `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",` +
	`"content":[{"type":"text","text":"Here it is. "},{"type":"text","text":"{\"verdict\":\"PASS\"}"}],` +
	`"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":40,"cache_creation_input_tokens":5,"cache_read_input_tokens":7}}`

const anthropicToolUse = `{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5",` +
	`"content":[{"type":"tool_use","id":"toolu_1","name":"returns","input":{"verdict":"PASS","score":8.5}}],` +
	`"stop_reason":"tool_use","usage":{"input_tokens":100,"output_tokens":40}}`

// httpCase is one scenario run against both HTTP drivers.
type httpCase struct {
	name      string
	replies   []reply
	wantCalls int
	wantSleep []time.Duration
	wantErr   error  // errors.Is target
	wantMsg   string // substring of the error
}

func runHTTPCase(t *testing.T, typ, keyEnv string, tc httpCase) (Response, error, *fakeServer) {
	t.Setenv(keyEnv, testKey)
	srv := newFakeServer(t, tc.replies...)
	sl := &sleeps{}
	d := newDriver(t, Config{
		Type: typ, BaseURL: srv.URL, Model: "m1",
		Retry: Retry{Max: 3, Backoff: 100 * time.Millisecond, Sleep: sl.sleep},
	})
	var heard []time.Duration
	progress := func(p Progress) {
		if p.Kind != ProgressRetrying || p.Attempt != len(heard)+1 || p.Max != 2 {
			t.Errorf("progress %+v, want retry %d of 2", p, len(heard)+1)
		}
		heard = append(heard, p.Wait)
	}
	resp, err := d.Call(context.Background(), Request{Prompt: "p", System: "sys", Progress: progress})
	if diff := cmp.Diff(tc.wantSleep, heard); diff != "" {
		t.Errorf("retries reported (-want +got):\n%s", diff)
	}
	if got := len(srv.requests()); got != tc.wantCalls {
		t.Errorf("server got %d requests, want %d", got, tc.wantCalls)
	}
	if diff := cmp.Diff(tc.wantSleep, sl.d); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	switch {
	case tc.wantErr == nil && tc.wantMsg == "" && err != nil:
		t.Errorf("unexpected error: %v", err)
	case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
		t.Errorf("error = %v, want one wrapping %v", err, tc.wantErr)
	case tc.wantMsg != "" && (err == nil || !strings.Contains(err.Error(), tc.wantMsg)):
		t.Errorf("error = %v, want one containing %q", err, tc.wantMsg)
	}
	if err != nil && strings.Contains(err.Error(), testKey) {
		t.Errorf("error leaks the API key: %v", err)
	}
	return resp, err, srv
}

// retryCases are the transport scenarios both HTTP drivers share; ok is
// the driver's success body.
func retryCases(ok string) []httpCase {
	return []httpCase{
		{name: "success", replies: []reply{{200, nil, ok}}, wantCalls: 1},
		{
			name:      "429 with Retry-After then success",
			replies:   []reply{{429, map[string]string{"Retry-After": "7"}, `{"error":"slow down"}`}, {200, nil, ok}},
			wantCalls: 2, wantSleep: []time.Duration{7 * time.Second},
		},
		{
			name:      "500 then success backs off",
			replies:   []reply{{500, nil, "oops"}, {503, nil, "busy"}, {200, nil, ok}},
			wantCalls: 3, wantSleep: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond},
		},
		{
			name:      "persistent 500 fails after max attempts without leaking the key",
			replies:   []reply{{500, nil, `{"error":"internal","echo":"$AUTH"}`}},
			wantCalls: 3, wantSleep: []time.Duration{100 * time.Millisecond, 200 * time.Millisecond},
			wantMsg: "HTTP 500 after 3 attempts",
		},
		{
			name:      "400 is not retried",
			replies:   []reply{{400, nil, `{"error":{"message":"bad model"}}`}},
			wantCalls: 1, wantMsg: "HTTP 400: bad model",
		},
		{
			name:      "401 echoing the key is redacted",
			replies:   []reply{{401, nil, `invalid key $AUTH`}},
			wantCalls: 1, wantMsg: "invalid key",
		},
	}
}

func TestOpenAI(t *testing.T) {
	cases := append(retryCases(openaiOK),
		httpCase{
			name:      "truncation",
			replies:   []reply{{200, nil, `{"choices":[{"message":{"content":"{\"verd"},"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`}},
			wantCalls: 1, wantErr: ErrTruncated,
		},
		httpCase{
			name:      "refusal",
			replies:   []reply{{200, nil, `{"choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`}},
			wantCalls: 1, wantErr: ErrRefused, wantMsg: "I can't help with that.",
		},
		httpCase{
			name:      "no choices",
			replies:   []reply{{200, nil, `{"choices":[]}`}},
			wantCalls: 1, wantMsg: "no choices",
		},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err, srv := runHTTPCase(t, TypeOpenAI, "OPENAI_API_KEY", tc)
			reqs := srv.requests()
			for _, r := range reqs {
				if r.path != "/chat/completions" {
					t.Errorf("path = %s", r.path)
				}
				if got := r.header.Get("Authorization"); got != "Bearer "+testKey {
					t.Errorf("Authorization = %q", got)
				}
				want := map[string]any{"model": "m1", "messages": []any{
					map[string]any{"role": "system", "content": "sys"},
					map[string]any{"role": "user", "content": "p"},
				}}
				if diff := cmp.Diff(want, r.body); diff != "" {
					t.Errorf("request body (-want +got):\n%s", diff)
				}
			}
			if tc.name == "success" {
				if err != nil {
					t.Fatal(err)
				}
				want := Usage{InputTokens: 100, OutputTokens: 30, CacheReadTokens: 20}
				if resp.Text != `{"verdict":"PASS"}` || resp.Usage != want || string(resp.Raw) != openaiOK {
					t.Errorf("Response = %+v", resp)
				}
			}
		})
	}
}

func TestOpenAISchemaAndLocalServer(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	srv := newFakeServer(t, reply{200, nil, `{"choices":[{"message":{"content":"{\"value\": [1, 2]}"},"finish_reason":"stop"}]}`})
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/") // from the environment, trailing slash and all
	d := newDriver(t, Config{Type: TypeOpenAI, MaxTokens: 256})
	schema := map[string]any{"type": "array", "items": map[string]any{"type": "number"}}
	resp, err := d.Call(context.Background(), Request{Prompt: "p", Model: "llama3", Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Structured) != `[1, 2]` {
		t.Errorf("Structured = %s, want the unwrapped array", resp.Structured)
	}
	r := srv.requests()[0]
	if _, ok := r.header["Authorization"]; ok {
		t.Errorf("Authorization sent with an empty key: %q", r.header.Get("Authorization"))
	}
	want := map[string]any{
		"model":      "llama3",
		"max_tokens": float64(256),
		"messages":   []any{map[string]any{"role": "user", "content": "p"}},
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "returns", "strict": false,
			"schema": map[string]any{"type": "object", "required": []any{"value"}, "properties": map[string]any{
				"value": map[string]any{"type": "array", "items": map[string]any{"type": "number"}},
			}},
		}},
	}
	if diff := cmp.Diff(want, r.body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
}

func TestAnthropic(t *testing.T) {
	cases := append(retryCases(anthropicOK),
		httpCase{
			name:      "truncation",
			replies:   []reply{{200, nil, `{"content":[{"type":"text","text":"{\"a\":"}],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":4096}}`}},
			wantCalls: 1, wantErr: ErrTruncated,
		},
		httpCase{
			name:      "refusal",
			replies:   []reply{{200, nil, `{"content":[{"type":"text","text":"I won't do that."}],"stop_reason":"refusal","usage":{"input_tokens":1,"output_tokens":4}}`}},
			wantCalls: 1, wantErr: ErrRefused, wantMsg: "I won't do that.",
		},
		httpCase{
			name:      "529 overloaded is retried",
			replies:   []reply{{529, nil, `{"type":"error","error":{"type":"overloaded_error"}}`}, {200, nil, anthropicOK}},
			wantCalls: 2, wantSleep: []time.Duration{100 * time.Millisecond},
		},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err, srv := runHTTPCase(t, TypeAnthropic, "ANTHROPIC_API_KEY", tc)
			for _, r := range srv.requests() {
				if r.path != "/v1/messages" {
					t.Errorf("path = %s", r.path)
				}
				if r.header.Get("X-Api-Key") != testKey || r.header.Get("Anthropic-Version") != "2023-06-01" ||
					r.header.Get("Content-Type") != "application/json" {
					t.Errorf("headers = %v", r.header)
				}
				want := map[string]any{
					"model": "m1", "max_tokens": float64(4096), "system": "sys",
					"messages": []any{map[string]any{"role": "user", "content": "p"}},
				}
				if diff := cmp.Diff(want, r.body); diff != "" {
					t.Errorf("request body (-want +got):\n%s", diff)
				}
			}
			if tc.name == "success" {
				if err != nil {
					t.Fatal(err)
				}
				want := Usage{InputTokens: 100, OutputTokens: 40, CacheWriteTokens: 5, CacheReadTokens: 7}
				if resp.Text != `Here it is. {"verdict":"PASS"}` || resp.Usage != want || resp.Structured != nil {
					t.Errorf("Response = %+v", resp)
				}
			}
		})
	}
}

func TestAnthropicSchemaForcesTool(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", testKey)
	srv := newFakeServer(t, reply{200, nil, anthropicToolUse})
	d := newDriver(t, Config{
		Type: TypeAnthropic, BaseURL: srv.URL, Model: "claude-sonnet-4-5", MaxTokens: 1000,
		Prices: map[string]Price{"claude-sonnet-4-5": {InputPerMTok: 3, OutputPerMTok: 15}},
	})
	schema := map[string]any{"type": "object", "properties": map[string]any{"verdict": map[string]any{"type": "string"}}}
	resp, err := d.Call(context.Background(), Request{Prompt: "p", Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Structured) != `{"verdict":"PASS","score":8.5}` || resp.Text != string(resp.Structured) {
		t.Errorf("Structured = %s, Text = %s", resp.Structured, resp.Text)
	}
	if resp.CostUSD == nil || *resp.CostUSD != (100*3+40*15)/1e6 {
		t.Errorf("CostUSD = %v", resp.CostUSD)
	}
	body := srv.requests()[0].body
	wantTools := []any{map[string]any{
		"name": "returns", "description": "Return the answer in the required shape.",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"verdict": map[string]any{"type": "string"}}},
	}}
	if diff := cmp.Diff(wantTools, body["tools"]); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]any{"type": "tool", "name": "returns"}, body["tool_choice"]); diff != "" {
		t.Errorf("tool_choice (-want +got):\n%s", diff)
	}
	if body["max_tokens"] != float64(1000) {
		t.Errorf("max_tokens = %v", body["max_tokens"])
	}
}

func TestHTTPTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	d := newDriver(t, Config{Type: TypeOpenAI, BaseURL: srv.URL, Model: "m", Timeout: 100 * time.Millisecond})
	_, err := d.Call(context.Background(), Request{Prompt: "p"})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("error = %v, want ErrTimeout", err)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"3", 3 * time.Second, true},
		{"Wed, 01 Jan 2025 12:00:10 GMT", 10 * time.Second, true},
		{"Wed, 01 Jan 2025 11:00:00 GMT", 0, true},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := retryAfter(tt.in, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestRetryAfterBeyondTimeoutFailsAtOnce(t *testing.T) {
	srv := newFakeServer(t, reply{429, map[string]string{"Retry-After": "3600"}, "quota"})
	sl := &sleeps{}
	d := newDriver(t, Config{Type: TypeOpenAI, BaseURL: srv.URL, Model: "m", Timeout: time.Minute, Retry: Retry{Sleep: sl.sleep}})
	_, err := d.Call(context.Background(), Request{Prompt: "p"})
	if err == nil || !strings.Contains(err.Error(), "HTTP 429, and the retry wait of 1h0m0s outlasts the call's timeout: quota") {
		t.Fatalf("error = %v", err)
	}
	if len(sl.d) != 0 || len(srv.requests()) != 1 {
		t.Errorf("waited %v over %d requests, want no wait and 1 request", sl.d, len(srv.requests()))
	}
}

func TestHTTPRawHasNoKey(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", testKey)
	srv := newFakeServer(t, reply{200, nil, `{"choices":[{"message":{"content":"$AUTH"},"finish_reason":"stop"}]}`})
	d := newDriver(t, Config{Type: TypeOpenAI, BaseURL: srv.URL, Model: "m"})
	resp, err := d.Call(context.Background(), Request{Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(resp.Raw), testKey) || strings.Contains(resp.Text, testKey) {
		t.Errorf("key leaked into the response: Raw %s", resp.Raw)
	}
}

// With Request.RawFile set, an HTTP driver writes the answer's body there,
// the key it echoes redacted, and returns no copy of it in Raw.
func TestHTTPStreamsRawFile(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", testKey)
	srv := newFakeServer(t, reply{200, nil, `{"choices":[{"message":{"content":"hi $AUTH"},"finish_reason":"stop"}]}`})
	d := newDriver(t, Config{Type: TypeOpenAI, BaseURL: srv.URL, Model: "m"})
	req := Request{Prompt: "p", RawFile: filepath.Join(t.TempDir(), "raw")}
	resp, err := d.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Raw != nil || resp.RawFile != req.RawFile || !strings.HasPrefix(resp.Text, "hi ") {
		t.Errorf("Raw = %q, RawFile = %q, Text = %q", resp.Raw, resp.RawFile, resp.Text)
	}
	b, err := os.ReadFile(req.RawFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"choices"`) || strings.Contains(string(b), testKey) || !strings.Contains(string(b), "[REDACTED]") {
		t.Errorf("raw file holds %s", b)
	}
}

// Regression: a refused connection failed the call at once, where a 5xx
// was retried.
func TestHTTPRetriesRefusedConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	for _, typ := range []string{TypeOpenAI, TypeAnthropic} {
		t.Run(typ, func(t *testing.T) {
			sl := &sleeps{}
			d := newDriver(t, Config{Type: typ, BaseURL: "http://" + addr, Model: "m", Retry: Retry{Max: 3, Backoff: time.Second, Sleep: sl.sleep}})
			_, err := d.Call(context.Background(), Request{Prompt: "p"})
			if err == nil || !strings.Contains(err.Error(), "driver "+typ+": connection refused after 3 attempts") {
				t.Fatalf("error = %v", err)
			}
			if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, sl.d); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// Regression: a connection that died mid-answer was not retried.
func TestHTTPRetriesCutAnswer(t *testing.T) {
	srv := fakeserver.New()
	defer srv.Close()
	srv.Push(fakeserver.Reply{Cut: true}, fakeserver.Reply{Text: "whole", InputTokens: 3, OutputTokens: 4})
	for _, typ := range []string{TypeOpenAI, TypeAnthropic} {
		t.Run(typ, func(t *testing.T) {
			srv.Reset()
			srv.Push(fakeserver.Reply{Cut: true}, fakeserver.Reply{Text: "whole", InputTokens: 3, OutputTokens: 4})
			sl := &sleeps{}
			d := newDriver(t, Config{Type: typ, BaseURL: srv.URL + "/v1", Model: "m", Retry: Retry{Sleep: sl.sleep}})
			if typ == TypeAnthropic {
				d = newDriver(t, Config{Type: typ, BaseURL: srv.URL, Model: "m", Retry: Retry{Sleep: sl.sleep}})
			}
			resp, err := d.Call(context.Background(), Request{Prompt: "p"})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "whole" || resp.Usage != (Usage{InputTokens: 3, OutputTokens: 4}) || len(sl.d) != 1 {
				t.Errorf("Response = %q %+v after waits %v", resp.Text, resp.Usage, sl.d)
			}
		})
	}
}
