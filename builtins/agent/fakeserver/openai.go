package fakeserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// responsesBody is the part of a Responses API request the server reads.
type responsesBody struct {
	Model        string `json:"model"`
	Instructions string `json:"instructions"`
	Stream       bool   `json:"stream"`
	Text         *struct {
		Format struct {
			Type   string         `json:"type"`
			Name   string         `json:"name"`
			Strict bool           `json:"strict"`
			Schema map[string]any `json:"schema"`
		} `json:"format"`
	} `json:"text"`
	Input []struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"input"`
}

// responses answers the OpenAI Responses API, which codex speaks, as a
// stream of events (codex always streams).
func (s *Server) responses(w http.ResponseWriter, r *http.Request, req Request) {
	var b responsesBody
	if err := json.Unmarshal(req.Body, &b); err != nil {
		s.record(req)
		fail(w, "responses", Reply{Status: 400, Message: "body is not JSON: " + err.Error()})
		return
	}
	req.Model, req.Stream, req.Turn = b.Model, b.Stream, true
	system := []string{b.Instructions}
	for _, m := range b.Input {
		t := textOf(m.Content)
		if t == "" {
			continue
		}
		req.Texts = append(req.Texts, t)
		switch m.Role {
		case "user":
			req.Prompt = t
		case "system", "developer":
			system = append(system, t)
		}
	}
	req.System = strings.Join(system, "\n")
	if f := b.Text; f != nil && f.Format.Type == "json_schema" && f.Format.Strict {
		// As OpenAI's Structured Outputs does, refuse a schema strict mode
		// cannot take, before any reply is spent.
		if msg := strictProblem(f.Format.Schema, "()"); msg != "" {
			s.record(req)
			fail(w, "responses", Reply{Status: 400, Message: "Invalid schema for response_format '" + f.Format.Name + "': " + msg})
			return
		}
	}
	reply := s.next()
	s.record(req)
	if fail(w, "responses", reply) {
		return
	}
	id := s.id("resp_")
	msgID := s.id("msg_")
	usage := map[string]any{
		"input_tokens":          reply.InputTokens,
		"input_tokens_details":  map[string]any{"cached_tokens": reply.CachedTokens},
		"output_tokens":         reply.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": 0},
		"total_tokens":          reply.InputTokens + reply.OutputTokens,
	}
	item := map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}},
	}
	events := []event{
		{"response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": id, "object": "response", "status": "in_progress", "model": b.Model}}},
		{"response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "status": "in_progress", "content": []any{},
		}}},
		{"response.output_text.delta", map[string]any{"type": "response.output_text.delta", "item_id": msgID, "output_index": 0, "content_index": 0, "delta": reply.Text}},
		{"response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item}},
		{"response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
			"id": id, "object": "response", "status": "completed", "model": b.Model, "output": []any{item}, "usage": usage,
		}}},
	}
	cutAfter := 0
	if reply.Cut {
		cutAfter = 3
	}
	sse(w, events, cutAfter)
}

// chatBody is the part of a Chat Completions request the server reads.
type chatBody struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
}

// chat answers Chat Completions, as one JSON object or a stream of chunks.
func (s *Server) chat(w http.ResponseWriter, r *http.Request, req Request) {
	var b chatBody
	if err := json.Unmarshal(req.Body, &b); err != nil {
		s.record(req)
		fail(w, "chat", Reply{Status: 400, Message: "body is not JSON: " + err.Error()})
		return
	}
	req.Model, req.Stream, req.Turn = b.Model, b.Stream, true
	var system []string
	for _, m := range b.Messages {
		t := textOf(m.Content)
		if t == "" {
			continue
		}
		req.Texts = append(req.Texts, t)
		switch m.Role {
		case "user":
			req.Prompt = t
		case "system", "developer":
			system = append(system, t)
		}
	}
	req.System = strings.Join(system, "\n")
	reply := s.next()
	s.record(req)
	if fail(w, "chat", reply) {
		return
	}
	finish := reply.StopReason
	if finish == "" {
		finish = "stop"
	}
	usage := map[string]any{
		"prompt_tokens":         reply.InputTokens,
		"completion_tokens":     reply.OutputTokens,
		"total_tokens":          reply.InputTokens + reply.OutputTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": reply.CachedTokens},
	}
	id := s.id("chatcmpl-")
	created := time.Now().Unix()
	if !b.Stream {
		msg := map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": b.Model,
			"choices": []any{map[string]any{
				"index":         0,
				"message":       map[string]any{"role": "assistant", "content": reply.Text},
				"finish_reason": finish,
			}},
			"usage": usage,
		}
		if reply.Cut {
			cut(w, marshal(msg))
			return
		}
		writeJSON(w, 200, msg)
		return
	}
	chunk := func(delta map[string]any, finish any) event {
		return event{"", map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": b.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}}
	}
	events := []event{
		chunk(map[string]any{"role": "assistant", "content": ""}, nil),
		chunk(map[string]any{"content": reply.Text}, nil),
		chunk(map[string]any{}, finish),
		{"", map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": b.Model, "choices": []any{}, "usage": usage}},
		{"", rawData("[DONE]")},
	}
	cutAfter := 0
	if reply.Cut {
		cutAfter = 2
	}
	sse(w, events, cutAfter)
}

// strictProblem returns what OpenAI's strict mode would refuse in schema,
// in its words, or "" when it would take it: every object must set
// additionalProperties to false and require every property.
func strictProblem(schema map[string]any, context string) string {
	if schema["type"] == "object" || schema["properties"] != nil {
		if ap, ok := schema["additionalProperties"].(bool); !ok || ap {
			return "In context=" + context + ", 'additionalProperties' is required to be supplied and to be false."
		}
		props, _ := schema["properties"].(map[string]any)
		req := map[string]bool{}
		if list, ok := schema["required"].([]any); ok {
			for _, n := range list {
				if n, ok := n.(string); ok {
					req[n] = true
				}
			}
		}
		for name, p := range props {
			if !req[name] {
				return "In context=" + context + ", 'required' is required to be supplied and to be an array including every key in properties. Missing '" + name + "'."
			}
			if ps, ok := p.(map[string]any); ok {
				if msg := strictProblem(ps, "('properties', '"+name+"')"); msg != "" {
					return msg
				}
			}
		}
	}
	if items, ok := schema["items"].(map[string]any); ok {
		return strictProblem(items, "('items',)")
	}
	return ""
}
