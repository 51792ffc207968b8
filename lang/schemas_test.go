package lang

import (
	"slices"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// TestEveryBlockHasASchema: every block type that a schema reachable from
// a file takes has the schema of its body (nestedSchemas) or takes any
// attribute (freeBodies), so that an editor offers what each body takes.
// A new block type fails here until it is added to one of them.
func TestEveryBlockHasASchema(t *testing.T) {
	for _, test := range []bool{false, true} {
		var walk func(path []string)
		seen := map[string]bool{}
		walk = func(path []string) {
			s := bodySchema(test, path)
			for _, b := range s.Blocks {
				p := append(append([]string{}, path...), b.Type)
				key := ""
				for _, x := range p {
					key += "/" + x
				}
				if seen[key] || len(p) > 6 {
					continue
				}
				seen[key] = true
				if bodySchema(test, p) == nil && !freeBodies[b.Type] {
					t.Errorf("block %s has no schema: add it to nestedSchemas (or freeBodies) in lang/schemas.go", key)
					continue
				}
				if !freeBodies[b.Type] {
					walk(p)
				}
			}
		}
		walk(nil)
	}
	if s := BodySchema(false, "step", "gate", "rule"); s != ruleSchema {
		t.Errorf("step/gate/rule: %v", s)
	}
	if s := BodySchema(false, "step"); !slices.ContainsFunc(s.Attributes, func(a hcl.AttributeSchema) bool { return a.Name == "use" }) {
		t.Errorf("a step's body takes no use: %v", s)
	}
	if s := BodySchema(false, "template"); !slices.ContainsFunc(s.Blocks, func(b hcl.BlockHeaderSchema) bool { return b.Type == "param" }) {
		t.Errorf("a template's body takes no param: %v", s)
	}
	if s := BodySchema(false, "step", "nope"); s != nil {
		t.Errorf("an unknown block has a schema: %v", s)
	}
}
