package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
)

// claudeBase is the default invocation of the claude-code preset.
// stream-json prints one message a line as claude goes, so that a call
// killed at its timeout still shows its session and what claude was
// retrying, and a watched call reports its API retries as they happen;
// its last line is the result object `--output-format json` prints, which
// a command of its own may still choose.
var claudeBase = []string{"claude", "-p", "--output-format", "stream-json", "--verbose"}

// claudeResult is the result object `claude -p --output-format json` prints.
type claudeResult struct {
	Type             string          `json:"type"`
	Subtype          string          `json:"subtype"`
	IsError          bool            `json:"is_error"`
	Result           string          `json:"result"`
	StructuredOutput json.RawMessage `json:"structured_output"`
	SessionID        string          `json:"session_id"`
	TotalCostUSD     *float64        `json:"total_cost_usd"`
	Usage            struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	} `json:"usage"`
	Errors []string `json:"errors"`
	// APIErrorStatus is the HTTP status of the API error that ended the
	// run, when one did.
	APIErrorStatus *int `json:"api_error_status"`
	// The fields of a system api_retry message.
	Attempt      int     `json:"attempt"`
	MaxRetries   int     `json:"max_retries"`
	ErrorStatus  *int    `json:"error_status"`
	Error        string  `json:"error"`
	RetryDelayMS float64 `json:"retry_delay_ms"`
}

// newClaude builds the claude-code preset: `claude -p --output-format
// stream-json --verbose` with the prompt on stdin, plus --model,
// --append-system-prompt (the append_system_prompt option and the Request's
// System, joined), --allowedTools and --disallowedTools (comma-joined),
// --permission-mode, --max-turns, --json-schema when the Request has a
// schema, and --resume=<id> (one token) when it names a session. The
// max_retries option sets CLAUDE_CODE_MAX_RETRIES, claude's own count of
// API retries (10 by default, some three minutes against a server that
// keeps failing).
//
// The result object decides success: is_error true or a subtype other than
// "success" is a failure even when claude exits 0, and when claude exits
// non-zero but prints a result object, that object is read and decides (so
// the usage, cost and session of a failed run are still reported). Only a
// non-zero exit without a result object falls back to the exit status. A
// failed API call is reported by its status (api_error_status) and
// claude's words for it.
func newClaude(cfg Config) (Driver, error) {
	d, err := baseCommand(cfg, claudeBase)
	if err != nil {
		return nil, err
	}
	if err := checkOptions(cfg, "append_system_prompt", "allowed_tools", "disallowed_tools", "permission_mode", "max_turns", "max_retries"); err != nil {
		return nil, err
	}
	if _, set := cfg.Options["max_retries"]; set {
		n, err := intOption(cfg, "max_retries")
		if err != nil {
			return nil, err
		}
		if n < 0 {
			return nil, fmt.Errorf("driver %s: option max_retries must not be negative", cfg.Type)
		}
		// An option is explicit configuration: it beats apl's environment,
		// but not a CLAUDE_CODE_MAX_RETRIES the driver's env sets.
		env := maps.Clone(d.cfg.Env)
		if env == nil {
			env = map[string]string{}
		}
		if _, ok := env["CLAUDE_CODE_MAX_RETRIES"]; !ok {
			env["CLAUDE_CODE_MAX_RETRIES"] = strconv.Itoa(n)
		}
		d.cfg.Env = env
	}
	appendSystem, err := stringOption(cfg, "append_system_prompt")
	if err != nil {
		return nil, err
	}
	allowed, err := stringsOption(cfg, "allowed_tools")
	if err != nil {
		return nil, err
	}
	disallowed, err := stringsOption(cfg, "disallowed_tools")
	if err != nil {
		return nil, err
	}
	permission, err := stringOption(cfg, "permission_mode")
	if err != nil {
		return nil, err
	}
	maxTurns, err := intOption(cfg, "max_turns")
	if err != nil {
		return nil, err
	}
	d.ownSystem = true
	d.flags = func(c *call) error {
		stdin := c.prompt
		c.stdin = &stdin
		if c.model != "" {
			c.argv = append(c.argv, "--model", c.model)
		}
		system := joinNonEmpty("\n\n", appendSystem, c.req.System)
		if system != "" {
			c.argv = append(c.argv, "--append-system-prompt", system)
		}
		if len(allowed) > 0 {
			c.argv = append(c.argv, "--allowedTools", strings.Join(allowed, ","))
		}
		if len(disallowed) > 0 {
			c.argv = append(c.argv, "--disallowedTools", strings.Join(disallowed, ","))
		}
		if permission != "" {
			c.argv = append(c.argv, "--permission-mode", permission)
		}
		if maxTurns > 0 {
			c.argv = append(c.argv, "--max-turns", strconv.Itoa(maxTurns))
		}
		if c.req.Schema != nil {
			schema, _ := objectSchema(c.req.Schema)
			data, err := json.Marshal(schema)
			if err != nil {
				return fmt.Errorf("driver claude-code: schema: %w", err)
			}
			c.argv = append(c.argv, "--json-schema", string(data))
		}
		if c.req.SessionID != "" {
			c.argv = append(c.argv, "--resume="+c.req.SessionID)
		}
		return nil
	}
	d.parse = func(c *call, res ProcessResult) (Response, error) {
		r, ok := parseClaudeResult(res.Stdout)
		if !ok {
			if res.ExitCode != 0 {
				return Response{}, d.exitError(d.argv[0], res)
			}
			return Response{}, fmt.Errorf("driver claude-code: output is not a result object: %s", excerpt(string(res.Stdout), 200))
		}
		_, wrapped := objectSchema(c.req.Schema)
		resp := Response{
			Text:      r.Result,
			SessionID: r.SessionID,
			CostUSD:   r.TotalCostUSD,
			Usage: Usage{
				InputTokens:      r.Usage.InputTokens,
				OutputTokens:     r.Usage.OutputTokens,
				CacheReadTokens:  r.Usage.CacheReadInputTokens,
				CacheWriteTokens: r.Usage.CacheCreationInputTokens,
			},
		}
		if s := bytes.TrimSpace(r.StructuredOutput); len(s) > 0 && string(s) != "null" {
			resp.Structured = unwrap(s, c.req.Schema != nil && wrapped)
		}
		if r.IsError || (r.Subtype != "" && r.Subtype != "success") {
			return resp, claudeFailure(r, res.ExitCode)
		}
		return resp, nil
	}
	d.killed = func(res ProcessResult) (string, string) {
		var session, doing string
		for _, line := range strings.Split(string(res.Stdout), "\n") {
			var m claudeResult
			if json.Unmarshal([]byte(line), &m) != nil {
				continue
			}
			if m.SessionID != "" {
				session = m.SessionID
			}
			if p, ok := claudeRetry(m); ok {
				p.Wait = 0 // long past
				doing = "claude was " + p.String()
				doing = strings.Replace(doing, "retrying", "retrying the API", 1)
			}
		}
		if doing == "" {
			doing = lastLine(string(res.Stderr))
		}
		return session, doing
	}
	d.watch = func(req Request, line []byte) {
		var m claudeResult
		if json.Unmarshal(line, &m) != nil || m.Type != "system" {
			return
		}
		if p, ok := claudeRetry(m); ok {
			req.progress(p)
		} else if m.Subtype == "init" && m.SessionID != "" {
			req.progress(Progress{Kind: ProgressSession, SessionID: m.SessionID})
		}
	}
	return d, nil
}

// claudeRetry reads a system api_retry message.
func claudeRetry(m claudeResult) (Progress, bool) {
	if m.Type != "system" || m.Subtype != "api_retry" {
		return Progress{}, false
	}
	p := Progress{Kind: ProgressRetrying, Attempt: m.Attempt, Max: m.MaxRetries, Message: m.Error}
	if m.ErrorStatus != nil {
		p.Status = *m.ErrorStatus
	}
	if m.RetryDelayMS > 0 {
		p.Wait = time.Duration(m.RetryDelayMS * float64(time.Millisecond))
	}
	return p, true
}

// claudeFailure words a failed result in one sentence: the API's status
// and claude's message when an API call failed, else what stopped the run.
func claudeFailure(r claudeResult, exit int) error {
	detail := r.Result
	if detail == "" {
		detail = strings.Join(r.Errors, "; ")
	}
	if detail == "" {
		detail = "no message"
	}
	detail = excerpt(detail, 500)
	exitNote := ""
	if exit != 0 {
		exitNote = fmt.Sprintf(", exit status %d", exit)
	}
	switch {
	case r.APIErrorStatus != nil:
		return &StatusError{*r.APIErrorStatus, fmt.Errorf("driver claude-code: the API failed with HTTP %d%s: %s", *r.APIErrorStatus, exitNote, detail)}
	case r.Subtype != "" && r.Subtype != "success":
		// The subtype says why (error_max_turns, error_during_execution).
		return fmt.Errorf("driver claude-code: run failed (subtype %q, exit status %d): %s", r.Subtype, exit, detail)
	}
	err := fmt.Errorf("driver claude-code: the run failed%s: %s", exitNote, detail)
	if exit != 0 {
		return &ExitError{exit, err}
	}
	return err
}

// parseClaudeResult reads claude's result object from stdout: the whole
// output (--output-format json), the last element of type "result" of an
// array (json with --verbose), or the last line of type "result"
// (stream-json).
func parseClaudeResult(stdout []byte) (claudeResult, bool) {
	trimmed := bytes.TrimSpace(stdout)
	var r claudeResult
	if lines := bytes.Split(trimmed, []byte("\n")); len(lines) > 1 {
		for i := len(lines) - 1; i >= 0; i-- {
			var m claudeResult
			if json.Unmarshal(bytes.TrimSpace(lines[i]), &m) == nil && m.Type == "result" {
				return m, true
			}
		}
	}
	if bytes.HasPrefix(trimmed, []byte("[")) {
		var msgs []json.RawMessage
		if json.Unmarshal(trimmed, &msgs) != nil {
			return r, false
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			var m claudeResult
			if json.Unmarshal(msgs[i], &m) == nil && m.Type == "result" {
				return m, true
			}
		}
		return r, false
	}
	if json.Unmarshal(trimmed, &r) != nil {
		return r, false
	}
	// Some other JSON object is not a result.
	return r, r.Type == "result" || r.Subtype != "" || r.SessionID != ""
}

// joinNonEmpty joins the non-empty parts with sep.
func joinNonEmpty(sep string, parts ...string) string {
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, sep)
}
