package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// geminiBase is the default invocation of the gemini preset.
var geminiBase = []string{"gemini", "--output-format", "json"}

// geminiOutput is what `gemini --output-format json` prints. Releases have
// reported token counts in two shapes; both are read.
type geminiOutput struct {
	Response  *string         `json:"response"`
	SessionID string          `json:"session_id"`
	Error     json.RawMessage `json:"error"`
	Stats     struct {
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
		Models       map[string]struct {
			Tokens struct {
				Prompt     int `json:"prompt"`
				Candidates int `json:"candidates"`
				Cached     int `json:"cached"`
				Thoughts   int `json:"thoughts"`
			} `json:"tokens"`
		} `json:"models"`
	} `json:"stats"`
}

// newGemini builds the gemini preset: `gemini --output-format json` with
// --model, --approval-mode (option approval_mode) and --resume <id> when
// the Request names a session. The prompt, with any system prompt before
// it, goes on stdin: gemini runs headless when stdin is not a terminal, and
// stdin has no argument-length limit. Headless gemini refuses to run in a
// folder the user has not trusted (exit 55), so the preset sets
// GEMINI_CLI_TRUST_WORKSPACE=true, as a default that apl's environment or
// the driver's env can override: apl already runs it in the project root
// on the playbook's behalf.
//
// The answer is `response`; tokens are summed over stats.models.*.tokens
// (prompt less cached as input, candidates plus thoughts as output), or read
// from stats.inputTokens/outputTokens; a non-null `error` is a failure, as
// is a non-zero exit. On failure gemini prints nothing on stdout and its
// error object on stderr, after stack traces, and exits with the HTTP
// status modulo 256; the message is taken from that object.
func newGemini(cfg Config) (Driver, error) {
	d, err := baseCommand(cfg, geminiBase)
	if err != nil {
		return nil, err
	}
	if err := checkOptions(cfg, "approval_mode"); err != nil {
		return nil, err
	}
	approval, err := stringOption(cfg, "approval_mode")
	if err != nil {
		return nil, err
	}
	d.env = map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"}
	d.flags = func(c *call) error {
		if c.model != "" {
			c.argv = append(c.argv, "--model", c.model)
		}
		if approval != "" {
			c.argv = append(c.argv, "--approval-mode", approval)
		}
		if c.req.SessionID != "" {
			c.argv = append(c.argv, "--resume", c.req.SessionID)
		}
		return nil
	}
	d.parse = func(c *call, res ProcessResult) (Response, error) {
		var out geminiOutput
		if json.Unmarshal(bytes.TrimSpace(res.Stdout), &out) != nil {
			if e, ok := lastJSONObject(res.Stderr); ok && res.ExitCode != 0 {
				if json.Unmarshal(e, &out) == nil && len(bytes.TrimSpace(out.Error)) > 0 {
					return Response{SessionID: out.SessionID}, geminiError(out.Error, res.ExitCode)
				}
			}
			if res.ExitCode != 0 {
				return Response{}, d.exitError(d.argv[0], res)
			}
			return Response{}, fmt.Errorf("driver gemini: output is not JSON: %s", excerpt(string(res.Stdout), 200))
		}
		resp := Response{SessionID: out.SessionID}
		if out.Response != nil {
			resp.Text = *out.Response
		}
		for _, m := range out.Stats.Models {
			resp.Usage.InputTokens += m.Tokens.Prompt - m.Tokens.Cached
			resp.Usage.CacheReadTokens += m.Tokens.Cached
			resp.Usage.OutputTokens += m.Tokens.Candidates + m.Tokens.Thoughts
		}
		if len(out.Stats.Models) == 0 {
			resp.Usage.InputTokens = out.Stats.InputTokens
			resp.Usage.OutputTokens = out.Stats.OutputTokens
		}
		if e := bytes.TrimSpace(out.Error); len(e) > 0 && string(e) != "null" {
			return resp, geminiError(e, res.ExitCode)
		}
		if res.ExitCode != 0 {
			return resp, d.exitError(d.argv[0], res)
		}
		if out.Response == nil {
			return resp, fmt.Errorf("driver gemini: output has no response: %s", excerpt(string(res.Stdout), 200))
		}
		return resp, nil
	}
	return d, nil
}

// geminiError words gemini's error object in one sentence. Its message is
// often the API's own error body, JSON again; the inner message is used.
// code is the HTTP status when it looks like one, else gemini's own exit
// code.
func geminiError(raw json.RawMessage, exit int) error {
	var obj struct {
		Message string
		Code    int
	}
	msg := string(bytes.TrimSpace(raw))
	if json.Unmarshal(raw, &obj) == nil && obj.Message != "" {
		msg = obj.Message
	}
	var api struct {
		Error struct {
			Code    int
			Message string
			Status  string
		}
	}
	if json.Unmarshal([]byte(msg), &api) == nil && api.Error.Message != "" {
		msg = api.Error.Message
		if obj.Code == 0 {
			obj.Code = api.Error.Code
		}
	}
	if msg == "terminated" {
		// Node's fetch says only this when the server closed the stream
		// mid-answer, which gemini does not retry.
		msg = "the connection to the API closed mid-answer (terminated)"
	}
	msg = excerpt(msg, 500)
	switch {
	case obj.Code >= 400 && obj.Code <= 599:
		return &StatusError{obj.Code, fmt.Errorf("driver gemini: the API failed with HTTP %d: %s", obj.Code, msg)}
	case exit != 0:
		return &ExitError{exit, fmt.Errorf("driver gemini: exited with status %d: %s", exit, msg)}
	}
	return fmt.Errorf("driver gemini: %s", msg)
}

// lastJSONObject finds the last top-level JSON object in out, which may
// hold other text (stack traces) before it: the object starts at the last
// line that is just "{" or starts with "{", and runs to the end.
func lastJSONObject(out []byte) (json.RawMessage, bool) {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if !bytes.HasPrefix(lines[i], []byte("{")) {
			continue
		}
		cand := bytes.TrimSpace(bytes.Join(lines[i:], []byte("\n")))
		if json.Valid(cand) {
			return cand, true
		}
	}
	return nil, false
}
