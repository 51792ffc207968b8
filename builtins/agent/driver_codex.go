package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// codexBase is the default invocation of the codex preset.
var codexBase = []string{"codex", "exec", "--json"}

// maxArgPrompt is the longest prompt passed as an argument. Linux refuses a
// single argument over 128 KiB (MAX_ARG_STRLEN); longer prompts go on stdin
// behind codex's "-" argument.
const maxArgPrompt = 100 << 10

// codexEvent is one line of `codex exec --json`.
type codexEvent struct {
	Type     string `json:"type"`
	ThreadID string `json:"thread_id"`
	Item     *struct {
		Type     string `json:"type"`
		ItemType string `json:"item_type"` // older releases
		Text     string `json:"text"`
	} `json:"item"`
	Usage *struct {
		InputTokens       int `json:"input_tokens"`
		CachedInputTokens int `json:"cached_input_tokens"`
		OutputTokens      int `json:"output_tokens"`
	} `json:"usage"`
	Error   *struct{ Message string } `json:"error"`
	Message string                    `json:"message"`
}

// newCodex builds the codex preset: `codex exec --json`, plus --model,
// --sandbox (option sandbox), --skip-git-repo-check (option
// skip_git_repo_check), --output-schema <file> when the Request has a
// schema strict mode can express (see StrictSchema), and `resume <id>` when
// it names a session. The prompt, with any system prompt before it, is the
// last argument and stdin is empty: codex waits on an open stdin. A prompt
// too long for one argument is sent on stdin behind "-" instead.
//
// The answer is the last completed agent_message item; thread.started names
// the session. Only turn.failed and the exit status decide failure: codex
// also prints `error` events while it reconnects ("Reconnecting... 1/5")
// and then often succeeds, so those are kept only to explain a failure.
// Usage is summed over turn.completed events; on `exec resume` codex
// reports the thread's running total instead, so the total before the call
// (from codex's session log, or from this driver's own earlier calls) is
// taken off.
func newCodex(cfg Config) (Driver, error) {
	d, err := baseCommand(cfg, codexBase)
	if err != nil {
		return nil, err
	}
	if err := checkOptions(cfg, "sandbox", "skip_git_repo_check"); err != nil {
		return nil, err
	}
	sandbox, err := stringOption(cfg, "sandbox")
	if err != nil {
		return nil, err
	}
	skipGit, err := boolOption(cfg, "skip_git_repo_check")
	if err != nil {
		return nil, err
	}
	totals := &threadTotals{seen: map[string]Usage{}}
	d.flags = func(c *call) error {
		c.stdin = nil
		if c.model != "" {
			c.argv = append(c.argv, "--model", c.model)
		}
		if sandbox != "" {
			c.argv = append(c.argv, "--sandbox", sandbox)
		}
		if skipGit {
			c.argv = append(c.argv, "--skip-git-repo-check")
		}
		if c.req.Schema != nil {
			// codex needs an object at the root, like the APIs, and sends
			// the schema in strict mode, which rejects open objects and
			// optional properties.
			schema, _ := objectSchema(c.req.Schema)
			if strict, ok := StrictSchema(schema); ok {
				data, err := json.Marshal(strict)
				if err != nil {
					return fmt.Errorf("driver codex: schema: %w", err)
				}
				path, err := c.writeFile("schema.json", data)
				if err != nil {
					return err
				}
				c.argv = append(c.argv, "--output-schema", path)
			}
		}
		if c.req.SessionID != "" {
			c.argv = append(c.argv, "resume", c.req.SessionID)
			if u, ok := codexSessionTotal(d.cfg.Env, c.req.SessionID); ok {
				c.prior = &u
			} else if u, ok := totals.get(c.req.SessionID); ok {
				c.prior = &u
			}
		}
		if len(c.prompt) > maxArgPrompt {
			stdin := c.prompt
			c.stdin = &stdin
			c.argv = append(c.argv, "-")
		} else {
			c.argv = append(c.argv, c.prompt)
		}
		return nil
	}
	d.watch = func(req Request, line []byte) {
		var ev codexEvent
		if json.Unmarshal(line, &ev) != nil {
			return
		}
		switch ev.Type {
		case "thread.started":
			if ev.ThreadID != "" {
				req.progress(Progress{Kind: ProgressSession, SessionID: ev.ThreadID})
			}
		case "error":
			if p, ok := codexReconnect(ev.Message); ok {
				req.progress(p)
			}
		}
	}
	d.killed = func(res ProcessResult) (string, string) {
		var session string
		for _, line := range strings.Split(string(res.Stdout), "\n") {
			var ev codexEvent
			if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "thread.started" {
				session = ev.ThreadID
			}
		}
		return session, lastLine(string(res.Stderr))
	}
	d.parse = func(c *call, res ProcessResult) (Response, error) {
		resp, total, err := parseCodex(d, res, c.req.SessionID != "")
		if resp.SessionID != "" {
			totals.set(resp.SessionID, total)
		}
		if c.prior != nil {
			resp.Usage = Usage{
				InputTokens:     max(0, resp.Usage.InputTokens-c.prior.InputTokens),
				OutputTokens:    max(0, resp.Usage.OutputTokens-c.prior.OutputTokens),
				CacheReadTokens: max(0, resp.Usage.CacheReadTokens-c.prior.CacheReadTokens),
			}
		}
		if _, wrapped := objectSchema(c.req.Schema); c.req.Schema != nil && wrapped {
			// The answer is {"value": ...}; hand back what was asked for.
			if raw, jerr := ExtractJSON(resp.Text); jerr == nil {
				resp.Structured = unwrap(raw, true)
			}
		}
		return resp, err
	}
	return d, nil
}

// codexReconnect reads the error event codex prints as it reconnects:
// "Reconnecting... 2/5 (stream disconnected before completion: …)".
func codexReconnect(msg string) (Progress, bool) {
	rest, ok := strings.CutPrefix(msg, "Reconnecting...")
	if !ok {
		return Progress{}, false
	}
	p := Progress{Kind: ProgressRetrying}
	rest = strings.TrimSpace(rest)
	count, why, _ := strings.Cut(rest, " ")
	if n, m, ok := strings.Cut(count, "/"); ok {
		p.Attempt, _ = strconv.Atoi(n)
		p.Max, _ = strconv.Atoi(m)
	}
	p.Message = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(why), "("), ")")
	return p, true
}

// parseCodex reads codex's event lines. total is the thread's token total
// as codex last reported it; on a resumed thread (resumed true) that is
// also the Response's usage, which the caller corrects.
func parseCodex(d *commandDriver, res ProcessResult, resumed bool) (resp Response, total Usage, err error) {
	var (
		failed     string // the turn.failed message
		lastError  string // the last error event, which may have been ridden out
		reconnects int
		events     int
	)
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		var ev codexEvent
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Type == "" {
			continue
		}
		events++
		switch ev.Type {
		case "thread.started":
			resp.SessionID = ev.ThreadID
		case "item.completed":
			if ev.Item != nil && (ev.Item.Type == "agent_message" || ev.Item.ItemType == "agent_message" || ev.Item.ItemType == "assistant_message") {
				resp.Text = ev.Item.Text
			}
		case "turn.completed", "turn.failed":
			if ev.Usage != nil {
				// codex counts cached tokens inside input_tokens.
				u := Usage{
					InputTokens:     ev.Usage.InputTokens - ev.Usage.CachedInputTokens,
					CacheReadTokens: ev.Usage.CachedInputTokens,
					OutputTokens:    ev.Usage.OutputTokens,
				}
				if resumed {
					total = u // a running total: the last one counts
				} else {
					total.InputTokens += u.InputTokens
					total.CacheReadTokens += u.CacheReadTokens
					total.OutputTokens += u.OutputTokens
				}
			}
			if ev.Type == "turn.failed" {
				failed = "the turn failed"
				if ev.Error != nil && ev.Error.Message != "" {
					failed = ev.Error.Message
				}
			}
		case "error":
			msg := ev.Message
			if msg == "" && ev.Error != nil {
				msg = ev.Error.Message
			}
			if strings.HasPrefix(msg, "Reconnecting...") {
				reconnects++
			} else if msg != "" {
				lastError = msg
			}
		}
	}
	resp.Usage = total
	retried := ""
	if reconnects > 0 {
		retried = fmt.Sprintf(" after %d reconnect attempt%s", reconnects, plural(reconnects))
	}
	switch {
	case failed != "":
		// codex prints the same message as an error event and in
		// turn.failed; say it once.
		return resp, total, fmt.Errorf("driver codex: the turn failed%s: %s", retried, excerpt(failed, 500))
	case res.ExitCode != 0 && lastError != "":
		return resp, total, &ExitError{res.ExitCode, fmt.Errorf("driver codex: exited with status %d%s: %s", res.ExitCode, retried, excerpt(lastError, 500))}
	case resp.Text == "" && lastError != "":
		// No answer, and an error nobody rode out.
		return resp, total, fmt.Errorf("driver codex: no answer%s: %s", retried, excerpt(lastError, 500))
	case res.ExitCode != 0:
		return resp, total, d.exitError(d.argv[0], res)
	case events == 0:
		return resp, total, fmt.Errorf("driver codex: output has no JSON events: %s", excerpt(string(res.Stdout), 200))
	}
	return resp, total, nil
}

// threadTotals remembers the last token total of each codex thread this
// driver saw, for resumes whose session log cannot be read.
type threadTotals struct {
	mu   sync.Mutex
	seen map[string]Usage
}

func (t *threadTotals) get(id string) (Usage, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	u, ok := t.seen[id]
	return u, ok
}

func (t *threadTotals) set(id string, u Usage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.seen[id] = u
}

// codexSessionTotal reads a thread's token total so far from codex's
// session log, $CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl (the
// last token_count event's total_token_usage). env is the driver's Env,
// which may set CODEX_HOME or HOME.
func codexSessionTotal(env map[string]string, id string) (Usage, bool) {
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	home := getenv("CODEX_HOME")
	if home == "" {
		if h := getenv("HOME"); h != "" {
			home = filepath.Join(h, ".codex")
		}
	}
	if home == "" || strings.ContainsAny(id, "/*?[\\") {
		return Usage{}, false
	}
	files, _ := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*"+id+".jsonl"))
	if len(files) == 0 {
		return Usage{}, false
	}
	data, err := os.ReadFile(files[len(files)-1])
	if err != nil {
		return Usage{}, false
	}
	lines := strings.Split(string(data), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if !strings.Contains(lines[i], `"total_token_usage"`) {
			continue
		}
		var rec struct {
			Payload struct {
				Info struct {
					Total struct {
						InputTokens       int `json:"input_tokens"`
						CachedInputTokens int `json:"cached_input_tokens"`
						OutputTokens      int `json:"output_tokens"`
					} `json:"total_token_usage"`
				} `json:"info"`
			} `json:"payload"`
		}
		if json.Unmarshal([]byte(lines[i]), &rec) != nil {
			continue
		}
		t := rec.Payload.Info.Total
		return Usage{InputTokens: t.InputTokens - t.CachedInputTokens, CacheReadTokens: t.CachedInputTokens, OutputTokens: t.OutputTokens}, true
	}
	return Usage{}, false
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
