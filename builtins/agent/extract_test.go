package agent

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    string
		wantErr error
	}{
		{name: "whole object", text: `  {"a": 1}  `, want: `{"a": 1}`},
		{name: "whole array", text: "[1, 2]\n", want: `[1, 2]`},
		{name: "whole number", text: "8.5", want: `8.5`},
		{
			name: "last json fence wins",
			text: "first:\n```json\n{\"a\": 1}\n```\nthen:\n```json\n{\"a\": 2}\n```\ndone",
			want: `{"a": 2}`,
		},
		{
			name: "json fence beats a later bare object",
			text: "```json\n{\"a\": 1}\n```\nsee {\"note\": true}",
			want: `{"a": 1}`,
		},
		{
			name: "untagged fence holding an object",
			text: "Result:\n```\n{\"ok\": true}\n```\n",
			want: `{"ok": true}`,
		},
		{
			name: "untagged fence of code is skipped",
			text: "```\nfunc main() {}\n```\nand {\"ok\": 1}",
			want: `{"ok": 1}`,
		},
		{
			name: "tilde fence and tag case",
			text: "~~~JSON\n[1]\n~~~\n",
			want: `[1]`,
		},
		{
			name: "json fence that does not parse falls back",
			text: "```json\n{a: 1}\n```\n```json\n{\"b\": 2}\n```\n```json\nnope\n```",
			want: `{"b": 2}`,
		},
		{
			name: "last balanced object in prose",
			text: `I did it. {"a": 1} and finally {"verdict": "PASS", "score": 8.5} bye`,
			want: `{"verdict": "PASS", "score": 8.5}`,
		},
		{
			name: "braces inside strings",
			text: `Output: {"msg": "use } and { freely", "esc": "quote \" }"} end`,
			want: `{"msg": "use } and { freely", "esc": "quote \" }"}`,
		},
		{
			name: "nested objects are one",
			text: `x {"a": {"b": {"c": 1}}} y`,
			want: `{"a": {"b": {"c": 1}}}`,
		},
		{
			name: "stray brace in prose before the JSON",
			text: "I used { as a delimiter.\n{\"a\": 1}",
			want: `{"a": 1}`,
		},
		{
			name: "balanced non-JSON braces are skipped",
			text: `template {name} then {"a": 1} then {not json}`,
			want: `{"a": 1}`,
		},
		{
			name:    "truncated whole object",
			text:    `{"verdict": "PASS", "scores": [1, 2`,
			wantErr: ErrTruncated,
		},
		{
			name:    "truncated after a complete example",
			text:    "Example: {\"a\": 1}\nAnswer:\n{\"verdict\": \"PA",
			wantErr: ErrTruncated,
		},
		{
			name:    "truncated inside an unclosed fence",
			text:    "```json\n{\"a\": [1, 2,\n",
			wantErr: ErrTruncated,
		},
		{
			name:    "truncated after a fence",
			text:    "```json\n{\"a\": 1}\n```\nnow the real one: {\n  \"b\":",
			wantErr: ErrTruncated,
		},
		{
			name:    "truncated inside a string",
			text:    `{"summary": "it was going {fine`,
			wantErr: ErrTruncated,
		},
		{name: "no JSON", text: "All done, nothing to report.", wantErr: ErrNoJSON},
		{name: "empty", text: "   ", wantErr: ErrNoJSON},
		{name: "only non-JSON braces", text: "set {a, b} and {c}", wantErr: ErrNoJSON},
		{name: "a stray opening brace is not truncation", text: "use { to open a block", wantErr: ErrNoJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExtractJSON(tt.text)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ExtractJSON() = %s, %v; want error %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ExtractJSON() error: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("ExtractJSON() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestExtractFromResponse(t *testing.T) {
	tests := []struct {
		name string
		resp Response
		want string
	}{
		{name: "structured wins", resp: Response{Text: `{"from": "text"}`, Structured: json.RawMessage(`{"from": "structured"}`)}, want: `{"from": "structured"}`},
		{name: "null structured is unset", resp: Response{Text: `{"from": "text"}`, Structured: json.RawMessage(`null`)}, want: `{"from": "text"}`},
		{name: "invalid structured is ignored", resp: Response{Text: `{"from": "text"}`, Structured: json.RawMessage(`{`)}, want: `{"from": "text"}`},
		{name: "text", resp: Response{Text: "ok\n```json\n{\"from\": \"fence\"}\n```"}, want: `{"from": "fence"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ExtractFromResponse(tt.resp)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{
		`{"a": 1}`, "```json\n{\"a\":1}\n```", `x {"a": "}"} y {`, `{"a": "\`,
		"```\n{\n```", "~~~~json\n[\n~~~~", `"\\"{`, strings.Repeat("{", 50),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := ExtractJSON(text)
		switch {
		case err == nil && !json.Valid(got):
			t.Fatalf("ExtractJSON(%q) returned invalid JSON %q", text, got)
		case err != nil && got != nil:
			t.Fatalf("ExtractJSON(%q) returned %q with error %v", text, got, err)
		case err != nil && !errors.Is(err, ErrNoJSON) && !errors.Is(err, ErrTruncated):
			t.Fatalf("ExtractJSON(%q) returned unexpected error %v", text, err)
		}
	})
}

func TestExtractJSONPathologicalInputIsFast(t *testing.T) {
	// Each unclosed brace costs a scan to the end of the text; a scan per
	// brace here would take a minute, not milliseconds.
	got, err := ExtractJSON(strings.Repeat("x {", 100_000))
	if !errors.Is(err, ErrNoJSON) {
		t.Errorf("ExtractJSON(stray braces) = %s, %v", got, err)
	}
}
