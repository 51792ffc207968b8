package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// openaiDriver calls an OpenAI-compatible chat completions endpoint: OpenAI
// itself, or Ollama, vLLM, llama.cpp, LiteLLM and the like.
type openaiDriver struct {
	*httpDriver
}

// newOpenAI builds the openai driver. It posts to {base}/chat/completions,
// base being BaseURL, else $OPENAI_BASE_URL, else https://api.openai.com/v1.
// The key, from $OPENAI_API_KEY or APIKeyEnv, is sent as a bearer token;
// when it is empty no Authorization header is sent, as local servers want.
func newOpenAI(cfg Config) (Driver, error) {
	base, err := baseURL(cfg, "OPENAI_BASE_URL", "https://api.openai.com/v1")
	if err != nil {
		return nil, err
	}
	h, err := newHTTP(cfg, base+"/chat/completions", "OPENAI_API_KEY")
	if err != nil {
		return nil, err
	}
	return &openaiDriver{h}, nil
}

type openaiMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type openaiRequest struct {
	Model          string          `json:"model"`
	Messages       []openaiMessage `json:"messages"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	ResponseFormat map[string]any  `json:"response_format,omitempty"`
}

type openaiResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

// Call sends one chat completion. With a Schema it asks for a json_schema
// response format (not strict: strict mode rejects optional attributes) and
// reads the JSON content as Structured. finish_reason "length" is an error
// wrapping ErrTruncated; a refusal is an error wrapping ErrRefused.
func (d *openaiDriver) Call(ctx context.Context, req Request) (Response, error) {
	ctx, cancel := d.withTimeout(ctx, req)
	defer cancel()
	m := model(req, d.cfg.Model)
	if m == "" {
		return Response{}, errors.New("driver openai: no model: set the agent's or the driver's model")
	}
	body := openaiRequest{Model: m, MaxTokens: d.cfg.MaxTokens}
	if req.System != "" {
		body.Messages = append(body.Messages, openaiMessage{Role: "system", Content: req.System})
	}
	body.Messages = append(body.Messages, openaiMessage{Role: "user", Content: req.Prompt})
	schema, wrapped := objectSchema(req.Schema)
	if req.Schema != nil {
		body.ResponseFormat = map[string]any{
			"type": "json_schema",
			"json_schema": map[string]any{
				"name":   "returns",
				"schema": schema,
				"strict": false,
			},
		}
	}
	data, err := json.Marshal(body)
	if err != nil {
		return Response{}, fmt.Errorf("driver openai: %w", err)
	}
	headers := map[string]string{}
	if k := d.key(); k != "" {
		headers["Authorization"] = "Bearer " + k
	}
	raw, rawFile, err := d.post(ctx, req, headers, data)
	if err != nil {
		return rawResponse(raw, rawFile), err
	}

	var out openaiResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return rawResponse(raw, rawFile), fmt.Errorf("driver openai: answer is not a chat completion: %s", excerpt(string(raw), 200))
	}
	resp := rawResponse(raw, rawFile)
	resp.Model = out.Model
	resp.Usage = Usage{
		InputTokens:     out.Usage.PromptTokens - out.Usage.PromptTokensDetails.CachedTokens,
		OutputTokens:    out.Usage.CompletionTokens,
		CacheReadTokens: out.Usage.PromptTokensDetails.CachedTokens,
	}
	resp.CostUSD = cost(d.cfg.Prices, m, resp.Usage)
	if len(out.Choices) == 0 {
		return resp, errors.New("driver openai: answer has no choices")
	}
	choice := out.Choices[0]
	if choice.Message.Content != nil {
		resp.Text = *choice.Message.Content
	}
	if r := choice.Message.Refusal; r != nil && *r != "" {
		return resp, fmt.Errorf("driver openai: %w: %s", ErrRefused, excerpt(*r, 300))
	}
	if choice.FinishReason == "length" {
		return resp, fmt.Errorf("driver openai: stopped at the token limit (finish_reason length): %w", ErrTruncated)
	}
	if req.Schema != nil {
		if raw, err := ExtractJSON(resp.Text); err == nil {
			resp.Structured = unwrap(raw, wrapped)
		}
	}
	return resp, nil
}
