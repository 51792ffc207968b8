package agent

import (
	"encoding/json"
	"fmt"
	"strings"
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
// schema, and `resume <id>` when it names a session. The prompt, with any
// system prompt before it, is the last argument and stdin is empty: codex
// waits on an open stdin. A prompt too long for one argument is sent on
// stdin behind "-" instead.
//
// The answer is the last completed agent_message item; usage sums the
// turn.completed events; thread.started names the session; a turn.failed or
// error event is a failure, as is a non-zero exit.
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
			// codex needs an object at the root, like the APIs.
			schema, _ := objectSchema(c.req.Schema)
			data, err := json.Marshal(schema)
			if err != nil {
				return fmt.Errorf("driver codex: schema: %w", err)
			}
			path, err := c.writeFile("schema.json", data)
			if err != nil {
				return err
			}
			c.argv = append(c.argv, "--output-schema", path)
		}
		if c.req.SessionID != "" {
			c.argv = append(c.argv, "resume", c.req.SessionID)
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
	d.parse = func(c *call, res ProcessResult) (Response, error) {
		resp, err := parseCodex(d, res)
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

func parseCodex(d *commandDriver, res ProcessResult) (Response, error) {
	var (
		resp     Response
		failures []string
		events   int
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
				resp.Usage.InputTokens += ev.Usage.InputTokens - ev.Usage.CachedInputTokens
				resp.Usage.CacheReadTokens += ev.Usage.CachedInputTokens
				resp.Usage.OutputTokens += ev.Usage.OutputTokens
			}
			if ev.Type == "turn.failed" {
				msg := "turn failed"
				if ev.Error != nil && ev.Error.Message != "" {
					msg = ev.Error.Message
				}
				failures = append(failures, msg)
			}
		case "error":
			msg := ev.Message
			if msg == "" && ev.Error != nil {
				msg = ev.Error.Message
			}
			failures = append(failures, msg)
		}
	}
	switch {
	case len(failures) > 0:
		return resp, fmt.Errorf("driver codex: %s", excerpt(strings.Join(failures, "; "), 500))
	case res.ExitCode != 0:
		return resp, d.exitError(d.argv[0], res)
	case events == 0:
		return resp, fmt.Errorf("driver codex: output has no JSON events: %s", excerpt(string(res.Stdout), 200))
	}
	return resp, nil
}
