package lang

import (
	"bytes"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns a playbook or test file in the canonical layout, as apl
// fmt writes it: ParseConfig's text (one-line blocks holding a nested
// block split over lines) formatted by hclwrite. A file that does not
// parse is returned as it is, with the diagnostics.
func Format(src []byte, filename string) ([]byte, hcl.Diagnostics) {
	text, _, diags := ParseConfig(src, filename)
	if diags.HasErrors() {
		return src, diags
	}
	return formatHCL(text), diags
}

// formatHCL formats a file as hclwrite does, except that the padding just
// inside a template directive or interpolation is kept as written:
// hclwrite squeezes %{~ if x } to %{~if x}, but both are common and read
// well, so apl fmt accepts either. The expression inside is formatted.
func formatHCL(src []byte) []byte {
	out := hclwrite.Format(src)
	before, d1 := hclsyntax.LexConfig(src, "", hcl.InitialPos)
	after, d2 := hclsyntax.LexConfig(out, "", hcl.InitialPos)
	if d1.HasErrors() || d2.HasErrors() || len(before) != len(after) {
		return out
	}
	var buf bytes.Buffer
	last := 0 // end of what of out is copied
	for i := 1; i < len(after); i++ {
		prev, tok := after[i-1], after[i]
		opener := prev.Type == hclsyntax.TokenTemplateControl || prev.Type == hclsyntax.TokenTemplateInterp
		if !opener && tok.Type != hclsyntax.TokenTemplateSeqEnd {
			continue
		}
		if before[i].Type != tok.Type || before[i-1].Type != prev.Type {
			return out
		}
		gap := src[before[i-1].Range.End.Byte:before[i].Range.Start.Byte]
		if bytes.ContainsAny(gap, "\n") || strings.Trim(string(gap), " ") != "" {
			continue
		}
		buf.Write(out[last:prev.Range.End.Byte])
		buf.Write(gap)
		last = tok.Range.Start.Byte
	}
	buf.Write(out[last:])
	return buf.Bytes()
}
