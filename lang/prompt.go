package lang

import (
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

var promptSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "template", Required: true},
		{Name: "optional"},
	},
}

// Prompt is a named prompt template.
type Prompt struct {
	Name        string
	Description string
	Template    hcl.Expression
	// Optional names the values the template may render empty (the
	// optional attribute): inputs.remediation_feedback, vars.issues.
	Optional  []hcl.Traversal
	DeclRange hcl.Range
}

// decodePromptBlock reads a prompt template. `template = file("x.md")`
// reads the file now, relative to the playbook, and parses it as a
// template, so that its references are checked like inline ones.
func (l *loader) decodePromptBlock(b *hcl.Block) hcl.Diagnostics {
	diags := validName("prompt", b)
	name := b.Labels[0]
	if prev := l.pb.Prompts[name]; prev != nil {
		return append(diags, duplicate("prompt", name, prev.DeclRange, b))
	}
	p := &Prompt{Name: name, DeclRange: b.DefRange}
	l.pb.Prompts[name] = p
	content, d := b.Body.Content(promptSchema)
	diags = append(diags, d...)
	if a := content.Attributes["description"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		p.Description = v
	}
	a := content.Attributes["template"]
	if a == nil {
		return diags
	}
	tmpl, d := l.templateExpr(a.Expr)
	diags = append(diags, d...)
	p.Template = tmpl
	scope := refScope{vars: true, what: "a prompt template"}
	l.deferRefs(tmpl, scope)
	if a := content.Attributes["optional"]; a != nil {
		opt, d := l.decodeOptional(a, tmpl, scope)
		diags = append(diags, d...)
		p.Optional = opt
	}
	return diags
}

// templateExpr returns expr itself, or for file("path") the parsed
// contents of that file.
func (l *loader) templateExpr(expr hcl.Expression) (hcl.Expression, hcl.Diagnostics) {
	call, ok := expr.(*hclsyntax.FunctionCallExpr)
	if !ok || call.Name != "file" {
		return expr, nil
	}
	if call.Range().End.Line == 0 {
		// A call cut short by a syntax error, which the parser reported.
		return expr, nil
	}
	if len(call.Args) != 1 {
		return nil, hcl.Diagnostics{errDiag("Invalid file call", "file takes one argument: a path relative to the playbook.", expr.Range())}
	}
	pv, d := call.Args[0].Value(nil)
	if d.HasErrors() || pv.IsNull() || !pv.Type().Equals(ctyString) {
		return nil, hcl.Diagnostics{errDiag("Invalid file call", "The path given to file must be a constant string.", call.Args[0].Range())}
	}
	rel := pv.AsString()
	from := call.Args[0].Range().Filename
	dir := l.dirOf(from)
	src, name, err := l.readRelative(dir, rel)
	if err != nil {
		return nil, hcl.Diagnostics{pathDiag("Cannot read prompt file", err, call.Args[0].Range())}
	}
	l.addSource(name, src, dir, l.fileDepth[from])
	tmpl, diags := l.ld.Parses.template(src, name)
	return tmpl, diags
}

// readRelative reads a file of the playbook in dir, refusing paths that
// leave that directory as written, or the project once symlinks are
// resolved.
func (l *loader) readRelative(dir, rel string) ([]byte, string, error) {
	if err := checkPlaybookPath(rel); err != nil {
		return nil, "", err
	}
	if filepath.IsAbs(rel) || path.Clean(filepath.ToSlash(rel)) == ".." || strings.HasPrefix(path.Clean(filepath.ToSlash(rel)), "../") {
		return nil, "", &PathError{rel, "must be relative to the playbook and stay inside its directory"}
	}
	if name, ok := strings.CutPrefix(dir, StdlibPrefix); ok && l.stdlib != nil {
		p := path.Join(name, filepath.ToSlash(rel))
		b, err := fs.ReadFile(l.stdlib, p)
		return b, dir + "/" + filepath.ToSlash(rel), err
	}
	p := filepath.Join(dir, rel)
	if abs, err := filepath.Abs(p); err == nil {
		if b, ok := l.ld.Files[abs]; ok {
			return b, p, nil
		}
	}
	b, err := l.project().ReadFile(p)
	return b, p, asWritten(err, p, rel)
}
