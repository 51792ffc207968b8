package lang

import (
	"fmt"
	"path"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

var documentSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "path", Required: true},
		{Name: "backup"},
		{Name: "archive"},
		{Name: "content", Required: true},
	},
}

// A Document is a JSON file the playbook's protocol keeps (the
// orchestrator's .autopilot/state.json, the conductor's task table): a projection of the
// run's records that the interpreter writes at every checkpoint. It is
// never read back; apl's own state is what a run resumes from.
type Document struct {
	Name string
	// Path is where the document goes, relative to the project
	// directory: a string template evaluated once, when the run starts
	// (so uuid() names one file for the whole run).
	Path hcl.Expression
	// Backup is where the previous version goes, evaluated with Path;
	// nil means PATH.bak, and "" keeps none.
	Backup hcl.Expression
	// Archive, when set, is where the document moves once the run has
	// ended well, evaluated then.
	Archive hcl.Expression
	// Content is the document's value, evaluated at every checkpoint.
	Content   hcl.Expression
	DeclRange hcl.Range
}

// decodeDocumentBlock reads a document "NAME" block.
func (l *loader) decodeDocumentBlock(b *hcl.Block) hcl.Diagnostics {
	diags := validName("document", b)
	name := b.Labels[0]
	for _, d := range l.pb.Documents {
		if d.Name == name {
			diags = append(diags, duplicate("document", name, d.DeclRange, b))
		}
	}
	content, d := b.Body.Content(documentSchema)
	diags = append(diags, d...)
	doc := &Document{Name: name, DeclRange: b.DefRange}
	for _, p := range []struct {
		name string
		dst  *hcl.Expression
	}{{"path", &doc.Path}, {"backup", &doc.Backup}, {"archive", &doc.Archive}} {
		a := content.Attributes[p.name]
		if a == nil {
			continue
		}
		*p.dst = a.Expr
		l.deferRefs(a.Expr, refScope{vars: true, what: "a document's " + p.name})
		diags = append(diags, checkDocumentPath(a, p.name == "backup")...)
		if v, whole := literalPrefix(a.Expr); whole && l.pb.StatePath != "" && path.Clean(v) == path.Clean(l.pb.StatePath) {
			diags = append(diags, errDiag("Document path is the state file",
				fmt.Sprintf("%q is where the state block keeps apl's own state; a document is written beside it, not over it. Choose another %s.", v, p.name), a.Expr.Range()))
		}
	}
	if a := content.Attributes["content"]; a != nil {
		doc.Content = a.Expr
		l.deferRefs(a.Expr, refScope{vars: true, what: "a document's content"})
	}
	l.pb.Documents = append(l.pb.Documents, doc)
	return diags
}

// checkDocumentPath refuses a path that leaves the project as far as its
// text tells: an absolute path, or one whose directory climbs out with
// "..". Only the literal text before the first interpolation is known when
// the playbook loads; the interpreter checks the whole path again when it
// evaluates it. An empty backup means none.
func checkDocumentPath(a *hcl.Attribute, mayBeEmpty bool) hcl.Diagnostics {
	prefix, whole := literalPrefix(a.Expr)
	if whole && prefix == "" {
		if mayBeEmpty {
			return nil
		}
		return hcl.Diagnostics{errDiag("Invalid document path", a.Name+" must not be empty.", a.Expr.Range())}
	}
	if strings.HasPrefix(prefix, "/") || strings.HasPrefix(prefix, `\`) {
		return hcl.Diagnostics{errDiag("Document path outside the project",
			fmt.Sprintf("%q is absolute; a document's %s is relative to the project directory, which is where apl may write.", prefix, a.Name), a.Expr.Range())}
	}
	dir := prefix
	if !whole {
		// Only the directories the prefix completes are known.
		dir = dir[:strings.LastIndex(dir, "/")+1]
	}
	if dir != "" && escapes(dir) {
		return hcl.Diagnostics{errDiag("Document path outside the project",
			fmt.Sprintf("%q climbs out of the project directory with \"..\"; a document's %s must stay inside the project.", prefix, a.Name), a.Expr.Range())}
	}
	return nil
}

// escapes reports whether a relative slash path leads above its start.
func escapes(p string) bool {
	c := path.Clean(p)
	return c == ".." || strings.HasPrefix(c, "../")
}

// literalPrefix is the text an expression's value certainly starts with:
// the whole string for a constant (whole is true), the literal text before
// the first interpolation of a template, "" otherwise.
func literalPrefix(e hcl.Expression) (prefix string, whole bool) {
	if len(e.Variables()) == 0 && !hasCall(e) {
		if v, d := e.Value(nil); !d.HasErrors() && v.Type() == cty.String && v.IsKnown() && !v.IsNull() {
			return v.AsString(), true
		}
	}
	t, ok := e.(*hclsyntax.TemplateExpr)
	if !ok {
		return "", false
	}
	var b strings.Builder
	for _, part := range t.Parts {
		lit, ok := part.(*hclsyntax.LiteralValueExpr)
		if !ok || lit.Val.Type() != cty.String {
			break
		}
		b.WriteString(lit.Val.AsString())
	}
	return b.String(), false
}

// hasCall reports whether an expression calls a function anywhere.
func hasCall(e hcl.Expression) bool {
	node, ok := e.(hclsyntax.Node)
	if !ok {
		return false
	}
	found := false
	hclsyntax.VisitAll(node, func(n hclsyntax.Node) hcl.Diagnostics {
		if _, ok := n.(*hclsyntax.FunctionCallExpr); ok {
			found = true
		}
		return nil
	})
	return found
}
