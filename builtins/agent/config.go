package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apl-lang/apl/builtins"
)

// Driver types accepted by New.
const (
	TypeCommand    = "command"
	TypeClaudeCode = "claude-code"
	TypeCodex      = "codex"
	TypeGemini     = "gemini"
	TypeOpenAI     = "openai"
	TypeAnthropic  = "anthropic"
)

// Default timeouts of one call.
const (
	DefaultCLITimeout  = 10 * time.Minute
	DefaultHTTPTimeout = 5 * time.Minute
)

// Config describes a driver: the `driver` block of a playbook, decoded.
type Config struct {
	// Type is one of the Type* constants.
	Type string
	// Command is the argv template of the command driver, each token
	// rendered on its own and never through a shell. Placeholders: {model}
	// {prompt} {prompt_file} {session_id} {step} {agent} {workdir}
	// {schema_file} {system}; other braces are left as they are. A token
	// that is exactly one placeholder and renders empty is dropped. When no
	// token holds {system}, a system prompt is put before the prompt,
	// separated by a blank line. For the CLI presets, Command replaces the
	// base invocation (e.g. `claude -p --output-format json`) and the
	// preset's own flags follow it. The program is looked up in this
	// process's PATH, not in Env's.
	Command []string
	// Input is how the command driver passes the prompt: "stdin" (default),
	// "file" (written to a temporary file named by {prompt_file}) or "arg"
	// (the {prompt} placeholder, or a last argument when no token has it).
	Input string
	// Output is how the command driver reads stdout: "text" (default),
	// "json" (one object) or "jsonl" (one object a line).
	Output string
	// Fields maps, for json and jsonl output, the names "text",
	// "structured", "session_id", "input_tokens", "output_tokens",
	// "cost_usd", "model" and "error" to dotted paths in the output. For jsonl the
	// last line holding a field wins.
	Fields map[string]string
	// Env is added to the environment of command drivers.
	Env map[string]string
	// Model is the default model, used when a Request names none.
	Model string
	// BaseURL is the endpoint of the HTTP drivers; the default comes from
	// OPENAI_BASE_URL or ANTHROPIC_BASE_URL, else the public endpoint.
	BaseURL string
	// APIKeyEnv names the environment variable holding the API key
	// (default OPENAI_API_KEY or ANTHROPIC_API_KEY). Keys are read from the
	// environment at each call and never logged or recorded.
	APIKeyEnv string
	// MaxTokens bounds the answer of the HTTP drivers; zero means the
	// backend's default (anthropic requires one: 4096).
	MaxTokens int
	// Options are preset knobs: for claude-code append_system_prompt,
	// allowed_tools, disallowed_tools, permission_mode, max_turns; for codex
	// sandbox, skip_git_repo_check; for gemini approval_mode.
	Options map[string]any
	// Prices maps model names to prices, for backends that report no cost.
	Prices map[string]Price
	// Timeout bounds one call, retries and their waits included (default
	// DefaultCLITimeout or DefaultHTTPTimeout); a Request's own Timeout
	// wins.
	Timeout time.Duration
	// Retry says how HTTP drivers retry 429 and 5xx answers.
	Retry Retry
	// Client is the HTTP client; nil means a default one.
	Client *http.Client
	// Runner starts processes; nil means os/exec.
	Runner Runner
}

// Price is what a model costs, in USD per million tokens.
type Price struct {
	InputPerMTok      float64
	OutputPerMTok     float64
	CacheReadPerMTok  float64 // zero: cache reads are not charged
	CacheWritePerMTok float64 // zero: cache writes are not charged
}

// Retry says how HTTP drivers retry. Only 429 and 5xx answers are retried.
type Retry struct {
	// Max is the number of attempts, the first included (default 3).
	Max int
	// Backoff is the wait before the second attempt, doubled each time
	// after (default 1s). A Retry-After header, in seconds or as a date,
	// replaces it.
	Backoff time.Duration
	// Sleep waits d or until ctx is done; nil means a timer. Tests inject
	// one to run fast and see the waits.
	Sleep func(ctx context.Context, d time.Duration) error
}

// New builds the driver cfg describes, checking it first.
func New(cfg Config) (Driver, error) {
	if err := checkCommon(cfg); err != nil {
		return nil, err
	}
	switch cfg.Type {
	case TypeCommand:
		return newCommand(cfg)
	case TypeClaudeCode:
		return newClaude(cfg)
	case TypeCodex:
		return newCodex(cfg)
	case TypeGemini:
		return newGemini(cfg)
	case TypeOpenAI:
		return newOpenAI(cfg)
	case TypeAnthropic:
		return newAnthropic(cfg)
	case "":
		return nil, errors.New("driver type is not set")
	default:
		return nil, fmt.Errorf("unknown driver type %q (want one of %s)", cfg.Type, strings.Join(types, ", "))
	}
}

var types = []string{TypeCommand, TypeClaudeCode, TypeCodex, TypeGemini, TypeOpenAI, TypeAnthropic}

func checkCommon(cfg Config) error {
	if cfg.Timeout < 0 {
		return fmt.Errorf("driver %s: timeout must not be negative", cfg.Type)
	}
	if cfg.MaxTokens < 0 {
		return fmt.Errorf("driver %s: max_tokens must not be negative", cfg.Type)
	}
	if cfg.Retry.Max < 0 || cfg.Retry.Backoff < 0 {
		return fmt.Errorf("driver %s: retry max and backoff must not be negative", cfg.Type)
	}
	for _, m := range slices.Sorted(maps.Keys(cfg.Prices)) {
		p := cfg.Prices[m]
		if p.InputPerMTok < 0 || p.OutputPerMTok < 0 || p.CacheReadPerMTok < 0 || p.CacheWritePerMTok < 0 {
			return fmt.Errorf("driver %s: price of model %q must not be negative", cfg.Type, m)
		}
	}
	return nil
}

// checkOptions rejects options the driver does not know, naming the ones it
// does.
func checkOptions(cfg Config, known ...string) error {
	for _, k := range slices.Sorted(maps.Keys(cfg.Options)) {
		if !slices.Contains(known, k) {
			if len(known) == 0 {
				return fmt.Errorf("driver %s takes no options, got %q", cfg.Type, k)
			}
			sort.Strings(known)
			return fmt.Errorf("driver %s: unknown option %q (known: %s)", cfg.Type, k, strings.Join(known, ", "))
		}
	}
	return nil
}

// stringOption returns a string option, or "" when unset.
func stringOption(cfg Config, name string) (string, error) {
	v, ok := cfg.Options[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("driver %s: option %s must be a string, got %T", cfg.Type, name, v)
	}
	return s, nil
}

// stringsOption returns a list-of-strings option, accepting []string and
// []any of strings (the shape decoded config takes).
func stringsOption(cfg Config, name string) ([]string, error) {
	v, ok := cfg.Options[name]
	if !ok || v == nil {
		return nil, nil
	}
	switch v := v.(type) {
	case []string:
		return v, nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("driver %s: option %s[%d] must be a string, got %T", cfg.Type, name, i, e)
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("driver %s: option %s must be a list of strings, got %T", cfg.Type, name, v)
}

// intOption returns a whole-number option, or 0 when unset.
func intOption(cfg Config, name string) (int, error) {
	v, ok := cfg.Options[name]
	if !ok || v == nil {
		return 0, nil
	}
	switch v := v.(type) {
	case int:
		return v, nil
	case int64:
		return int(v), nil
	case float64:
		if v == float64(int(v)) {
			return int(v), nil
		}
	}
	return 0, fmt.Errorf("driver %s: option %s must be a whole number, got %v", cfg.Type, name, v)
}

// boolOption returns a bool option, or false when unset.
func boolOption(cfg Config, name string) (bool, error) {
	v, ok := cfg.Options[name]
	if !ok || v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("driver %s: option %s must be a bool, got %T", cfg.Type, name, v)
	}
	return b, nil
}

// baseURL returns cfg.BaseURL, else the named environment variable, else
// def, without a trailing slash, after checking it is an http(s) URL.
func baseURL(cfg Config, env, def string) (string, error) {
	base := cfg.BaseURL
	if base == "" {
		base = os.Getenv(env)
	}
	if base == "" {
		base = def
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("driver %s: base_url %q is not an http(s) URL", cfg.Type, base)
	}
	return strings.TrimRight(base, "/"), nil
}

// cost returns the cost of usage on model from prices, or nil when the model
// has no price.
func cost(prices map[string]Price, model string, u Usage) *float64 {
	p, ok := prices[model]
	if !ok {
		return nil
	}
	c := (float64(u.InputTokens)*p.InputPerMTok +
		float64(u.OutputTokens)*p.OutputPerMTok +
		float64(u.CacheReadTokens)*p.CacheReadPerMTok +
		float64(u.CacheWriteTokens)*p.CacheWritePerMTok) / 1e6
	return &c
}

// timeout returns the Request's timeout, else the configured one, else def.
func timeout(req Request, cfg time.Duration, def time.Duration) time.Duration {
	switch {
	case req.Timeout > 0:
		return req.Timeout
	case cfg > 0:
		return cfg
	}
	return def
}

// model returns the Request's model, else the configured default.
func model(req Request, def string) string {
	if req.Model != "" {
		return req.Model
	}
	return def
}

// excerpt returns at most n bytes of s, trimmed, marking a cut.
func excerpt(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// redactor removes secrets from what a driver reports: the values of the
// process's key-bearing variables, of the driver's own env, and of the
// variables named in keyVars (its api_key_env), as builtins.Redactor finds
// them.
func redactor(env map[string]string, keyVars ...string) *builtins.Redactor {
	environ := os.Environ()
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	return builtins.NewRedactor(environ, keyVars...)
}
