package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/builtins/agent/fakeserver"
	"github.com/zclconf/go-cty/cty"
)

// cliSkip, when set, is why the CLI drivers cannot run here.
var cliSkip string

func TestMain(m *testing.M) {
	if os.Getenv("APL_CONFORMANCE") != "1" && os.Getenv("APL_RECORD_EXAMPLES") != "1" {
		os.Exit(m.Run()) // every test skips
	}
	dir, err := cacheDir()
	if err != nil {
		fmt.Println("FAIL conformance:", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	bin, err := install(ctx, dir)
	cancel()
	switch {
	case errors.Is(err, errNoNPM):
		// Said on stdout, which go test shows even without -v, so that a
		// skip is never silent.
		cliSkip = err.Error()
		fmt.Printf("SKIP conformance of the CLI drivers (claude-code, codex, gemini): %v\n", err)
	case err != nil:
		fmt.Println("FAIL conformance: installing the pinned CLIs:", err)
		os.Exit(1)
	default:
		os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	os.Exit(m.Run())
}

// backend is one driver under test, set up against a fake server.
type backend struct {
	typ   string
	model string
	cli   bool
	// config builds the driver's Config for a server, with home as the
	// CLI's HOME.
	config func(t *testing.T, srv *fakeserver.Server, home string) agent.Config
	// failWords must appear in the error of a call against a server that
	// answers 500 for good.
	failWords string
	// cutFails, when set, says the CLI does not ride out an answer cut
	// mid-stream, and holds the words its error must have.
	cutFails string
	// reportsRetries says the driver tells a call's Progress of the
	// backend's retries as they happen.
	reportsRetries bool
}

var backends = []backend{
	{
		typ: agent.TypeClaudeCode, model: "claude-sonnet-4-5", cli: true, reportsRetries: true,
		failWords: "the API failed with HTTP 500",
		config: func(t *testing.T, srv *fakeserver.Server, home string) agent.Config {
			return agent.Config{
				Type: agent.TypeClaudeCode,
				Env: cliEnv(home, map[string]string{
					"ANTHROPIC_BASE_URL":                       srv.URL,
					"ANTHROPIC_API_KEY":                        "sk-ant-conformance-0000",
					"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
					"DISABLE_AUTOUPDATER":                      "1",
					"DISABLE_TELEMETRY":                        "1",
				}),
				Options: map[string]any{"max_retries": 2},
			}
		},
	},
	{
		typ: agent.TypeCodex, model: "gpt-5", cli: true,
		// codex words every 5xx as "high demand" and keeps the status.
		failWords: "the turn failed after 2 reconnect attempts",
		config: func(t *testing.T, srv *fakeserver.Server, home string) agent.Config {
			codexHome := filepath.Join(home, ".codex")
			writeFile(t, filepath.Join(codexHome, "config.toml"), `model_provider = "fake"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fake]
name = "fake"
base_url = "`+srv.URL+`/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 2
stream_max_retries = 2
stream_idle_timeout_ms = 20000
`)
			return agent.Config{
				Type: agent.TypeCodex,
				Env: cliEnv(home, map[string]string{
					"CODEX_HOME":     codexHome,
					"OPENAI_API_KEY": "sk-conformance-0000",
				}),
				Options: map[string]any{"skip_git_repo_check": true},
			}
		},
	},
	{
		typ: agent.TypeGemini, model: "gemini-2.5-pro", cli: true,
		failWords: "the API failed with HTTP 500: fake boom",
		// gemini 0.61 retries HTTP errors but not a stream that dies.
		cutFails: "exited with status 1: the connection to the API closed mid-answer",
		config: func(t *testing.T, srv *fakeserver.Server, home string) agent.Config {
			writeFile(t, filepath.Join(home, ".gemini", "settings.json"), `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true, "maxAttempts": 3},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false}
}`)
			return agent.Config{
				Type: agent.TypeGemini,
				Env: cliEnv(home, map[string]string{
					"GOOGLE_GEMINI_BASE_URL": srv.URL,
					"GEMINI_API_KEY":         "gemini-conformance-0000",
				}),
			}
		},
	},
	{
		typ: agent.TypeOpenAI, model: "gpt-4.1", reportsRetries: true,
		failWords: "driver openai: HTTP 500 after 3 attempts: fake boom",
		config: func(t *testing.T, srv *fakeserver.Server, home string) agent.Config {
			return agent.Config{Type: agent.TypeOpenAI, BaseURL: srv.URL + "/v1", APIKeyEnv: "APL_CONFORMANCE_NO_KEY",
				Retry: agent.Retry{Max: 3, Backoff: 50 * time.Millisecond}}
		},
	},
	{
		typ: agent.TypeAnthropic, model: "claude-sonnet-4-5", reportsRetries: true,
		failWords: "driver anthropic: HTTP 500 after 3 attempts: fake boom",
		config: func(t *testing.T, srv *fakeserver.Server, home string) agent.Config {
			return agent.Config{Type: agent.TypeAnthropic, BaseURL: srv.URL, APIKeyEnv: "APL_CONFORMANCE_NO_KEY",
				Retry: agent.Retry{Max: 3, Backoff: 50 * time.Millisecond}}
		},
	},
}

// cliEnv is the environment of a CLI: HOME and the XDG directories in the
// test's temporary home, so nothing of the user's configuration, sessions
// or credentials is read, plus extra.
func cliEnv(home string, extra map[string]string) map[string]string {
	env := map[string]string{
		"HOME":            home,
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"NO_COLOR":        "1",
		"CI":              "1",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// verdictType is the returns type of the typed calls: an optional
// attribute included, which strict schemas must send as nullable.
var verdictType = cty.ObjectWithOptionalAttrs(map[string]cty.Type{
	"verdict": cty.String,
	"score":   cty.Number,
	"notes":   cty.String,
}, []string{"notes"})

// rig is one backend's driver, server and project, for one test.
type rig struct {
	b    backend
	srv  *fakeserver.Server
	d    agent.Driver
	work string
}

func newRig(t *testing.T, b backend) *rig {
	t.Helper()
	if os.Getenv("APL_CONFORMANCE") != "1" {
		t.Skip("set APL_CONFORMANCE=1 (make conformance) to run against the real CLIs")
	}
	if b.cli && cliSkip != "" {
		t.Skip(cliSkip)
	}
	srv := fakeserver.New()
	t.Cleanup(srv.Close)
	home := t.TempDir()
	cfg := b.config(t, srv, home)
	cfg.Model = b.model
	d, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{b: b, srv: srv, d: d, work: t.TempDir()}
}

func (r *rig) call(t *testing.T, req agent.Request) (agent.Response, error) {
	t.Helper()
	req.Workdir = r.work
	req.Step, req.Agent, req.Attempt, req.RunID = "conformance", "tester", 1, "run-1"
	if req.Timeout == 0 {
		req.Timeout = 2 * time.Minute
	}
	return r.d.Call(context.Background(), req)
}

// lastTurn returns the last model turn the server saw.
func (r *rig) lastTurn(t *testing.T) fakeserver.Request {
	t.Helper()
	turns := r.srv.Turns()
	if len(turns) == 0 {
		t.Fatal("the server saw no model turn")
	}
	return turns[len(turns)-1]
}

// oneSentence checks that err is one line naming the backend and holding
// words.
func oneSentence(t *testing.T, b backend, err error, words string) {
	t.Helper()
	if err == nil {
		t.Fatal("Call succeeded, want a failure")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "driver "+b.typ+": ") || len(msg) > 800 {
		t.Errorf("error is not one sentence naming the backend:\n%s", msg)
	}
	if !strings.Contains(msg, words) {
		t.Errorf("error = %q, want it to contain %q", msg, words)
	}
}

func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.typ, func(t *testing.T) {
			t.Parallel()
			t.Run("untyped and resumed", func(t *testing.T) { untyped(t, b) })
			t.Run("typed", func(t *testing.T) { typed(t, b) })
			t.Run("answer without JSON", func(t *testing.T) { noJSON(t, b) })
			t.Run("HTTP 500", func(t *testing.T) { persistent500(t, b) })
			t.Run("HTTP 429 ridden out", func(t *testing.T) {
				ridden(t, b, fakeserver.Reply{Status: 429, Message: "slow down", RetryAfter: "1"})
			})
			t.Run("server dies mid-answer", func(t *testing.T) {
				cut := fakeserver.Reply{Text: "never whole", Cut: true}
				if b.cutFails == "" {
					ridden(t, b, cut)
					return
				}
				r := newRig(t, b)
				r.srv.Push(cut)
				_, err := r.call(t, agent.Request{Prompt: "Hello.", Model: b.model})
				oneSentence(t, b, err, b.cutFails)
			})
			t.Run("burst of errors ridden out", func(t *testing.T) {
				ridden(t, b, fakeserver.Reply{Status: 503, Message: "busy", Times: 2})
			})
			t.Run("session continued by a later step", func(t *testing.T) { sessionThroughRun(t, b) })
		})
	}
}

func untyped(t *testing.T, b backend) {
	r := newRig(t, b)
	r.srv.Push(fakeserver.Reply{Text: "hello from the fake", InputTokens: 100, OutputTokens: 20})
	resp, err := r.call(t, agent.Request{Prompt: "Say hello. PROMPT-MARK", System: "SYSTEM-MARK", Model: b.model})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.Text, "hello from the fake") {
		t.Errorf("Text = %q", resp.Text)
	}
	if want := (agent.Usage{InputTokens: 100, OutputTokens: 20}); resp.Usage != want {
		t.Errorf("Usage = %+v, want %+v as served", resp.Usage, want)
	}
	turn := r.lastTurn(t)
	if turn.Model != b.model {
		t.Errorf("model sent = %q, want %q", turn.Model, b.model)
	}
	if !strings.Contains(turn.Prompt, "PROMPT-MARK") {
		t.Errorf("prompt sent = %q, want it to hold PROMPT-MARK", turn.Prompt)
	}
	if !strings.Contains(turn.System+"\n"+turn.Prompt, "SYSTEM-MARK") {
		t.Errorf("the system prompt was not sent")
	}
	if !b.cli {
		if turn.System != "SYSTEM-MARK" {
			t.Errorf("system sent = %q, want SYSTEM-MARK", turn.System)
		}
		return
	}
	if resp.SessionID == "" {
		t.Fatal("no session id")
	}

	// The session goes on: the earlier answer is sent again, and only the
	// new turn's tokens are counted.
	r.srv.Push(fakeserver.Reply{Text: "second answer", InputTokens: 30, OutputTokens: 7})
	resp2, err := r.call(t, agent.Request{Prompt: "Again. RESUME-MARK", Model: b.model, SessionID: resp.SessionID})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp2.Text, "second answer") {
		t.Errorf("resumed Text = %q", resp2.Text)
	}
	turn = r.lastTurn(t)
	if !strings.Contains(strings.Join(turn.Texts, "\n"), "hello from the fake") {
		t.Errorf("the resumed call did not send the earlier answer")
	}
	if want := (agent.Usage{InputTokens: 30, OutputTokens: 7}); resp2.Usage != want {
		t.Errorf("resumed Usage = %+v, want %+v (this turn only)", resp2.Usage, want)
	}
}

func typed(t *testing.T, b backend) {
	r := newRig(t, b)
	answer := `{"verdict": "PASS", "score": 8.5}`
	if b.typ == agent.TypeCodex {
		// Strict mode: every property present, null for an absent optional.
		answer = `{"verdict": "PASS", "score": 8.5, "notes": null}`
	}
	r.srv.Push(fakeserver.Reply{Text: answer, InputTokens: 50, OutputTokens: 9})
	resp, err := r.call(t, agent.Request{Prompt: "Judge. PROMPT-MARK", Model: b.model, Schema: agent.Schema(verdictType)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := agent.ExtractFromResponse(resp)
	if err != nil {
		t.Fatalf("ExtractFromResponse: %v (Text %q)", err, resp.Text)
	}
	v, err := agent.Decode(raw, verdictType)
	if err != nil {
		t.Fatalf("Decode(%s): %v", raw, err)
	}
	if v.GetAttr("verdict").AsString() != "PASS" || !v.GetAttr("notes").IsNull() {
		t.Errorf("value = %#v", v)
	}
}

func noJSON(t *testing.T, b backend) {
	r := newRig(t, b)
	r.srv.SetDefault(fakeserver.Reply{Text: "I would rather not answer in JSON.", InputTokens: 5, OutputTokens: 5})
	resp, err := r.call(t, agent.Request{Prompt: "Judge.", Model: b.model, Schema: agent.Schema(verdictType)})
	if err != nil {
		// A CLI may give up on a structured answer itself; it must say so
		// in one sentence.
		oneSentence(t, b, err, "")
		return
	}
	if _, err := agent.ExtractFromResponse(resp); !errors.Is(err, agent.ErrNoJSON) {
		t.Errorf("ExtractFromResponse error = %v, want ErrNoJSON (Text %q)", err, resp.Text)
	}
}

func persistent500(t *testing.T, b backend) {
	r := newRig(t, b)
	r.srv.SetDefault(fakeserver.Reply{Status: 500, Message: "fake boom"})
	_, err := r.call(t, agent.Request{Prompt: "Hello.", Model: b.model})
	oneSentence(t, b, err, b.failWords)
}

// ridden checks that a call rides out trouble and then gets its answer.
func ridden(t *testing.T, b backend, trouble fakeserver.Reply) {
	r := newRig(t, b)
	r.srv.Push(trouble, fakeserver.Reply{Text: "the answer after trouble", InputTokens: 12, OutputTokens: 3})
	var mu sync.Mutex
	var retries []agent.Progress
	progress := func(p agent.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Kind == agent.ProgressRetrying {
			retries = append(retries, p)
		}
	}
	resp, err := r.call(t, agent.Request{Prompt: "Hello.", Model: b.model, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	if mu.Lock(); b.reportsRetries && trouble.Status != 0 && len(retries) == 0 {
		t.Errorf("no retry was reported to Progress")
	}
	mu.Unlock()
	if !strings.Contains(resp.Text, "the answer after trouble") {
		t.Errorf("Text = %q", resp.Text)
	}
	if want := (agent.Usage{InputTokens: 12, OutputTokens: 3}); resp.Usage != want {
		t.Errorf("Usage = %+v, want %+v", resp.Usage, want)
	}
}
