package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// anthropicVersion is the Messages API version apl speaks.
const anthropicVersion = "2023-06-01"

// anthropicDriver calls the Anthropic Messages API.
type anthropicDriver struct {
	*httpDriver
}

// newAnthropic builds the anthropic driver. It posts to {base}/v1/messages,
// base being BaseURL, else $ANTHROPIC_BASE_URL, else
// https://api.anthropic.com, with the key from $ANTHROPIC_API_KEY or
// APIKeyEnv in x-api-key.
func newAnthropic(cfg Config) (Driver, error) {
	base, err := baseURL(cfg, "ANTHROPIC_BASE_URL", "https://api.anthropic.com")
	if err != nil {
		return nil, err
	}
	h, err := newHTTP(cfg, base+"/v1/messages", "ANTHROPIC_API_KEY")
	if err != nil {
		return nil, err
	}
	return &anthropicDriver{h}, nil
}

type anthropicRequest struct {
	Model      string             `json:"model"`
	MaxTokens  int                `json:"max_tokens"`
	System     string             `json:"system,omitempty"`
	Messages   []anthropicMessage `json:"messages"`
	Tools      []anthropicTool    `json:"tools,omitempty"`
	ToolChoice map[string]any     `json:"tool_choice,omitempty"`
}

type anthropicMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type anthropicTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
}

type anthropicResponse struct {
	Model   string `json:"model"`
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      struct {
		InputTokens              int `json:"input_tokens"`
		OutputTokens             int `json:"output_tokens"`
		CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

// returnsTool is the name of the tool an answer with a schema is forced
// through.
const returnsTool = "returns"

// Call sends one message. With a Schema the answer is forced through a
// single tool whose input schema is the returns schema, and the tool's input
// becomes Structured; Text is the text blocks joined, or the structured JSON
// when there are none. stop_reason "max_tokens" is an error wrapping
// ErrTruncated, "refusal" one wrapping ErrRefused.
func (d *anthropicDriver) Call(ctx context.Context, req Request) (Response, error) {
	ctx, cancel := d.withTimeout(ctx, req)
	defer cancel()
	m := model(req, d.cfg.Model)
	if m == "" {
		return Response{}, errors.New("driver anthropic: no model: set the agent's or the driver's model")
	}
	body := anthropicRequest{
		Model:     m,
		MaxTokens: d.cfg.MaxTokens,
		System:    req.System,
		Messages:  []anthropicMessage{{Role: "user", Content: req.Prompt}},
	}
	if body.MaxTokens == 0 {
		body.MaxTokens = 4096
	}
	schema, wrapped := objectSchema(req.Schema)
	if req.Schema != nil {
		body.Tools = []anthropicTool{{
			Name:        returnsTool,
			Description: "Return the answer in the required shape.",
			InputSchema: schema,
		}}
		body.ToolChoice = map[string]any{"type": "tool", "name": returnsTool}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return Response{}, fmt.Errorf("driver anthropic: %w", err)
	}
	headers := map[string]string{"anthropic-version": anthropicVersion}
	if k := d.key(); k != "" {
		headers["x-api-key"] = k
	}
	raw, rawFile, err := d.post(ctx, req, headers, data)
	if err != nil {
		return rawResponse(raw, rawFile), err
	}

	var out anthropicResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return rawResponse(raw, rawFile), fmt.Errorf("driver anthropic: answer is not a message: %s", excerpt(string(raw), 200))
	}
	resp := rawResponse(raw, rawFile)
	resp.Model = out.Model
	resp.Usage = Usage{
		InputTokens:      out.Usage.InputTokens,
		OutputTokens:     out.Usage.OutputTokens,
		CacheReadTokens:  out.Usage.CacheReadInputTokens,
		CacheWriteTokens: out.Usage.CacheCreationInputTokens,
	}
	resp.CostUSD = cost(d.cfg.Prices, m, resp.Usage)
	var texts []string
	for _, block := range out.Content {
		switch {
		case block.Type == "text":
			texts = append(texts, block.Text)
		case block.Type == "tool_use" && block.Name == returnsTool && len(block.Input) > 0:
			resp.Structured = unwrap(block.Input, wrapped)
		}
	}
	resp.Text = strings.Join(texts, "")
	if resp.Text == "" && resp.Structured != nil {
		resp.Text = string(resp.Structured)
	}
	switch out.StopReason {
	case "max_tokens":
		return resp, fmt.Errorf("driver anthropic: stopped at the token limit (stop_reason max_tokens): %w", ErrTruncated)
	case "refusal":
		return resp, fmt.Errorf("driver anthropic: %w: %s", ErrRefused, excerpt(resp.Text, 300))
	}
	return resp, nil
}
