package fakeserver

import (
	"encoding/json"
	"net/http"
	"strings"
)

// geminiBody is the part of a generateContent request the server reads.
type geminiBody struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts any    `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts any `json:"parts"`
	} `json:"systemInstruction"`
}

// gemini answers generateContent (one JSON object) and
// streamGenerateContent (server-sent events with ?alt=sse, else a JSON
// array). The model is the path segment before the colon.
func (s *Server) gemini(w http.ResponseWriter, r *http.Request, req Request) {
	var b geminiBody
	if err := json.Unmarshal(req.Body, &b); err != nil {
		s.record(req)
		fail(w, "gemini", Reply{Status: 400, Message: "body is not JSON: " + err.Error()})
		return
	}
	seg := r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:]
	model, method, _ := strings.Cut(seg, ":")
	req.Model, req.Turn = model, true
	req.Stream = method == "streamGenerateContent"
	if b.SystemInstruction != nil {
		req.System = textOf(b.SystemInstruction.Parts)
	}
	for _, c := range b.Contents {
		t := textOf(c.Parts)
		if t == "" {
			continue
		}
		req.Texts = append(req.Texts, t)
		if c.Role == "user" || c.Role == "" {
			req.Prompt = t
		}
	}
	reply := s.next()
	s.record(req)
	if fail(w, "gemini", reply) {
		return
	}
	finish := reply.StopReason
	if finish == "" {
		finish = "STOP"
	}
	usage := map[string]any{
		"promptTokenCount":        reply.InputTokens,
		"candidatesTokenCount":    reply.OutputTokens,
		"totalTokenCount":         reply.InputTokens + reply.OutputTokens,
		"cachedContentTokenCount": reply.CachedTokens,
	}
	answer := map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": reply.Text}}},
			"finishReason": finish,
			"index":        0,
		}},
		"usageMetadata": usage,
		"modelVersion":  model,
		"responseId":    s.id("resp"),
	}
	switch {
	case !req.Stream && reply.Cut:
		cut(w, marshal(answer))
	case !req.Stream:
		writeJSON(w, 200, answer)
	case r.URL.Query().Get("alt") == "sse":
		// The text comes first and the finish with the usage last, as
		// Gemini streams it; a cut falls between them.
		first := map[string]any{
			"candidates": []any{map[string]any{
				"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": reply.Text}}},
				"index":   0,
			}},
			"modelVersion": model,
		}
		last := map[string]any{
			"candidates": []any{map[string]any{
				"content":      map[string]any{"role": "model", "parts": []any{map[string]any{"text": ""}}},
				"finishReason": finish,
				"index":        0,
			}},
			"usageMetadata": usage,
			"modelVersion":  model,
		}
		cutAfter := 0
		if reply.Cut {
			cutAfter = 1
		}
		sse(w, []event{{"", first}, {"", last}}, cutAfter)
	default:
		data := marshal([]any{answer})
		if reply.Cut {
			cut(w, data)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(data)
	}
}
