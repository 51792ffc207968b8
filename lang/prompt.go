package lang

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"
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
	from := call.Args[0].Range().Filename
	k := promptKey{l.dirOf(from), pv.AsString()}
	f, ok := l.prompts[k]
	if ok {
		delete(l.prompts, k) // a second block naming the file parses it again, as without prefetching
	} else {
		f = l.readTemplate(k)
	}
	if f.err != nil {
		return nil, hcl.Diagnostics{pathDiag("Cannot read prompt file", f.err, call.Args[0].Range())}
	}
	l.addSource(f.name, f.src, k.dir, l.fileDepth[from])
	return f.tmpl, f.diags
}

// promptKey names a prompt file as a file call does: the directory of the
// playbook that calls it, and the path written.
type promptKey struct{ dir, rel string }

// promptFile is a prompt file read and parsed as a template.
type promptFile struct {
	src   []byte
	name  string
	err   error
	tmpl  hclsyntax.Expression
	diags hcl.Diagnostics
}

// readTemplate reads and parses the prompt file k names.
func (l *loader) readTemplate(k promptKey) promptFile {
	src, name, err := l.readRelative(k.dir, k.rel)
	if err != nil {
		return promptFile{err: err}
	}
	tmpl, diags := l.ld.Parses.template(src, name)
	return promptFile{src: src, name: name, tmpl: tmpl, diags: diags}
}

// minPrefetchTemplates is how many prompt files prefetchTemplates reads
// ahead at least: one gains nothing. (A variable, so that a test can load
// without reading ahead.)
var minPrefetchTemplates = 2

// prefetchTemplates reads and parses the prompt files that the prompt
// blocks among blocks name (template = file("path")), on as many
// goroutines as there are CPUs (GOMAXPROCS), so that decoding the blocks
// one after the other finds them ready: prompts are most of a playbook's
// text, and each parses on its own. It only reads; what a file call
// reports, and when, is templateExpr's.
func (l *loader) prefetchTemplates(blocks hclsyntax.Blocks) {
	var todo []promptKey
	for _, b := range blocks {
		a := b.Body.Attributes["template"]
		if b.Type != "prompt" || a == nil {
			continue
		}
		call, ok := a.Expr.(*hclsyntax.FunctionCallExpr)
		if !ok || call.Name != "file" || len(call.Args) != 1 || call.Range().End.Line == 0 {
			continue
		}
		pv, d := call.Args[0].Value(nil)
		if d.HasErrors() || pv.IsNull() || !pv.Type().Equals(ctyString) {
			continue
		}
		k := promptKey{l.dirOf(call.Args[0].Range().Filename), pv.AsString()}
		if _, ok := l.prompts[k]; !ok && !slices.Contains(todo, k) {
			todo = append(todo, k)
		}
	}
	if len(todo) < minPrefetchTemplates {
		return // read as its block is decoded
	}
	l.project() // set before the goroutines read it
	files := make([]promptFile, len(todo))
	parallel(len(todo), len(todo), func(i int) { files[i] = l.readTemplate(todo[i]) })
	if l.prompts == nil {
		l.prompts = make(map[promptKey]promptFile, len(todo))
	}
	for i, k := range todo {
		l.prompts[k] = files[i]
	}
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
