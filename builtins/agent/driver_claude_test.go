package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// claudeSuccess is a result object as `claude -p --output-format json
// --json-schema …` prints it.
const claudeSuccess = `{"type":"result","subtype":"success","is_error":false,"duration_ms":2711,"num_turns":2,` +
	`"result":"Done. {\"verdict\": \"PASS\"}","session_id":"3f1c0e9a-5b7d-4a57-9d8e-1b2c3d4e5f60",` +
	`"total_cost_usd":0.0421,"usage":{"input_tokens":12,"cache_creation_input_tokens":3500,` +
	`"cache_read_input_tokens":14000,"output_tokens":420,"server_tool_use":{"web_search_requests":0}},` +
	`"structured_output":{"verdict":"PASS","alignment_score":8.5}}`

func TestClaudeSuccess(t *testing.T) {
	f := fakeCLI(t, "claude", heredoc(claudeSuccess))
	d := newDriver(t, Config{
		Type:  TypeClaudeCode,
		Model: "sonnet",
		Options: map[string]any{
			"append_system_prompt": "Be terse.",
			"allowed_tools":        []any{"Read", "Bash(git:*)"},
			"disallowed_tools":     []string{"WebSearch"},
			"permission_mode":      "acceptEdits",
			"max_turns":            float64(12),
		},
	})
	req := baseRequest(t)
	req.System = "You are the planner."
	req.SessionID = "prev-session"
	req.Schema = map[string]any{"type": "object", "properties": map[string]any{"verdict": map[string]any{"type": "string"}}}
	resp, err := d.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	wantArgv := []string{
		"-p", "--output-format", "stream-json", "--verbose",
		"--model", "sonnet",
		"--append-system-prompt", "Be terse.\n\nYou are the planner.",
		"--allowedTools", "Read,Bash(git:*)",
		"--disallowedTools", "WebSearch",
		"--permission-mode", "acceptEdits",
		"--max-turns", "12",
		"--json-schema", `{"properties":{"verdict":{"type":"string"}},"type":"object"}`,
		"--resume=prev-session",
	}
	if diff := cmp.Diff(wantArgv, f.argv(t)); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	if got := f.read(t, "stdin"); got != req.Prompt {
		t.Errorf("stdin = %q, want the prompt alone", got)
	}
	if env := f.env(t, "APL_STEP", "APL_ATTEMPT"); env["APL_STEP"] != "plan" || env["APL_ATTEMPT"] != "2" {
		t.Errorf("env = %v", env)
	}
	resp.Raw = nil
	want := Response{
		Text:       `Done. {"verdict": "PASS"}`,
		Structured: json.RawMessage(`{"verdict":"PASS","alignment_score":8.5}`),
		SessionID:  "3f1c0e9a-5b7d-4a57-9d8e-1b2c3d4e5f60",
		Usage:      Usage{InputTokens: 12, OutputTokens: 420, CacheReadTokens: 14000, CacheWriteTokens: 3500},
		CostUSD:    ptr(0.0421),
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("Response (-want +got):\n%s", diff)
	}
}

func TestClaudeResults(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		prices    map[string]Price
		wantErr   []string // empty: success
		wantText  string
		wantUsage Usage
		wantCost  *float64
	}{
		{
			name:     "is_error with exit 0 is a failure",
			body:     heredoc(`{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 overloaded","session_id":"s1","total_cost_usd":0.001,"usage":{"input_tokens":5,"output_tokens":0}}`),
			wantErr:  []string{"driver claude-code: the run failed: API Error: 529 overloaded"},
			wantText: "API Error: 529 overloaded", wantUsage: Usage{InputTokens: 5}, wantCost: ptr(0.001),
		},
		{
			name:      "error subtype with exit 0 is a failure",
			body:      heredoc(`{"type":"result","subtype":"error_max_turns","is_error":false,"session_id":"s1","num_turns":12,"usage":{"input_tokens":50,"output_tokens":7}}`),
			wantErr:   []string{`driver claude-code: run failed (subtype "error_max_turns", exit status 0): no message`},
			wantUsage: Usage{InputTokens: 50, OutputTokens: 7},
		},
		{
			name:      "exit 1 with an error result is read",
			body:      heredoc(`{"type":"result","subtype":"error_during_execution","is_error":true,"result":"","errors":["tool crashed"],"session_id":"s1","total_cost_usd":0.02,"usage":{"input_tokens":100,"output_tokens":10}}`) + "\nexit 1",
			wantErr:   []string{"exit status 1", "tool crashed"},
			wantUsage: Usage{InputTokens: 100, OutputTokens: 10}, wantCost: ptr(0.02),
		},
		{
			name:     "exit 1 with a success result is read and trusted",
			body:     heredoc(`{"type":"result","subtype":"success","is_error":false,"result":"{\"ok\":true}","session_id":"s1","usage":{"input_tokens":1,"output_tokens":2}}`) + "\nexit 1",
			wantText: `{"ok":true}`, wantUsage: Usage{InputTokens: 1, OutputTokens: 2},
		},
		{
			name:    "exit 1 without a result object",
			body:    "echo 'Error: not logged in' >&2; exit 1",
			wantErr: []string{"exited with status 1", "not logged in"},
		},
		{
			name:    "exit 0 with garbage",
			body:    "echo 'hello'",
			wantErr: []string{"not a result object"},
		},
		{
			name:     "verbose array output",
			body:     heredoc(`[{"type":"system","subtype":"init","session_id":"s1"},{"type":"assistant","message":{}},{"type":"result","subtype":"success","is_error":false,"result":"final","session_id":"s1","usage":{"input_tokens":1,"output_tokens":1}}]`),
			wantText: "final", wantUsage: Usage{InputTokens: 1, OutputTokens: 1},
		},
		{
			// As claude 2.1 reports a persistent HTTP 500 after its retries.
			name: "API error names the status",
			body: heredoc(`{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"api_error_type":"api_error",`+
				`"result":"API Error: 500 fake boom. This is a server-side issue.","session_id":"s1","usage":{"input_tokens":0,"output_tokens":0}}`) + "\nexit 1",
			wantErr:  []string{"driver claude-code: the API failed with HTTP 500, exit status 1: API Error: 500 fake boom."},
			wantText: "API Error: 500 fake boom. This is a server-side issue.",
		},
		{
			name: "stream-json lines",
			body: heredoc(`{"type":"system","subtype":"init","session_id":"s1"}
{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"error_status":500,"error":"server_error","session_id":"s1"}
{"type":"assistant","message":{"content":[{"type":"text","text":"final"}]},"session_id":"s1"}
{"type":"result","subtype":"success","is_error":false,"result":"final","session_id":"s1","usage":{"input_tokens":3,"output_tokens":4}}`),
			wantText: "final", wantUsage: Usage{InputTokens: 3, OutputTokens: 4},
		},
		{
			name:     "no reported cost uses the price table",
			body:     heredoc(`{"type":"result","subtype":"success","is_error":false,"result":"x","session_id":"s1","usage":{"input_tokens":1000000,"output_tokens":0}}`),
			prices:   map[string]Price{"sonnet": {InputPerMTok: 3}},
			wantText: "x", wantUsage: Usage{InputTokens: 1000000}, wantCost: ptr(3.0),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeCLI(t, "claude", tt.body)
			d := newDriver(t, Config{Type: TypeClaudeCode, Model: "sonnet", Prices: tt.prices})
			resp, err := d.Call(context.Background(), Request{Prompt: "p"})
			if len(tt.wantErr) == 0 && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if len(tt.wantErr) > 0 && err == nil {
				t.Fatal("Call succeeded, want a failure")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if resp.Text != tt.wantText || resp.Usage != tt.wantUsage || !cmp.Equal(resp.CostUSD, tt.wantCost) {
				t.Errorf("Response = {Text %q, Usage %+v, Cost %v}, want {%q, %+v, %v}",
					resp.Text, resp.Usage, resp.CostUSD, tt.wantText, tt.wantUsage, tt.wantCost)
			}
		})
	}
}

func TestClaudeHangIsKilled(t *testing.T) {
	fakeCLI(t, "claude", "exec sleep 300")
	d := newDriver(t, Config{Type: TypeClaudeCode, Timeout: time.Hour})
	start := time.Now()
	_, err := d.Call(context.Background(), Request{Prompt: "p", Timeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("error = %v, want a timeout", err)
	}
	if elapsed := time.Since(start); elapsed > 4*time.Second {
		t.Errorf("Call returned after %s", elapsed)
	}
}

// Regression: a call killed at its timeout while claude retried a failing
// API said only "timed out".
func TestClaudeTimeoutSaysWhy(t *testing.T) {
	fakeCLI(t, "claude", heredoc(`{"type":"system","subtype":"init","session_id":"s9"}
{"type":"system","subtype":"api_retry","attempt":3,"max_retries":10,"retry_delay_ms":2165,"error_status":500,"error":"server_error","session_id":"s9"}`)+"\nexec sleep 300")
	d := newDriver(t, Config{Type: TypeClaudeCode})
	resp, err := d.Call(context.Background(), Request{Prompt: "p", Timeout: 2 * time.Second})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("error = %v, want a timeout", err)
	}
	if want := "process group killed); claude was retrying the API: attempt 3 of 10 after HTTP 500 (server_error)"; !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want it to contain %q", err, want)
	}
	if resp.SessionID != "s9" {
		t.Errorf("SessionID = %q, want s9", resp.SessionID)
	}
}

// A watched call hears of claude's API retries while claude still runs.
func TestClaudeReportsProgress(t *testing.T) {
	fakeCLI(t, "claude", heredoc(`{"type":"system","subtype":"init","session_id":"s7"}
{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":500,"error_status":529,"error":"overloaded","session_id":"s7"}
{"type":"result","subtype":"success","is_error":false,"result":"x","session_id":"s7","usage":{"input_tokens":1,"output_tokens":1}}`))
	d := newDriver(t, Config{Type: TypeClaudeCode})
	var got []Progress
	req := Request{Prompt: "p", Progress: func(p Progress) { got = append(got, p) }}
	if _, err := d.Call(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	want := []Progress{
		{Kind: ProgressSession, SessionID: "s7"},
		{Kind: ProgressRetrying, Attempt: 1, Max: 10, Status: 529, Wait: 500 * time.Millisecond, Message: "overloaded"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if s := got[1].String(); s != "retrying: attempt 1 of 10 after HTTP 529, in 500ms (overloaded)" {
		t.Errorf("String() = %q", s)
	}
}

func TestClaudeMaxRetriesOption(t *testing.T) {
	f := fakeCLI(t, "claude", heredoc(`{"type":"result","subtype":"success","is_error":false,"result":"x","session_id":"s"}`))
	t.Setenv("CLAUDE_CODE_MAX_RETRIES", "10")
	d := newDriver(t, Config{Type: TypeClaudeCode, Options: map[string]any{"max_retries": 2}})
	if _, err := d.Call(context.Background(), Request{Prompt: "p"}); err != nil {
		t.Fatal(err)
	}
	if got := f.env(t, "CLAUDE_CODE_MAX_RETRIES")["CLAUDE_CODE_MAX_RETRIES"]; got != "2" {
		t.Errorf("CLAUDE_CODE_MAX_RETRIES = %q, want 2", got)
	}
}

func TestClaudeWrapsNonObjectSchema(t *testing.T) {
	f := fakeCLI(t, "claude", heredoc(`{"type":"result","subtype":"success","is_error":false,"result":"","session_id":"s","structured_output":{"value":["a","b"]}}`))
	d := newDriver(t, Config{Type: TypeClaudeCode})
	resp, err := d.Call(context.Background(), Request{Prompt: "p", Schema: map[string]any{"type": "array", "items": map[string]any{"type": "string"}}})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Structured) != `["a","b"]` {
		t.Errorf("Structured = %s, want the unwrapped list", resp.Structured)
	}
	if !hasSeq(f.argv(t), "--json-schema", `{"properties":{"value":{"items":{"type":"string"},"type":"array"}},"required":["value"],"type":"object"}`) {
		t.Errorf("argv = %q, want a wrapped schema", f.argv(t))
	}
}
