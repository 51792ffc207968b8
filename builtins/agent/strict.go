package agent

import (
	"maps"
	"slices"
)

// StrictSchema rewrites a schema made by Schema into the subset OpenAI's
// Structured Outputs accepts in strict mode, which codex always uses for
// --output-schema: every object closed (additionalProperties false) with
// every property required, an optional property made nullable instead,
// and no uniqueItems. Decode reads null for an optional attribute as
// absent, so the answers mean the same.
//
// ok is false when the schema holds something strict mode cannot say: a
// map (an object with free-form keys), a tuple (prefixItems) or an any
// (the empty schema). The caller should then not ask for structured output
// at all; Decode still checks the answer.
func StrictSchema(schema map[string]any) (strict map[string]any, ok bool) {
	return strictNode(schema)
}

func strictNode(s map[string]any) (map[string]any, bool) {
	if _, tuple := s["prefixItems"]; tuple {
		return nil, false
	}
	switch s["type"] {
	case "string", "number", "boolean", "integer", "null":
		return maps.Clone(s), true
	case "array":
		items, isMap := s["items"].(map[string]any)
		if !isMap {
			return nil, false
		}
		si, ok := strictNode(items)
		if !ok {
			return nil, false
		}
		out := maps.Clone(s)
		// Strict mode rejects uniqueItems; a set dedupes on decode anyway.
		delete(out, "uniqueItems")
		out["items"] = si
		return out, true
	case "object":
		if ap, free := s["additionalProperties"].(map[string]any); free && ap != nil {
			return nil, false // a map: its keys cannot be listed
		}
		props, _ := s["properties"].(map[string]any)
		required := map[string]bool{}
		switch r := s["required"].(type) {
		case []string:
			for _, n := range r {
				required[n] = true
			}
		case []any:
			for _, n := range r {
				if n, ok := n.(string); ok {
					required[n] = true
				}
			}
		}
		// Never null: strict mode wants a list, even an empty one.
		names := append([]string{}, slices.Sorted(maps.Keys(props))...)
		outProps := make(map[string]any, len(props))
		for _, name := range names {
			ps, isMap := props[name].(map[string]any)
			if !isMap {
				return nil, false
			}
			sp, ok := strictNode(ps)
			if !ok {
				return nil, false
			}
			if !required[name] {
				sp = nullable(sp)
			}
			outProps[name] = sp
		}
		out := maps.Clone(s)
		out["properties"] = outProps
		out["required"] = names
		out["additionalProperties"] = false
		return out, true
	}
	return nil, false
}

// nullable lets a schema also accept null: a type name becomes a pair of
// type names, as OpenAI's documentation shows for optional fields.
func nullable(s map[string]any) map[string]any {
	out := maps.Clone(s)
	if t, ok := s["type"].(string); ok {
		out["type"] = []string{t, "null"}
		return out
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}
