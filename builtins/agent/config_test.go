package agent

import (
	"strings"
	"testing"
)

func TestNewRejects(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no type", Config{}, "driver type is not set"},
		{"unknown type", Config{Type: "claude"}, `unknown driver type "claude" (want one of command, claude-code, codex, gemini, openai, anthropic)`},
		{"command without argv", Config{Type: TypeCommand}, "command is not set"},
		{"bad input", Config{Type: TypeCommand, Command: []string{"x"}, Input: "pipe"}, `input "pipe" is not one of stdin, file, arg`},
		{"bad output", Config{Type: TypeCommand, Command: []string{"x"}, Output: "xml"}, `output "xml" is not one of text, json, jsonl`},
		{"unknown field", Config{Type: TypeCommand, Command: []string{"x"}, Output: "json", Fields: map[string]string{"txt": "a"}}, `unknown field "txt"`},
		{"fields with text output", Config{Type: TypeCommand, Command: []string{"x"}, Fields: map[string]string{"text": "a"}}, "fields need output"},
		{"command with options", Config{Type: TypeCommand, Command: []string{"x"}, Options: map[string]any{"max_turns": 3}}, "takes no options"},
		{"preset with output", Config{Type: TypeClaudeCode, Output: "text"}, "fixed by the preset"},
		{"preset with base url", Config{Type: TypeCodex, BaseURL: "http://x"}, "for the HTTP drivers"},
		{"unknown claude option", Config{Type: TypeClaudeCode, Options: map[string]any{"max_turn": 3}}, `unknown option "max_turn" (known: allowed_tools, append_system_prompt, disallowed_tools, max_retries, max_turns, permission_mode)`},
		{"claude option type", Config{Type: TypeClaudeCode, Options: map[string]any{"max_turns": "3"}}, "max_turns must be a whole number"},
		{"claude tools type", Config{Type: TypeClaudeCode, Options: map[string]any{"allowed_tools": []any{"Read", 3}}}, "allowed_tools[1] must be a string"},
		{"codex option type", Config{Type: TypeCodex, Options: map[string]any{"skip_git_repo_check": "yes"}}, "must be a bool"},
		{"http with command", Config{Type: TypeOpenAI, Command: []string{"x"}}, "for the CLI drivers"},
		{"bad base url", Config{Type: TypeAnthropic, BaseURL: "localhost:8080"}, `base_url "localhost:8080" is not an http(s) URL`},
		{"negative timeout", Config{Type: TypeOpenAI, Timeout: -1}, "timeout must not be negative"},
		{"negative price", Config{Type: TypeOpenAI, Prices: map[string]Price{"m": {InputPerMTok: -1}}}, `price of model "m"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New() = %v, %v; want error containing %q", d, err, tt.want)
			}
		})
	}
}

func TestNewAccepts(t *testing.T) {
	for _, cfg := range []Config{
		{Type: TypeCommand, Command: []string{"x"}, Output: "jsonl", Fields: map[string]string{"text": "a.b"}},
		{Type: TypeClaudeCode, Options: map[string]any{"allowed_tools": []string{"Read"}, "max_turns": 5}},
		{Type: TypeCodex, Command: []string{"/opt/codex", "exec", "--json"}},
		{Type: TypeGemini},
		{Type: TypeOpenAI, BaseURL: "http://localhost:11434/v1"},
		{Type: TypeAnthropic},
	} {
		t.Run(cfg.Type, func(t *testing.T) {
			if _, err := New(cfg); err != nil {
				t.Errorf("New(%+v): %v", cfg, err)
			}
		})
	}
}
