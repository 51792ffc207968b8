package lsp

import (
	"fmt"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// overrideHover says, for the name of an attribute of a playbook that
// extends another, what it overrides upstream; "" when the cursor is on
// no such attribute or it overrides nothing.
func overrideHover(pb *lang.Playbook, path string, off int) string {
	if len(pb.Extends) == 0 {
		return ""
	}
	addr, ok := attrAt(pb.Body(), "", path, off)
	if !ok {
		return ""
	}
	origins, _, err := pb.Explain(addr)
	if err != nil || len(origins) != 1 || len(origins[0].Overrode) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "`%s` overrides:", addr)
	for _, d := range origins[0].Overrode {
		fmt.Fprintf(&b, "\n- %s\n```hcl\n%s\n```", d.Range, d.Text)
	}
	return b.String()
}

// attrAt is the address of the attribute of the effective body whose name
// in the file path holds byte offset off.
func attrAt(body *hclsyntax.Body, prefix, path string, off int) (string, bool) {
	for _, a := range body.Attributes {
		r := a.NameRange
		if r.Filename == path && r.Start.Byte <= off && off <= r.End.Byte {
			return lang.AttributeAddress(prefix, a.Name), true
		}
	}
	for _, b := range body.Blocks {
		if addr, ok := attrAt(b.Body, lang.BlockAddress(prefix, b.Type, b.Labels...), path, off); ok {
			return addr, true
		}
	}
	return "", false
}
