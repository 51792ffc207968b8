package lang

import (
	"fmt"
	"maps"
	"slices"

	"github.com/expr-lang/expr/ast"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// A template is a step written once and used by several steps:
//
//	template "debug" {
//	  param "issues" { type = list(string) }
//	  agent "debugger" { prompt = prompt.debug, vars = { issues = param.issues } }
//	  gate { rule "gave_up" { when = "self.error_kind == 'budget'" ... } }
//	}
//	step "debug_tests" {
//	  use  = template.debug
//	  with = { issues = local.test_failures }
//	}
//
// A step that says use = template.NAME is the template's body with the
// step's own body over it, attribute by attribute and block by block, as
// an extends fork's block is over its upstream's (merge); an action block
// of the template's kind overrides it under its own label (another agent,
// another builtin). The step is then an ordinary step: every later pass,
// the graph, plan, diff and explain see it, with each attribute's range
// in the file that wrote it, the template's or the step's.
//
// Inside the instance, param.NAME reads an argument and self reads the
// step itself (steps.INSTANCE). Both are rewritten when the step is
// expanded: an argument is one of the step's own locals (evaluated when
// the step starts, after its when, as every step local is), under a name
// no locals block can declare (argLocal), so param.NAME becomes
// local["param.NAME"], and self becomes steps.INSTANCE. HCL expressions are
// parsed again from their source for each instance, so that instances
// share no syntax tree; conditions are rewritten when they compile
// (instancePatch), with their positions unchanged.

// The names a template's instance reads its arguments and itself by.
const (
	RootParam = "param"
	RootSelf  = "self"
)

// Template is a step template of the playbook (template "NAME" { ... }).
type Template struct {
	Name        string
	Description string
	Params      []*Param
	// Uses are the steps that use the template, in the order the
	// playbook declares them.
	Uses      []string
	DeclRange hcl.Range
	// Body is the template's body as the playbook wrote it (merged over
	// an upstream's template of the same name in a fork).
	Body *hclsyntax.Body

	typeAttr map[string]*hcl.Attribute // each param's type attribute, decoded once types are
}

// Param is a parameter of a template.
type Param struct {
	Name        string
	Description string
	// Type is the declared type; cty.DynamicPseudoType when the param
	// declares none. An argument must convert to it.
	Type cty.Type
	// Default is given to an instance that passes no argument; nil: the
	// parameter is required.
	Default   hcl.Expression
	DeclRange hcl.Range
}

var templateParamSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "type"}, {Name: "default"}, {Name: "description"}},
}

// Template returns the template with the given name, or nil.
func (p *Playbook) Template(name string) *Template {
	for _, t := range p.Templates {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// argsBlock is the block type of an instance's arguments in its body
// (explain shows step.NAME.with.PARAM); each is the step's local
// argLocal(PARAM).
const argsBlock = "with"

// argLocal is the name of the local that holds argument param: param.NAME
// reads local["param.NAME"], a name no locals block can declare, so that
// a param never collides with a local of the playbook or the step.
func argLocal(param string) string { return RootParam + "." + param }

// instance records how a step was expanded from its template, for the
// checks once it is decoded (checkArgs).
type instance struct {
	tmpl *Template
	// args holds the range of each argument given (with), by param name.
	args map[string]hcl.Range
}

// expandTemplates reads the templates of the effective playbook body and
// returns the body with every step that uses one expanded.
func (l *loader) expandTemplates(body *hclsyntax.Body) (*hclsyntax.Body, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	byName := map[string]*Template{}
	for _, b := range body.Blocks {
		if b.Type != "template" {
			continue
		}
		t, d := l.declareTemplate(b)
		diags = append(diags, d...)
		if t == nil {
			continue
		}
		if prev := byName[t.Name]; prev != nil {
			diags = append(diags, duplicate("template", t.Name, prev.DeclRange, b.AsHCLBlock()))
			continue
		}
		byName[t.Name] = t
		l.pb.Templates = append(l.pb.Templates, t)
		l.markTemplateAttrs(t.Name, b.Body)
	}
	l.instances = map[string]*instance{}
	out := *body
	out.Blocks = make([]*hclsyntax.Block, len(body.Blocks))
	for i, b := range body.Blocks {
		switch b.Type {
		case "step", "on_failure", "finally":
			nb, d := l.expandIn(b, byName, "")
			diags = append(diags, d...)
			out.Blocks[i] = nb
		default:
			out.Blocks[i] = b
		}
	}
	return &out, diags
}

// declareTemplate reads a template's header and params; its body is
// checked as a step's, in each of its instances.
func (l *loader) declareTemplate(b *hclsyntax.Block) (*Template, hcl.Diagnostics) {
	hb := b.AsHCLBlock()
	if len(b.Labels) != 1 {
		return nil, hcl.Diagnostics{errDiag("Invalid template", `A template has one label, its name: template "NAME" { ... }.`, b.DefRange())}
	}
	diags := validName("template", hb)
	t := &Template{Name: b.Labels[0], DeclRange: b.DefRange(), Body: b.Body, typeAttr: map[string]*hcl.Attribute{}}
	if a := b.Body.Attributes["description"]; a != nil {
		v, d := constString(a.AsHCLAttribute())
		diags = append(diags, d...)
		t.Description = v
	}
	for name, a := range b.Body.Attributes {
		if name == "use" || name == "with" {
			diags = append(diags, errDiag("Template uses a template",
				fmt.Sprintf("Template %q says %s; templates do not nest. Write the shared part in one template, or use it from a step.", t.Name, name), a.NameRange))
		}
	}
	for _, pb := range b.Body.Blocks {
		switch pb.Type {
		case "step":
			diags = append(diags, errDiag("Nested step in a template",
				fmt.Sprintf("Template %q holds step %q. A template is one step: its action, checks, locals and gate; a for_each body cannot be a template yet.", t.Name, firstLabel(pb)), pb.DefRange()))
			continue
		case "param":
		default:
			continue
		}
		if len(pb.Labels) != 1 || !hclIdent(pb.Labels[0]) {
			diags = append(diags, errDiag("Invalid param", `A param has one label, its name (letters, digits and underscores): param "NAME" { ... }.`, pb.DefRange()))
			continue
		}
		p := &Param{Name: pb.Labels[0], Type: cty.DynamicPseudoType, DeclRange: pb.DefRange()}
		if prev := t.param(p.Name); prev != nil {
			diags = append(diags, duplicate("param", p.Name, prev.DeclRange, pb.AsHCLBlock()))
			continue
		}
		content, d := pb.Body.Content(templateParamSchema)
		diags = append(diags, d...)
		if a := content.Attributes["description"]; a != nil {
			v, d := constString(a)
			diags = append(diags, d...)
			p.Description = v
		}
		if a := content.Attributes["default"]; a != nil {
			p.Default = a.Expr
		}
		if a := content.Attributes["type"]; a != nil {
			t.typeAttr[p.Name] = a
		}
		t.Params = append(t.Params, p)
	}
	return t, diags
}

// markTemplateAttrs records that the attributes of body, and of its
// blocks, belong to template name (Origin.Template).
func (l *loader) markTemplateAttrs(name string, body *hclsyntax.Body) {
	if l.pb.templateAttrs == nil {
		l.pb.templateAttrs = map[hcl.Range]string{}
	}
	for _, a := range body.Attributes {
		l.pb.templateAttrs[a.SrcRange] = name
	}
	for _, b := range body.Blocks {
		l.markTemplateAttrs(name, b.Body)
	}
}

func firstLabel(b *hclsyntax.Block) string {
	if len(b.Labels) == 0 {
		return ""
	}
	return b.Labels[0]
}

func (t *Template) param(name string) *Param {
	for _, p := range t.Params {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func (t *Template) paramNames() []string {
	names := make([]string, len(t.Params))
	for i, p := range t.Params {
		names[i] = p.Name
	}
	return names
}

// expandIn returns block b (a step, or an on_failure or finally block)
// with the steps in it that use a template expanded. addr is the address
// of the block holding b ("" at the top).
func (l *loader) expandIn(b *hclsyntax.Block, byName map[string]*Template, addr string) (*hclsyntax.Block, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	baddr := BlockAddress(addr, b.Type, b.Labels...)
	if b.Type == "step" && slices.ContainsFunc(b.Body.Blocks, func(x *hclsyntax.Block) bool { return x.Type == argsBlock }) {
		body := *b.Body
		body.Blocks = nil
		for _, x := range b.Body.Blocks {
			if x.Type == argsBlock {
				diags = append(diags, errDiag("with is an attribute",
					"A step passes its template's arguments as an attribute: with = { NAME = VALUE, ... }.", x.DefRange()))
				continue
			}
			body.Blocks = append(body.Blocks, x)
		}
		b = withBody(b, &body)
	}
	if b.Type == "step" {
		if use := b.Body.Attributes["use"]; use != nil {
			nb, d := l.instantiate(b, use, byName, baddr)
			return nb, append(diags, d...)
		}
		if w := b.Body.Attributes["with"]; w != nil {
			diags = append(diags, errDiag("with without use",
				fmt.Sprintf("Step %q passes arguments (with) but uses no template: add use = template.NAME.", firstLabel(b)), w.NameRange))
			b = withoutUse(b)
		}
	}
	var nested []*hclsyntax.Block
	changed := false
	for _, nb := range b.Body.Blocks {
		if nb.Type == "step" {
			xb, d := l.expandIn(nb, byName, baddr)
			diags = append(diags, d...)
			changed = changed || xb != nb
			nb = xb
		}
		nested = append(nested, nb)
	}
	if !changed {
		return b, diags
	}
	body := *b.Body
	body.Blocks = nested
	return withBody(b, &body), diags
}

// instantiate expands step b, which says use (= template.NAME).
func (l *loader) instantiate(b *hclsyntax.Block, use *hclsyntax.Attribute, byName map[string]*Template, addr string) (*hclsyntax.Block, hcl.Diagnostics) {
	name := firstLabel(b)
	tr, d := hcl.AbsTraversalForExpr(use.Expr)
	attr, isAttr := hcl.TraverseAttr{}, false
	if !d.HasErrors() && len(tr) == 2 && tr.RootName() == "template" {
		attr, isAttr = tr[1].(hcl.TraverseAttr)
	}
	if !isAttr {
		return withoutUse(b), hcl.Diagnostics{errDiag("Invalid use",
			"use takes a template of the playbook: use = template.NAME.", use.Expr.Range())}
	}
	tname := attr.Name
	t := byName[tname]
	if t == nil {
		return withoutUse(b), hcl.Diagnostics{errDiag("Reference to undeclared template",
			fmt.Sprintf("There is no template named %q.%s", tname, didYouMean(tname, slices.Sorted(maps.Keys(byName)))), use.Expr.Range())}
	}
	t.Uses = append(t.Uses, name)
	inst := &instance{tmpl: t, args: map[string]hcl.Range{}}
	l.instances[name] = inst
	var diags hcl.Diagnostics
	rw := rewriter{l: l, inst: name}

	// The arguments, as the step's own locals.
	args := &hclsyntax.Body{Attributes: hclsyntax.Attributes{}, SrcRange: b.Body.SrcRange, EndRange: b.Body.EndRange}
	if w := b.Body.Attributes["with"]; w != nil {
		pairs, d := hcl.ExprMap(w.Expr)
		if d.HasErrors() {
			diags = append(diags, errDiag("Invalid with",
				fmt.Sprintf("with takes an object of arguments: with = { NAME = VALUE, ... }, one for each param of template %q.", t.Name), w.Expr.Range()))
		}
		for _, kv := range pairs {
			key := hcl.ExprAsKeyword(kv.Key)
			krng := kv.Key.Range()
			p := t.param(key)
			switch {
			case key == "":
				diags = append(diags, errDiag("Invalid argument name",
					"An argument's name is a param's name, written as a bare word: with = { issues = local.failures }.", krng))
				continue
			case p == nil:
				diags = append(diags, errDiag("Unknown argument",
					fmt.Sprintf("Template %q has no param %q.%s Its params: %s.", t.Name, key, didYouMean(key, t.paramNames()), quoteList(t.paramNames())), krng))
				continue
			case args.Attributes[key] != nil:
				diags = append(diags, errDiag("Duplicate argument",
					fmt.Sprintf("Argument %q is already given at %s.", key, inst.args[key]), krng))
				continue
			}
			rng := hcl.RangeBetween(krng, kv.Value.Range())
			value, ok := kv.Value.(hclsyntax.Expression)
			if !ok {
				continue // only HCL's native syntax gets here
			}
			inst.args[key] = rng
			args.Attributes[key] = &hclsyntax.Attribute{Name: key, Expr: rw.expr(value), SrcRange: rng, NameRange: krng}
		}
	}
	for _, p := range t.Params {
		if args.Attributes[p.Name] != nil {
			continue
		}
		if p.Default == nil {
			diags = append(diags, errDiag("Missing argument",
				fmt.Sprintf("Step %q uses template %q without its param %q (declared at %s): add it to with.", name, t.Name, p.Name, p.DeclRange), use.SrcRange))
			// A null in its place, so that what reads it is not
			// reported again.
			null := &hclsyntax.LiteralValueExpr{Val: cty.NullVal(cty.DynamicPseudoType), SrcRange: use.SrcRange}
			args.Attributes[p.Name] = &hclsyntax.Attribute{Name: p.Name, Expr: null, SrcRange: use.SrcRange, NameRange: use.NameRange}
			continue
		}
		def, ok := p.Default.(hclsyntax.Expression)
		if !ok {
			continue
		}
		args.Attributes[p.Name] = &hclsyntax.Attribute{Name: p.Name, Expr: rw.expr(def), SrcRange: def.Range(), NameRange: p.DeclRange}
	}

	// The template's body, then the step's own over it.
	tb := rw.body(t.Body, true)
	own := rw.body(b.Body, false)
	delete(own.Attributes, "use")
	delete(own.Attributes, "with")
	relabelAction(tb, own)
	merged := l.merge(tb, own, addr, false)
	if len(args.Attributes) > 0 {
		merged.Blocks = append(merged.Blocks, &hclsyntax.Block{Type: argsBlock, Body: args,
			TypeRange: use.NameRange, OpenBraceRange: use.SrcRange, CloseBraceRange: use.SrcRange})
	}
	return withBody(b, merged), diags
}

// withoutUse is step b without its use and with, once they are
// reported: the step is checked as written, without the template.
func withoutUse(b *hclsyntax.Block) *hclsyntax.Block {
	body := *b.Body
	body.Attributes = maps.Clone(b.Body.Attributes)
	delete(body.Attributes, "use")
	delete(body.Attributes, "with")
	return withBody(b, &body)
}

// mergeArgs is a step's with overridden by another's: the arguments of
// both, own's where both give one, so that a fork restates only the
// arguments it changes. An argument keeps the range of the file that
// gives it. When either is not an object of arguments, own is.
func mergeArgs(up, own *hclsyntax.Attribute) *hclsyntax.Attribute {
	uo, ok1 := up.Expr.(*hclsyntax.ObjectConsExpr)
	oo, ok2 := own.Expr.(*hclsyntax.ObjectConsExpr)
	if !ok1 || !ok2 {
		return own
	}
	given := map[string]bool{}
	for _, it := range oo.Items {
		given[hcl.ExprAsKeyword(it.KeyExpr)] = true
	}
	merged := *oo
	merged.Items = nil
	for _, it := range uo.Items {
		if k := hcl.ExprAsKeyword(it.KeyExpr); k == "" || !given[k] {
			merged.Items = append(merged.Items, it)
		}
	}
	merged.Items = append(merged.Items, oo.Items...)
	na := *own
	na.Expr = &merged
	return &na
}

// actionBlocks are the block types that hold a step's action
// (decodeStepAction reads the one a step has).
var actionBlocks = map[string]bool{"shell": true, "agent": true, "call": true, "ask": true, "playbook": true}

// relabelAction gives the template's action block the labels of the
// instance's action block of the same kind, so that the one overrides
// the other: agent "gsd_debugger" {} over agent "debugger" { ... }.
func relabelAction(tmpl, own *hclsyntax.Body) {
	for _, ob := range own.Blocks {
		if !actionBlocks[ob.Type] {
			continue
		}
		for i, tb := range tmpl.Blocks {
			if tb.Type == ob.Type && !slices.Equal(tb.Labels, ob.Labels) {
				nb := *tb
				nb.Labels = ob.Labels
				tmpl.Blocks[i] = &nb
			}
		}
	}
}

// rewriter copies a body for one instance, with param and self
// rewritten in every HCL expression.
type rewriter struct {
	l    *loader
	inst string
}

// body copies b; top drops the template's own blocks and attributes
// (param, description stays: it is the instance's default).
func (rw rewriter) body(b *hclsyntax.Body, top bool) *hclsyntax.Body {
	out := &hclsyntax.Body{Attributes: make(hclsyntax.Attributes, len(b.Attributes)), SrcRange: b.SrcRange, EndRange: b.EndRange}
	for n, a := range b.Attributes {
		na := *a
		na.Expr = rw.expr(a.Expr)
		out.Attributes[n] = &na
	}
	for _, nb := range b.Blocks {
		if top && nb.Type == "param" {
			continue
		}
		out.Blocks = append(out.Blocks, withBody(nb, rw.body(nb.Body, false)))
	}
	return out
}

// expr is e for the instance: e itself when it reads neither param nor
// self, else e parsed again from its source with those rewritten.
func (rw rewriter) expr(e hclsyntax.Expression) hclsyntax.Expression {
	if !readsInstanceRoots(e) {
		return e
	}
	r := e.Range()
	src, ok := rw.l.sources[r.Filename]
	if !ok || r.End.Byte > len(src) || r.Start.Byte > r.End.Byte {
		return e
	}
	// A heredoc's range ends at its closing marker, which the parser
	// reads only with the newline after it.
	text := append(slices.Clip(src[r.Start.Byte:r.End.Byte]), '\n')
	ne, diags := hclsyntax.ParseExpression(text, r.Filename, r.Start)
	if diags.HasErrors() {
		return e
	}
	hclsyntax.VisitAll(ne, func(n hclsyntax.Node) hcl.Diagnostics {
		st, ok := n.(*hclsyntax.ScopeTraversalExpr)
		if !ok || len(st.Traversal) == 0 {
			return nil
		}
		root, ok := st.Traversal[0].(hcl.TraverseRoot)
		if !ok {
			return nil
		}
		switch root.Name {
		case RootParam:
			if len(st.Traversal) < 2 {
				return nil
			}
			name, ok := st.Traversal[1].(hcl.TraverseAttr)
			if !ok {
				return nil
			}
			st.Traversal = append(hcl.Traversal{hcl.TraverseRoot{Name: RootLocal, SrcRange: root.SrcRange},
				hcl.TraverseAttr{Name: argLocal(name.Name), SrcRange: name.SrcRange}}, st.Traversal[2:]...)
		case RootSelf:
			st.Traversal = append(hcl.Traversal{hcl.TraverseRoot{Name: RootSteps, SrcRange: root.SrcRange},
				hcl.TraverseAttr{Name: rw.inst, SrcRange: root.SrcRange}}, st.Traversal[1:]...)
		}
		return nil
	})
	return ne
}

// instanceRootHint explains param and self where they do not exist.
func instanceRootHint(root string) string {
	if root == RootParam || root == RootSelf {
		return fmt.Sprintf(" %s exists only in a step that uses a template (use = template.NAME), in what the step evaluates once it starts: not in its when or skip_reason.", root)
	}
	return ""
}

func readsInstanceRoots(e hclsyntax.Expression) bool {
	for _, tr := range e.Variables() {
		if n := tr.RootName(); n == RootParam || n == RootSelf {
			return true
		}
	}
	return false
}

// instancePatch rewrites param and self in a condition of instance inst,
// as rewriter does in HCL expressions: param.NAME reads local.NAME, self
// reads steps[inst]. Positions stay those of the source.
type instancePatch struct{ inst string }

func (p instancePatch) Visit(node *ast.Node) {
	if m, ok := (*node).(*ast.MemberNode); ok {
		id, isID := m.Node.(*ast.IdentifierNode)
		prop, isStr := m.Property.(*ast.StringNode)
		if isID && isStr && id.Value == RootParam {
			local := &ast.IdentifierNode{Value: RootLocal}
			local.SetLocation(id.Location())
			name := &ast.StringNode{Value: argLocal(prop.Value)}
			name.SetLocation(prop.Location())
			m.Node, m.Property = local, name
		}
		return
	}
	id, ok := (*node).(*ast.IdentifierNode)
	if !ok {
		return
	}
	switch id.Value {
	case RootSelf:
		steps := &ast.IdentifierNode{Value: RootSteps}
		steps.SetLocation(id.Location())
		prop := &ast.StringNode{Value: p.inst}
		prop.SetLocation(id.Location())
		ast.Patch(node, &ast.MemberNode{Node: steps, Property: prop})
	}
}

// decodeTemplates decodes the params' types, once named types are
// declared.
func (l *loader) decodeTemplates() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, t := range l.pb.Templates {
		for _, p := range t.Params {
			a := t.typeAttr[p.Name]
			if a == nil {
				continue
			}
			ty, d := l.decodeType(a)
			diags = append(diags, d...)
			if !d.HasErrors() {
				p.Type = ty
			}
		}
		if len(t.Uses) == 0 {
			diags = append(diags, warnDiag("Unused template",
				fmt.Sprintf("No step uses template %q, so its body is never checked: use it (use = template.%s) or remove it.", t.Name, t.Name), t.DeclRange))
		}
	}
	return diags
}

// checkArgs checks the arguments of step s, if it uses a template,
// against its params' types, once the step's locals (its arguments) have
// their inferred types; then gives each the declared type, so that the
// template's body is checked against what it declares, not against what
// one instance passes.
func (l *loader) checkArgs(s *Step) hcl.Diagnostics {
	inst := l.instances[s.Name]
	if inst == nil {
		return nil
	}
	var diags hcl.Diagnostics
	for _, p := range inst.tmpl.Params {
		lv := s.locals[argLocal(p.Name)]
		if lv == nil || p.Type == cty.DynamicPseudoType {
			continue
		}
		if lv.Type != cty.DynamicPseudoType && lv.Type != cty.NilType {
			if _, err := convert.Convert(cty.UnknownVal(lv.Type), p.Type); err != nil {
				rng, given := inst.args[p.Name]
				what := "its argument"
				if !given {
					rng, what = p.Default.Range(), "its default"
				}
				diags = append(diags, errDiag("Argument of the wrong type",
					fmt.Sprintf("Param %q of template %q takes %s; %s is %s.", p.Name, inst.tmpl.Name, typeString(p.Type), what, typeString(lv.Type)), rng))
			}
		}
		lv.Type = p.Type
	}
	return diags
}
