package fakeserver

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, "read: " + err.Error()
	}
	return resp.StatusCode, string(data)
}

func TestScriptAndRecord(t *testing.T) {
	s := New()
	defer s.Close()
	s.Push(Reply{Status: 500, Message: "boom", Times: 2}, Reply{Text: "hi", InputTokens: 7, OutputTokens: 3})
	body := `{"model":"m1","system":"SYS","messages":[{"role":"user","content":"hello"}]}`
	for i := 0; i < 2; i++ {
		if code, out := post(t, s.URL+"/v1/messages", body); code != 500 || !strings.Contains(out, `"boom"`) {
			t.Fatalf("attempt %d = %d %s", i, code, out)
		}
	}
	code, out := post(t, s.URL+"/v1/messages", body)
	if code != 200 || !strings.Contains(out, `"text":"hi"`) || !strings.Contains(out, `"input_tokens":7`) {
		t.Fatalf("answer = %d %s", code, out)
	}
	turns := s.Turns()
	if len(turns) != 3 || turns[2].Model != "m1" || turns[2].System != "SYS" || turns[2].Prompt != "hello" {
		t.Errorf("turns = %+v", turns)
	}
}

func TestWireFormats(t *testing.T) {
	s := New()
	defer s.Close()
	tests := []struct {
		name, path, body string
		want             []string
	}{
		{"anthropic stream", "/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":"q"}]}`,
			[]string{"event: message_start", `"text":"ok","type":"text_delta"`, "event: message_stop"}},
		{"anthropic forced tool", "/v1/messages", `{"model":"m","tools":[{"name":"returns"}],"tool_choice":{"type":"tool","name":"returns"},"messages":[{"role":"user","content":"q"}]}`,
			[]string{`"type":"tool_use"`, `"input":{"a":1}`}},
		{"responses", "/v1/responses", `{"model":"m","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]}]}`,
			[]string{"event: response.completed", `"output_tokens":5`}},
		{"responses strict schema refused", "/v1/responses", `{"model":"m","stream":true,"text":{"format":{"type":"json_schema","name":"x","strict":true,"schema":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}}},"input":[]}`,
			[]string{"'additionalProperties' is required to be supplied and to be false"}},
		{"chat json", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"q"}]}`,
			[]string{`"object":"chat.completion"`, `"content":"ok"`}},
		{"chat stream", "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"q"}]}`,
			[]string{`"object":"chat.completion.chunk"`, "data: [DONE]"}},
		{"gemini", "/v1beta/models/g1:generateContent", `{"contents":[{"role":"user","parts":[{"text":"q"}]}]}`,
			[]string{`"promptTokenCount":10`, `"text":"ok"`}},
		{"gemini sse", "/v1beta/models/g1:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"q"}]}]}`,
			[]string{"data: {", `"finishReason":"STOP"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.name, "forced tool") {
				s.Push(Reply{Text: `{"a":1}`})
			}
			_, out := post(t, s.URL+tt.path, tt.body)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("answer lacks %q:\n%s", w, out)
				}
			}
		})
	}
	if got := s.Requests()[len(s.Requests())-1].Model; got != "g1" {
		t.Errorf("gemini model = %q", got)
	}
}

func TestCutDiesMidAnswer(t *testing.T) {
	s := New()
	defer s.Close()
	s.Push(Reply{Text: strings.Repeat("x", 100), Cut: true})
	resp, err := http.Post(s.URL+"/v1/chat/completions", "application/json", bytes.NewReader([]byte(`{"model":"m","messages":[]}`)))
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("the answer arrived whole")
	}
}

func TestNewAtTakenAddress(t *testing.T) {
	s, err := NewAt("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if code, out := post(t, s.URL+"/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"q"}]}`); code != 200 || !strings.Contains(out, `"content":"ok"`) {
		t.Fatalf("answer = %d %s", code, out)
	}
	if s2, err := NewAt(strings.TrimPrefix(s.URL, "http://")); err == nil {
		s2.Close()
		t.Fatalf("NewAt(%s) succeeded on a taken address", s.URL)
	}
}
