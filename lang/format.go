package lang

import (
	"bytes"
	"fmt"
	"strconv"
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
	text, heredocs := setAsideHeredocs(text)
	return heredocs.restore(formatHCL(text)), diags
}

// heredocs are heredocs that setAsideHeredocs took out of a file, each
// with the placeholder that stands for it.
type heredocs struct {
	placeholders []string
	texts        [][]byte
}

// setAsideHeredocs replaces each heredoc holding a multi-line
// interpolation with a one-line placeholder, so that hclwrite formats
// the file around it as it formats any other heredoc. hclwrite counts the
// brackets of a line only up to the heredoc's opening, but counts the
// closing ones of the line the interpolation ends on: everything after
// such a heredoc would lose indentation. The heredoc is kept as written.
func setAsideHeredocs(src []byte) ([]byte, heredocs) {
	var hd heredocs
	toks, diags := hclsyntax.LexConfig(src, "", hcl.InitialPos)
	if diags.HasErrors() {
		return src, hd
	}
	marker := "apl-fmt-heredoc-"
	for bytes.Contains(src, []byte(marker)) {
		marker += "x"
	}
	var out bytes.Buffer
	last := 0
	for i := 0; i < len(toks); i++ {
		if toks[i].Type != hclsyntax.TokenOHeredoc {
			continue
		}
		depth, multiline, j := 0, false, i
		for ; j < len(toks); j++ {
			switch toks[j].Type {
			case hclsyntax.TokenOHeredoc:
				depth++
			case hclsyntax.TokenCHeredoc:
				depth--
			case hclsyntax.TokenNewline:
				multiline = true
			}
			if depth == 0 {
				break
			}
		}
		if j == len(toks) {
			break
		}
		if multiline {
			start, end := toks[i].Range.Start.Byte, toks[j].Range.End.Byte
			placeholder := fmt.Sprintf("%q", marker+strconv.Itoa(len(hd.texts)))
			out.Write(src[last:start])
			out.WriteString(placeholder)
			hd.placeholders = append(hd.placeholders, placeholder)
			hd.texts = append(hd.texts, src[start:end])
			last = end
		}
		i = j
	}
	if len(hd.texts) == 0 {
		return src, hd
	}
	out.Write(src[last:])
	return out.Bytes(), hd
}

// restore puts the heredocs back in place of their placeholders.
func (hd heredocs) restore(src []byte) []byte {
	for i, p := range hd.placeholders {
		src = bytes.Replace(src, []byte(p), hd.texts[i], 1)
	}
	return src
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
