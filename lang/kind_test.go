package lang

import (
	"testing"

	"github.com/expr-lang/expr/types"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestKindNamesNoGoTypes: messages name what a condition gave in the
// language's words, never a Go type such as []interface {}.
func TestKindNamesNoGoTypes(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{"x", "a string"},
		{1, "a number"},
		{1.5, "a number"},
		{true, "a bool"},
		{[]any{1}, "a list"},
		{map[string]any{}, "an object"},
	}
	for _, tt := range tests {
		if got := Kind(tt.v); got != tt.want {
			t.Errorf("Kind(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// TestConditionNotBoolMessage: a condition that yields something other
// than a bool says what it gave in the language's words.
func TestConditionNotBoolMessage(t *testing.T) {
	holder, d := hclsyntax.ParseExpression([]byte(`"[1, 2]"`), "t.hcl", hcl.InitialPos)
	if d.HasErrors() {
		t.Fatal(d)
	}
	c, diags := compileExpr("[1, 2]", holder, newCondEnv(types.Map{}), false)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, err := c.Eval(map[string]any{})
	if err == nil || err.Error() != "the condition gave a list, not true or false" {
		t.Errorf("err = %v", err)
	}
}
