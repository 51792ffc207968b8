package lsp

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCompletionFromSchemas: at the start of an item of a body, the
// completion offers what lang's schema of that body takes, half-typed
// file or not.
func TestCompletionFromSchemas(t *testing.T) {
	root := project(t, nil)
	c := initialized(t, root)
	text := `playbook "p" {}

step "a" {
  ret
  gate {
    rule "again" {
      
    }
  }
  shell {
    command = [
      
    ]
  }
  locals {
    
  }
}
`
	uri := pathURI(filepath.Join(root, "main.hcl"))
	open(c, uri, text)
	c.diagnostics(uri)
	complete := func(uri string, line, char int) []string {
		t.Helper()
		r := c.request("textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": Position{line, char}})
		var out []string
		for _, it := range r["result"].([]any) {
			out = append(out, it.(map[string]any)["label"].(string))
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		line, char int
		want, not  []string
	}{
		{"top level", 1, 0, []string{"step", "agent", "input", "prompt", "type", "budget"}, []string{"when", "test"}},
		{"step body", 3, 5, []string{"returns", "when", "gate", "shell", "agent", "check"}, []string{"goto", "command"}},
		{"gate rule", 6, 6, []string{"when", "goto", "set", "max", "on_exhausted"}, []string{"returns", "rule"}},
		{"list in a shell block", 11, 6, nil, []string{"command", "script"}},
		{"locals", 15, 4, nil, []string{"returns", "step"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := complete(uri, tc.line, tc.char)
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("completion lacks %q: %v", w, got)
				}
			}
			for _, n := range tc.not {
				if slices.Contains(got, n) {
					t.Errorf("completion offers %q: %v", n, got)
				}
			}
		})
	}
	// A test file's top level takes test and mock blocks.
	testURI := pathURI(filepath.Join(root, "main_test.hcl"))
	open(c, testURI, "test \"t\" {\n  \n}\n")
	c.diagnostics(testURI)
	if got := strings.Join(complete(testURI, 1, 2), ","); !strings.Contains(got, "expect") || !strings.Contains(got, "mock") || strings.Contains(got, "returns") {
		t.Errorf("completion in a test block: %s", got)
	}
}
