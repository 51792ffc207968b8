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
// --model and --approval-mode (option approval_mode). The prompt, with any
// system prompt before it, goes on stdin: gemini runs headless when stdin is
// not a terminal, and stdin has no argument-length limit. Gemini's CLI
// cannot resume a session by id, so SessionID is not passed.
//
// The answer is `response`; tokens are summed over stats.models.*.tokens
// (prompt less cached as input, candidates plus thoughts as output), or read
// from stats.inputTokens/outputTokens; a non-null `error` is a failure, as
// is a non-zero exit.
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
	d.flags = func(c *call) error {
		if c.model != "" {
			c.argv = append(c.argv, "--model", c.model)
		}
		if approval != "" {
			c.argv = append(c.argv, "--approval-mode", approval)
		}
		return nil
	}
	d.parse = func(c *call, res ProcessResult) (Response, error) {
		var out geminiOutput
		if json.Unmarshal(bytes.TrimSpace(res.Stdout), &out) != nil {
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
			var obj struct{ Message string }
			msg := string(e)
			if json.Unmarshal(e, &obj) == nil && obj.Message != "" {
				msg = obj.Message
			}
			return resp, fmt.Errorf("driver gemini: %s", excerpt(msg, 500))
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
