package fakeserver

import (
	"encoding/json"
	"net/http"
	"strings"
)

// anthropicBody is the part of a Messages API request the server reads.
type anthropicBody struct {
	Model    string `json:"model"`
	System   any    `json:"system"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	ToolChoice *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool_choice"`
}

// structuredTools are the tool names CLIs use to return a structured
// answer: claude-code's --json-schema offers StructuredOutput.
var structuredTools = []string{"StructuredOutput"}

// forcedTool returns the tool the answer must call, if any.
func (b anthropicBody) forcedTool() string {
	if b.ToolChoice != nil {
		switch b.ToolChoice.Type {
		case "tool":
			return b.ToolChoice.Name
		case "any":
			if len(b.Tools) == 1 {
				return b.Tools[0].Name
			}
		}
	}
	for _, t := range b.Tools {
		for _, s := range structuredTools {
			if t.Name == s {
				return t.Name
			}
		}
	}
	return ""
}

// toolResultTurn reports whether the last message answers a tool call: the
// turn after a structured answer, which a CLI sends to close the loop.
func (b anthropicBody) toolResultTurn() bool {
	if len(b.Messages) == 0 {
		return false
	}
	parts, ok := b.Messages[len(b.Messages)-1].Content.([]any)
	if !ok {
		return false
	}
	for _, p := range parts {
		if m, ok := p.(map[string]any); ok && m["type"] == "tool_result" {
			return true
		}
	}
	return false
}

func (s *Server) anthropic(w http.ResponseWriter, r *http.Request, req Request) {
	var b anthropicBody
	if err := json.Unmarshal(req.Body, &b); err != nil {
		s.record(req)
		fail(w, "anthropic", Reply{Status: 400, Message: "body is not JSON: " + err.Error()})
		return
	}
	req.Model, req.Stream = b.Model, b.Stream
	req.System = textOf(b.System)
	for _, m := range b.Messages {
		t := textOf(m.Content)
		if t != "" {
			req.Texts = append(req.Texts, t)
		}
		if m.Role == "user" {
			req.Prompt = t
		}
	}
	var reply Reply
	if b.toolResultTurn() {
		// Close the tool loop without spending a scripted reply.
		reply = Reply{Text: "Done."}
	} else {
		req.Turn = true
		reply = s.next()
	}
	s.record(req)
	if fail(w, "anthropic", reply) {
		return
	}

	tool := b.forcedTool()
	block := map[string]any{"type": "text", "text": reply.Text}
	if tool != "" && isObject(reply.Text) && !b.toolResultTurn() {
		block = map[string]any{"type": "tool_use", "id": s.id("toolu_"), "name": tool, "input": json.RawMessage(reply.Text)}
	}
	stop := reply.StopReason
	if stop == "" {
		stop = "end_turn"
		if block["type"] == "tool_use" {
			stop = "tool_use"
		}
	}
	usage := map[string]any{
		"input_tokens":                reply.InputTokens,
		"output_tokens":               reply.OutputTokens,
		"cache_read_input_tokens":     reply.CachedTokens,
		"cache_creation_input_tokens": 0,
	}
	id := s.id("msg_")
	if !b.Stream {
		msg := map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": b.Model,
			"content": []any{block}, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		}
		if reply.Cut {
			cut(w, marshal(msg))
			return
		}
		writeJSON(w, 200, msg)
		return
	}

	startUsage := map[string]any{
		"input_tokens": reply.InputTokens, "output_tokens": 1,
		"cache_read_input_tokens": reply.CachedTokens, "cache_creation_input_tokens": 0,
	}
	events := []event{{"message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": b.Model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
	}}}}
	if block["type"] == "tool_use" {
		events = append(events,
			event{"content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{
				"type": "tool_use", "id": block["id"], "name": tool, "input": map[string]any{},
			}}},
			event{"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{
				"type": "input_json_delta", "partial_json": strings.TrimSpace(reply.Text),
			}}})
	} else {
		events = append(events,
			event{"content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}},
			event{"content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": reply.Text}}})
	}
	events = append(events,
		event{"content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}},
		event{"message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": reply.OutputTokens}}},
		event{"message_stop", map[string]any{"type": "message_stop"}})
	cutAfter := 0
	if reply.Cut {
		cutAfter = 2 // after the block starts, before it ends
	}
	sse(w, events, cutAfter)
}
