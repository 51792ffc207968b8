package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func newDriver(t *testing.T, cfg Config) Driver {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return d
}

// baseRequest is a request with every contract field set.
func baseRequest(t *testing.T) Request {
	return Request{
		Step: "plan", Agent: "gsd-planner", Prompt: "Plan phase 6.3.\nLine two.",
		Attempt: 2, RunID: "run-42", ItemKey: "task-7", Workdir: t.TempDir(),
	}
}

func TestCommandContract(t *testing.T) {
	f := fakeCLI(t, "fake-agent", heredoc("the answer"))
	d := newDriver(t, Config{
		Type:    TypeCommand,
		Command: []string{"fake-agent", "--model", "{model}", "{session_id}", "--resume={session_id}", "{step}/{agent}", "{workdir}", "{literal}"},
		Model:   "m1",
		Env:     map[string]string{"FAKE_EXTRA": "yes"},
	})
	req := baseRequest(t)
	resp, err := d.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "the answer\n" || string(resp.Raw) != "the answer\n" {
		t.Errorf("Text = %q, Raw = %q", resp.Text, resp.Raw)
	}
	if got := f.read(t, "stdin"); got != req.Prompt {
		t.Errorf("stdin = %q, want %q", got, req.Prompt)
	}
	wantArgv := []string{"--model", "m1", "--resume=", "plan/gsd-planner", req.Workdir, "{literal}"}
	if diff := cmp.Diff(wantArgv, f.argv(t)); diff != "" {
		t.Errorf("argv (-want +got):\n%s", diff)
	}
	wantEnv := map[string]string{
		"APL_STEP": "plan", "APL_AGENT": "gsd-planner", "APL_ATTEMPT": "2", "APL_RUN_ID": "run-42",
		"APL_ITEM_KEY": "task-7", "APL_WORKDIR": req.Workdir, "FAKE_EXTRA": "yes",
	}
	gotEnv := f.env(t, "APL_STEP", "APL_AGENT", "APL_ATTEMPT", "APL_RUN_ID", "APL_ITEM_KEY", "APL_WORKDIR", "FAKE_EXTRA")
	if diff := cmp.Diff(wantEnv, gotEnv); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if got := strings.TrimSpace(f.read(t, "pwd")); got != req.Workdir {
		t.Errorf("working directory = %q, want %q", got, req.Workdir)
	}
	if resp.CostUSD != nil {
		t.Errorf("CostUSD = %v, want nil: no price and none reported", *resp.CostUSD)
	}
}

func TestCommandInputModes(t *testing.T) {
	tests := []struct {
		name      string
		cfg       Config
		req       Request
		wantArgv  func(req Request) []string
		wantStdin string
		check     func(t *testing.T, f fake)
	}{
		{
			name: "file",
			cfg:  Config{Command: []string{"fake-agent", "{prompt_file}"}, Input: "file"},
			req:  Request{Prompt: "from a file"},
			check: func(t *testing.T, f fake) {
				if got := f.read(t, "prompt_copy"); got != "from a file" {
					t.Errorf("prompt file held %q", got)
				}
			},
		},
		{
			name:     "arg appended",
			cfg:      Config{Command: []string{"fake-agent", "-q"}, Input: "arg"},
			req:      Request{Prompt: "as an argument"},
			wantArgv: func(Request) []string { return []string{"-q", "as an argument"} },
		},
		{
			name:     "arg placeholder",
			cfg:      Config{Command: []string{"fake-agent", "--prompt={prompt}", "-q"}, Input: "arg"},
			req:      Request{Prompt: "inline"},
			wantArgv: func(Request) []string { return []string{"--prompt=inline", "-q"} },
		},
		{
			name:      "system folded before the prompt",
			cfg:       Config{Command: []string{"fake-agent"}},
			req:       Request{Prompt: "user part", System: "system part"},
			wantStdin: "system part\n\nuser part",
		},
		{
			name:      "system placeholder",
			cfg:       Config{Command: []string{"fake-agent", "--system", "{system}"}},
			req:       Request{Prompt: "user part", System: "system part"},
			wantArgv:  func(Request) []string { return []string{"--system", "system part"} },
			wantStdin: "user part",
		},
		{
			name: "schema file",
			cfg:  Config{Command: []string{"fake-agent", "--schema", "{schema_file}"}},
			req:  Request{Prompt: "p", Schema: map[string]any{"type": "object"}},
			check: func(t *testing.T, f fake) {
				if got := f.read(t, "schema_copy"); got != `{"type":"object"}` {
					t.Errorf("schema file held %q", got)
				}
			},
		},
		{
			name:      "no schema drops a lone schema placeholder",
			cfg:       Config{Command: []string{"fake-agent", "{schema_file}"}},
			req:       Request{Prompt: "p"},
			wantArgv:  func(Request) []string { return nil },
			wantStdin: "p",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Copy any file arguments out: they are removed after the call.
			f := fakeCLI(t, "fake-agent", `
for a in "$@"; do
  case "$a" in
    *prompt.md) cp "$a" "$FAKE_OUT/prompt_copy" ;;
    *schema.json) cp "$a" "$FAKE_OUT/schema_copy" ;;
  esac
done
echo ok`)
			tt.cfg.Type = TypeCommand
			d := newDriver(t, tt.cfg)
			if _, err := d.Call(context.Background(), tt.req); err != nil {
				t.Fatal(err)
			}
			if tt.wantArgv != nil {
				if diff := cmp.Diff(tt.wantArgv(tt.req), f.argv(t)); diff != "" {
					t.Errorf("argv (-want +got):\n%s", diff)
				}
			}
			if got := f.read(t, "stdin"); tt.cfg.Input != "" && got != "" {
				t.Errorf("stdin = %q, want empty for input %s", got, tt.cfg.Input)
			} else if tt.wantStdin != "" && got != tt.wantStdin {
				t.Errorf("stdin = %q, want %q", got, tt.wantStdin)
			}
			if tt.check != nil {
				tt.check(t, f)
			}
		})
	}
}

func TestCommandFailures(t *testing.T) {
	t.Setenv("FAKE_SERVICE_TOKEN", "tok-very-secret-123")
	tests := []struct {
		name    string
		body    string
		cfg     Config
		want    []string
		notWant []string
	}{
		{
			name: "non-zero exit names status and stderr",
			body: "echo partial; echo 'model overloaded' >&2; exit 3",
			want: []string{"exited with status 3", "stderr: model overloaded"},
		},
		{
			name: "long stderr is cut",
			body: "i=0; while [ $i -lt 200 ]; do printf 'error line %03d ' $i >&2; i=$((i+1)); done; exit 1",
			want: []string{"error line 000", "…"}, notWant: []string{"error line 199"},
		},
		{
			name: "stdout when stderr is empty",
			body: "echo 'only stdout'; exit 2",
			want: []string{"status 2", "stdout: only stdout"},
		},
		{
			name:    "secrets are redacted from stderr",
			body:    "echo \"auth failed for $FAKE_SERVICE_TOKEN\" >&2; exit 1",
			want:    []string{"auth failed for [REDACTED]"},
			notWant: []string{"tok-very-secret-123"},
		},
		{
			name: "json error field",
			body: heredoc(`{"text": "", "error": "rate limited"}`),
			cfg:  Config{Output: "json"},
			want: []string{"agent reported an error: rate limited"},
		},
		{
			name: "json output that is not JSON",
			body: "echo nope",
			cfg:  Config{Output: "json"},
			want: []string{"output is not json: nope"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeCLI(t, "fake-agent", tt.body)
			tt.cfg.Type, tt.cfg.Command = TypeCommand, []string{"fake-agent"}
			_, err := newDriver(t, tt.cfg).Call(context.Background(), Request{Prompt: "p"})
			if err == nil {
				t.Fatal("Call succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(err.Error(), w) {
					t.Errorf("error %q contains %q", err, w)
				}
			}
		})
	}
}

func TestCommandOutputFields(t *testing.T) {
	tests := []struct {
		name   string
		output string
		fields map[string]string
		body   string
		want   Response
	}{
		{
			name:   "json with mapped fields",
			output: "json",
			fields: map[string]string{"text": "result.content", "session_id": "meta.sid", "input_tokens": "meta.tok.in", "output_tokens": "meta.tok.out", "cost_usd": "meta.cost"},
			body:   heredoc(`{"result": {"content": "{\"ok\": true}"}, "meta": {"sid": "s-1", "tok": {"in": 10, "out": 5}, "cost": 0.25}}`),
			want:   Response{Text: `{"ok": true}`, SessionID: "s-1", Usage: Usage{InputTokens: 10, OutputTokens: 5}, CostUSD: ptr(0.25)},
		},
		{
			name:   "json default field names and structured",
			output: "json",
			body:   heredoc(`{"text": "hi", "structured": {"a": 1}, "usage": {"input_tokens": 3, "output_tokens": 4}}`),
			want:   Response{Text: "hi", Structured: []byte(`{"a":1}`), Usage: Usage{InputTokens: 3, OutputTokens: 4}},
		},
		{
			name:   "jsonl last line with the field wins",
			output: "jsonl",
			fields: map[string]string{"text": "msg", "session_id": "sid"},
			body:   heredoc("{\"sid\": \"s-1\", \"msg\": \"first\"}\nnot json progress\n{\"msg\": \"second\"}\n{\"other\": 1}"),
			want:   Response{Text: "second", SessionID: "s-1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeCLI(t, "fake-agent", tt.body)
			d := newDriver(t, Config{Type: TypeCommand, Command: []string{"fake-agent"}, Output: tt.output, Fields: tt.fields})
			got, err := d.Call(context.Background(), Request{Prompt: "p"})
			if err != nil {
				t.Fatal(err)
			}
			got.Raw = nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandTimeoutKillsProcessGroup(t *testing.T) {
	f := fakeCLI(t, "fake-agent", `sleep 300 & echo $! > "$FAKE_OUT/child"; echo started; wait`)
	// The timeout leaves a loaded machine time to start the script and
	// its child before it fires.
	d := newDriver(t, Config{Type: TypeCommand, Command: []string{"fake-agent"}, Timeout: 1500 * time.Millisecond})
	start := time.Now()
	resp, err := d.Call(context.Background(), Request{Prompt: "p"})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "timed out after 1.5s") {
		t.Fatalf("error = %v, want a timeout", err)
	}
	// Generous: without the group kill, Wait blocks on the child's pipe
	// until WaitDelay (5s) more and the child lives on for 300s.
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Call returned after %s", elapsed)
	}
	if string(resp.Raw) != "started\n" {
		t.Errorf("partial Raw = %q", resp.Raw)
	}
	child := strings.TrimSpace(f.read(t, "child"))
	deadline := time.Now().Add(5 * time.Second)
	for pidAlive(child) {
		if time.Now().After(deadline) {
			t.Fatalf("child %s of the agent outlived the timeout", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCommandCancelIsNotTimeout(t *testing.T) {
	f := fakeCLI(t, "fake-agent", `touch "$FAKE_OUT/running"; exec sleep 300`)
	d := newDriver(t, Config{Type: TypeCommand, Command: []string{"fake-agent"}})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the agent runs, not after a guessed delay.
		for {
			if _, err := os.Stat(filepath.Join(f.dir, "running")); err == nil {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	_, err := d.Call(ctx, Request{Prompt: "p"})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
}

func TestCommandPrices(t *testing.T) {
	fakeCLI(t, "fake-agent", heredoc(`{"text": "x", "usage": {"input_tokens": 2000000, "output_tokens": 1000000}}`))
	d := newDriver(t, Config{
		Type: TypeCommand, Command: []string{"fake-agent"}, Output: "json", Model: "m1",
		Prices: map[string]Price{"m1": {InputPerMTok: 3, OutputPerMTok: 15}},
	})
	resp, err := d.Call(context.Background(), Request{Prompt: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.CostUSD == nil || *resp.CostUSD != 21 {
		t.Errorf("CostUSD = %v, want 21", resp.CostUSD)
	}
	resp, err = d.Call(context.Background(), Request{Prompt: "p", Model: "unpriced"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.CostUSD != nil {
		t.Errorf("CostUSD = %v for an unpriced model, want nil", *resp.CostUSD)
	}
}

// fakeRunner is a Runner that records the process instead of running it.
type fakeRunner struct {
	got Process
	res ProcessResult
}

func (r *fakeRunner) Run(ctx context.Context, p Process) (ProcessResult, error) {
	r.got = p
	return r.res, nil
}

func TestCommandRunnerSeam(t *testing.T) {
	r := &fakeRunner{res: ProcessResult{Stdout: []byte("from the runner")}}
	d := newDriver(t, Config{Type: TypeCommand, Command: []string{"agent", "{step}"}, Runner: r})
	resp, err := d.Call(context.Background(), Request{Step: "verify", Prompt: "p", Workdir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "from the runner" || r.got.Dir != "/w" || !cmp.Equal(r.got.Argv, []string{"agent", "verify"}) {
		t.Errorf("resp %q, process %+v", resp.Text, r.got)
	}
}

func ptr[T any](v T) *T { return &v }

// With Request.RawFile set, the command driver streams stdout into the
// file and returns no copy of it in Raw: a large answer is then in memory
// once, as Text. A Runner that ignores Process.Stdout still fills the file.
func TestCommandStreamsRawFile(t *testing.T) {
	fakeCLI(t, "fake-agent", heredoc("the answer"))
	for _, tt := range []struct {
		name   string
		cfg    Config
		text   string
		isText bool
	}{
		{"text", Config{Type: TypeCommand, Command: []string{"fake-agent"}}, "the answer\n", true},
		{"runner ignoring Stdout", Config{Type: TypeCommand, Command: []string{"agent"},
			Runner: &fakeRunner{res: ProcessResult{Stdout: []byte("the answer\n")}}}, "the answer\n", true},
		{"json with a text field", Config{Type: TypeCommand, Command: []string{"sh", "-c", `echo '{"result": "fine"}'`},
			Output: "json", Fields: map[string]string{"text": "result"}}, "fine", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := baseRequest(t)
			req.RawFile = filepath.Join(t.TempDir(), "raw")
			resp, err := newDriver(t, tt.cfg).Call(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Raw != nil || resp.RawFile != req.RawFile || resp.RawIsText != tt.isText {
				t.Errorf("Raw = %q, RawFile = %q, RawIsText = %v; want the answer in %q only", resp.Raw, resp.RawFile, resp.RawIsText, req.RawFile)
			}
			if resp.Text != tt.text {
				t.Errorf("Text = %q, want %q", resp.Text, tt.text)
			}
			b, err := os.ReadFile(req.RawFile)
			if err != nil {
				t.Fatal(err)
			}
			if tt.isText && string(b) != tt.text || !tt.isText && !strings.Contains(string(b), `"result"`) {
				t.Errorf("raw file holds %q", b)
			}
		})
	}
}

// Past the output cap, a streamed stdout fails the call as a kept one does.
func TestCommandStreamedOutputCap(t *testing.T) {
	d := newDriver(t, Config{Type: TypeCommand, Command: []string{"sh", "-c", "head -c 5000 /dev/zero"},
		Runner: ExecRunner{MaxOutput: 1000}})
	req := baseRequest(t)
	req.RawFile = filepath.Join(t.TempDir(), "raw")
	_, err := d.Call(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "output exceeded 1000 bytes") {
		t.Fatalf("err = %v, want the output cap", err)
	}
	if fi, err := os.Stat(req.RawFile); err != nil || fi.Size() != 1000 {
		t.Errorf("raw file: %v, %v; want the first 1000 bytes", fi, err)
	}
}

// A raw file that cannot be made does not fail the call: stdout comes
// back in Raw, for the caller to keep.
func TestCommandRawFileUnwritable(t *testing.T) {
	d := newDriver(t, Config{Type: TypeCommand, Command: []string{"echo", "hi"}})
	req := baseRequest(t)
	req.RawFile = filepath.Join(t.TempDir(), "no-such-dir", "raw")
	resp, err := d.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.RawFile != "" || string(resp.Raw) != "hi\n" || resp.Text != "hi\n" {
		t.Errorf("RawFile %q, Raw %q, Text %q; want the answer in Raw", resp.RawFile, resp.Raw, resp.Text)
	}
}
