package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zclconf/go-cty/cty"
)

// codexRun is a `codex exec --json` event stream, as codex prints it.
const codexRun = `{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Planning the change**"}}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"go.mod\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"draft"}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"{\"verdict\":\"PASS\"}"}}
{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}`

func TestCodex(t *testing.T) {
	f := fakeCLI(t, "codex", `
for a in "$@"; do case "$a" in *schema.json) cp "$a" "$FAKE_OUT/schema_copy" ;; esac; done
`+heredoc(codexRun))
	d := newDriver(t, Config{
		Type: TypeCodex, Model: "gpt-5-codex",
		Options: map[string]any{"sandbox": "workspace-write", "skip_git_repo_check": true},
	})
	req := baseRequest(t)
	req.System = "sys"
	req.SessionID = "thread-1"
	req.Schema = map[string]any{"type": "object"}
	resp, err := d.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	argv := f.argv(t)
	if len(argv) == 0 {
		t.Fatal("no argv")
	}
	schemaPath := ""
	for i, a := range argv {
		if a == "--output-schema" && i+1 < len(argv) {
			schemaPath = argv[i+1]
		}
	}
	wantArgv := []string{
		"exec", "--json", "--model", "gpt-5-codex", "--sandbox", "workspace-write", "--skip-git-repo-check",
		"--output-schema", schemaPath, "resume", "thread-1", "sys\n\n" + req.Prompt,
	}
	if diff := cmp.Diff(wantArgv, argv); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	if got := f.read(t, "stdin"); got != "" {
		t.Errorf("stdin = %q, want empty", got)
	}
	if got := f.read(t, "schema_copy"); got != `{"additionalProperties":false,"properties":{},"required":[],"type":"object"}` {
		t.Errorf("schema file = %q", got)
	}
	if env := f.env(t, "APL_RUN_ID"); env["APL_RUN_ID"] != "run-42" {
		t.Errorf("env = %v", env)
	}
	resp.Raw = nil
	want := Response{
		Text:      `{"verdict":"PASS"}`,
		SessionID: "0199a213-81c0-7800-8aa1-bbab2a035a53",
		Usage:     Usage{InputTokens: 315, CacheReadTokens: 24448, OutputTokens: 122},
	}
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("Response (-want +got):\n%s", diff)
	}
}

func TestCodexLongPromptGoesOnStdin(t *testing.T) {
	f := fakeCLI(t, "codex", heredoc(`{"type":"item.completed","item":{"type":"agent_message","text":"ok"}}`))
	d := newDriver(t, Config{Type: TypeCodex})
	long := strings.Repeat("x", maxArgPrompt+1)
	if _, err := d.Call(context.Background(), Request{Prompt: long}); err != nil {
		t.Fatal(err)
	}
	if argv := f.argv(t); argv[len(argv)-1] != "-" {
		t.Errorf("last argument = %.20q, want -", argv[len(argv)-1])
	}
	if got := f.read(t, "stdin"); got != long {
		t.Errorf("stdin has %d bytes, want %d", len(got), len(long))
	}
}

func TestCodexFailures(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{
			name: "turn.failed",
			body: heredoc(`{"type":"thread.started","thread_id":"t"}
{"type":"turn.failed","error":{"message":"stream disconnected before completion"}}`),
			want: "stream disconnected before completion",
		},
		{
			name: "error event",
			body: heredoc(`{"type":"error","message":"unexpected status 401 Unauthorized"}`),
			want: "driver codex: no answer: unexpected status 401 Unauthorized",
		},
		{
			// As codex 0.169 prints a persistent 500: the message comes as
			// an error event and again in turn.failed, and is said once.
			name: "reconnects then turn.failed",
			body: heredoc(`{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 1/2 (high demand)"}
{"type":"error","message":"Reconnecting... 2/2 (high demand)"}
{"type":"error","message":"high demand"}
{"type":"turn.failed","error":{"message":"high demand"}}`) + "\nexit 1",
			want: "driver codex: the turn failed after 2 reconnect attempts: high demand",
		},
		{
			name: "non-zero exit",
			body: "echo 'Not inside a trusted directory' >&2; exit 1",
			want: "exited with status 1: stderr: Not inside a trusted directory",
		},
		{
			name: "no events",
			body: "echo hello",
			want: "no JSON events",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeCLI(t, "codex", tt.body)
			_, err := newDriver(t, Config{Type: TypeCodex}).Call(context.Background(), Request{Prompt: "p"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// Regression: codex prints an error event for each reconnect and then
// succeeds; apl took every error event for a failure.
func TestCodexReconnectThenSuccessIsNoFailure(t *testing.T) {
	fakeCLI(t, "codex", heredoc(`{"type":"thread.started","thread_id":"t1"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `+"`gpt-5`"+` not found."}}
{"type":"turn.started"}
{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion)"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"hello"}}
{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":30,"output_tokens":20}}`))
	var heard []Progress
	req := Request{Prompt: "p", Progress: func(p Progress) { heard = append(heard, p) }}
	resp, err := newDriver(t, Config{Type: TypeCodex}).Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := []Progress{{Kind: ProgressSession, SessionID: "t1"},
		{Kind: ProgressRetrying, Attempt: 1, Max: 5, Message: "stream disconnected before completion"}}
	if diff := cmp.Diff(want, heard); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if resp.Text != "hello" || resp.SessionID != "t1" || resp.Usage != (Usage{InputTokens: 70, CacheReadTokens: 30, OutputTokens: 20}) {
		t.Errorf("Response = %+v", resp)
	}
}

// Regression: on `exec resume` codex reports the thread's running total,
// and apl counted the earlier turns again.
func TestCodexResumeCountsOnlyThisTurn(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "sessions", "2026", "01", "02")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log := `{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":30,"output_tokens":20}}}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "rollout-2026-01-02T10-00-00-t1.jsonl"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	fakeCLI(t, "codex", heredoc(`{"type":"thread.started","thread_id":"t1"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"again"}}
{"type":"turn.completed","usage":{"input_tokens":250,"cached_input_tokens":80,"output_tokens":45}}`))
	d := newDriver(t, Config{Type: TypeCodex, Env: map[string]string{"CODEX_HOME": home}})
	resp, err := d.Call(context.Background(), Request{Prompt: "p", SessionID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Usage{InputTokens: 100, CacheReadTokens: 50, OutputTokens: 25}); resp.Usage != want {
		t.Errorf("Usage = %+v, want %+v", resp.Usage, want)
	}

	// Without a session log, the driver's own memory of the thread serves.
	os.RemoveAll(filepath.Join(home, "sessions"))
	resp, err = d.Call(context.Background(), Request{Prompt: "p", SessionID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage != (Usage{}) {
		t.Errorf("Usage of a turn with the same running total = %+v, want zero", resp.Usage)
	}
}

// Regression: codex sends --output-schema in strict mode; an open object or
// an optional property made OpenAI refuse the request.
func TestCodexSchemaIsStrict(t *testing.T) {
	f := fakeCLI(t, "codex", `
for a in "$@"; do case "$a" in *schema.json) cp "$a" "$FAKE_OUT/schema_copy" ;; esac; done
`+heredoc(`{"type":"item.completed","item":{"type":"agent_message","text":"{\"verdict\":\"PASS\",\"notes\":null}"}}`))
	req := Request{Prompt: "p", Schema: Schema(cty.ObjectWithOptionalAttrs(map[string]cty.Type{
		"verdict": cty.String, "notes": cty.String,
	}, []string{"notes"}))}
	resp, err := newDriver(t, Config{Type: TypeCodex}).Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{"notes":{"type":["string","null"]},"verdict":{"type":"string"}},"required":["notes","verdict"],"type":"object"}`
	if got := f.read(t, "schema_copy"); got != want {
		t.Errorf("schema file =\n%s\nwant\n%s", got, want)
	}
	raw, err := ExtractFromResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	typ := cty.ObjectWithOptionalAttrs(map[string]cty.Type{"verdict": cty.String, "notes": cty.String}, []string{"notes"})
	if _, err := Decode(raw, typ); err != nil {
		t.Errorf("Decode: %v", err)
	}

	// A map cannot be said in strict mode: no --output-schema at all.
	f = fakeCLI(t, "codex", heredoc(`{"type":"item.completed","item":{"type":"agent_message","text":"{}"}}`))
	req.Schema = Schema(cty.Map(cty.String))
	if _, err := newDriver(t, Config{Type: TypeCodex}).Call(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if argv := f.argv(t); slices.Contains(argv, "--output-schema") {
		t.Errorf("argv = %q, want no --output-schema", argv)
	}
}

func TestGemini(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		want    Response
		wantErr string
	}{
		{
			name: "per-model stats",
			body: heredoc(`{"response":"{\"ok\": true}","stats":{"models":{"gemini-2.5-pro":{"api":{"totalRequests":2},"tokens":{"prompt":24939,"candidates":20,"total":25113,"cached":21263,"thoughts":154,"tool":0}},"gemini-2.5-flash":{"tokens":{"prompt":100,"candidates":10,"cached":0,"thoughts":0}}},"tools":{"totalCalls":1}}}`),
			want: Response{Text: `{"ok": true}`, Usage: Usage{InputTokens: 3776, CacheReadTokens: 21263, OutputTokens: 184}},
		},
		{
			name: "flat stats",
			body: heredoc(`{"response":"hi","stats":{"inputTokens":12,"outputTokens":8,"totalTokens":20}}`),
			want: Response{Text: "hi", Usage: Usage{InputTokens: 12, OutputTokens: 8}},
		},
		{
			name:    "error object",
			body:    heredoc(`{"response":null,"error":{"type":"ApiError","message":"quota exceeded","code":429}}`) + "\nexit 1",
			wantErr: "driver gemini: the API failed with HTTP 429: quota exceeded",
		},
		{
			// As gemini 0.61 fails on an HTTP 400: nothing on stdout, the
			// error object after a stack trace on stderr, exit 400 % 256.
			name: "error on stderr after stack traces",
			body: `cat >&2 <<'EOF'
Error when talking to Gemini API Full report available at: /tmp/gemini-client-error.json _ApiError: {"error":{"code":400,"message":"fake bad request","status":"INVALID_ARGUMENT"}}
    at throwErrorIfNotOK (file:///x/chunk.js:267833:24) {
  status: 400
}
{
  "session_id": "3a864bbe",
  "error": {
    "type": "Error",
    "message": "{\"error\":{\"code\":400,\"message\":\"fake bad request\",\"status\":\"INVALID_ARGUMENT\"}}",
    "code": 400
  }
}
EOF
exit 144`,
			wantErr: "driver gemini: the API failed with HTTP 400: fake bad request",
		},
		{
			name:    "untrusted folder",
			body:    `echo '{"session_id":"s","error":{"type":"FatalUntrustedWorkspaceError","message":"Gemini CLI is not running in a trusted directory.","code":55}}' >&2; exit 55`,
			wantErr: "driver gemini: exited with status 55: Gemini CLI is not running in a trusted directory.",
		},
		{
			name:    "null error is not a failure but no response is",
			body:    heredoc(`{"error":null,"stats":{}}`),
			wantErr: "output has no response",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakeCLI(t, "gemini", tt.body)
			d := newDriver(t, Config{Type: TypeGemini, Model: "gemini-2.5-pro", Options: map[string]any{"approval_mode": "yolo"}})
			resp, err := d.Call(context.Background(), Request{Prompt: "the prompt", Step: "judge"})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Raw = nil
			if diff := cmp.Diff(tt.want, resp); diff != "" {
				t.Errorf("Response (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"--output-format", "json", "--model", "gemini-2.5-pro", "--approval-mode", "yolo"}, f.argv(t)); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
			if got := f.read(t, "stdin"); got != "the prompt" {
				t.Errorf("stdin = %q", got)
			}
			if env := f.env(t, "APL_STEP", "GEMINI_CLI_TRUST_WORKSPACE"); env["APL_STEP"] != "judge" || env["GEMINI_CLI_TRUST_WORKSPACE"] != "true" {
				t.Errorf("env = %v", env)
			}
		})
	}
}

func TestGeminiResume(t *testing.T) {
	f := fakeCLI(t, "gemini", heredoc(`{"session_id":"3a864bbe","response":"again","stats":{}}`))
	resp, err := newDriver(t, Config{Type: TypeGemini}).Call(context.Background(), Request{Prompt: "p", SessionID: "3a864bbe"})
	if err != nil {
		t.Fatal(err)
	}
	if !hasSeq(f.argv(t), "--resume", "3a864bbe") || resp.SessionID != "3a864bbe" {
		t.Errorf("argv = %q, SessionID = %q", f.argv(t), resp.SessionID)
	}
}
