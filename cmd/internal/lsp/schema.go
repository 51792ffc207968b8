package lsp

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// Completion item kinds of the schema's names.
const (
	kindProperty = 10
	kindStruct   = 22
)

// blockPath is the path of block types whose body holds byte offset off
// of src (step, gate, rule), read from the tokens before it so that a
// half-typed file has one too; ok is false inside an expression's braces
// (an object), brackets, parentheses, a heredoc or an interpolation, or
// when the tokens say nothing sure.
func blockPath(src []byte, off int) (path []string, ok bool) {
	tokens, _ := hclsyntax.LexConfig(src[:off], "", hcl.InitialPos)
	var stack []string // block types, "" for an object's braces
	start := 0         // the first token of the item being read
	for i, tok := range tokens {
		switch tok.Type {
		case hclsyntax.TokenNewline:
			start = i + 1
		case hclsyntax.TokenOBrace:
			stack = append(stack, blockHeader(tokens[start:i]))
			start = i + 1
		case hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenOHeredoc, hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			stack = append(stack, "")
		case hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
			if len(stack) == 0 {
				return nil, false
			}
			stack = stack[:len(stack)-1]
		case hclsyntax.TokenCBrace:
			if len(stack) == 0 {
				return nil, false
			}
			stack = stack[:len(stack)-1]
			start = i + 1
		}
	}
	for _, t := range stack {
		if t == "" {
			return nil, false
		}
	}
	return stack, true
}

// blockHeader is the type of the block whose header is toks (the tokens
// of its line before "{"), "" when they are no block header.
func blockHeader(toks hclsyntax.Tokens) string {
	if len(toks) == 0 || toks[0].Type != hclsyntax.TokenIdent {
		return ""
	}
	for _, t := range toks[1:] {
		switch t.Type {
		case hclsyntax.TokenIdent, hclsyntax.TokenOQuote, hclsyntax.TokenQuotedLit, hclsyntax.TokenCQuote:
		default:
			return ""
		}
	}
	return string(toks[0].Bytes)
}

// schemaCompletion offers the attributes and blocks the body at offset
// off of a document takes, when the cursor starts an item of it (nothing
// but a name before it on its line); ok is false elsewhere.
func schemaCompletion(d *document, off int) (items []CompletionItem, ok bool) {
	ls := strings.LastIndexByte(string(d.text[:off]), '\n') + 1
	word := strings.TrimLeft(string(d.text[ls:off]), " \t")
	for i := 0; i < len(word); i++ {
		if !isNameByte(word[i]) {
			return nil, false
		}
	}
	path, ok := blockPath(d.text, ls)
	if !ok {
		return nil, false
	}
	test := isTestFile(d.path) || filepath.Base(filepath.Dir(d.path)) == "tests"
	schema := lang.BodySchema(test, path...)
	if schema == nil {
		return []CompletionItem{}, len(path) > 0 // a body that takes any name
	}
	items = []CompletionItem{}
	for _, a := range schema.Attributes {
		detail := "attribute"
		if a.Required {
			detail += ", required"
		}
		items = append(items, CompletionItem{Label: a.Name, Kind: kindProperty, Detail: detail})
	}
	for _, b := range schema.Blocks {
		header := b.Type
		for _, l := range b.LabelNames {
			header += fmt.Sprintf(" %q", l)
		}
		items = append(items, CompletionItem{Label: b.Type, Kind: kindStruct, Detail: "block: " + header + " { }"})
	}
	return items, true
}
