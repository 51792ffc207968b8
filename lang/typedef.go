package lang

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// TypeDef is a named type: type "NAME" { type = ... }, written
// type.NAME wherever a type goes (a step's returns, an input's or a
// var's type, inside another type).
type TypeDef struct {
	Name string
	Type cty.Type
	// Example, if given, is a value of Type that a step returning
	// exactly type.NAME takes as its example when it has none.
	Example     cty.Value
	Description string
	DeclRange   hcl.Range

	expr hclsyntax.Expression
	// expanded is expr with the types it names expanded (expandTypeRefs),
	// once resolved: a reference reuses it.
	expanded hclsyntax.Expression
	example  *hcl.Attribute
	state    typeState
}

type typeState int

const (
	typeUnresolved typeState = iota
	typeResolving
	typeResolved
	typeBad
)

var typeDefSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type", Required: true},
		{Name: "example"},
		{Name: "description"},
	},
}

// typeRoot is the root of a reference to a named type: type.NAME.
const typeRoot = "type"

// declareTypeBlock registers a named type; its type expression is read
// when something refers to it (resolveTypes), since it may refer to types
// declared after it.
func (l *loader) declareTypeBlock(b *hcl.Block) hcl.Diagnostics {
	diags := validName("type", b)
	name := b.Labels[0]
	if prev := l.pb.Types[name]; prev != nil {
		return append(diags, duplicate("type", name, prev.DeclRange, b))
	}
	content, d := b.Body.Content(typeDefSchema)
	diags = append(diags, d...)
	td := &TypeDef{Name: name, Type: cty.DynamicPseudoType, DeclRange: b.DefRange, example: content.Attributes["example"]}
	if a := content.Attributes["type"]; a != nil {
		if e, ok := a.Expr.(hclsyntax.Expression); ok {
			td.expr = e
		}
	}
	if td.expr == nil {
		td.state = typeBad
	}
	if a := content.Attributes["description"]; a != nil {
		s, d := constString(a)
		diags = append(diags, d...)
		td.Description = s
	}
	if l.pb.Types == nil {
		l.pb.Types = map[string]*TypeDef{}
	}
	l.pb.Types[name] = td
	return diags
}

// resolveTypes reads every named type's expression and its example, in
// name order, so that a type's problems are reported once, where it is
// declared; a reference to a type with problems reads as any.
func (l *loader) resolveTypes() hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, name := range slices.Sorted(maps.Keys(l.pb.Types)) {
		td := l.pb.Types[name]
		if td.state == typeUnresolved {
			diags = append(diags, l.resolveType(td)...)
		}
		if td.example == nil || td.state != typeResolved {
			continue
		}
		v, d := constExpr(td.example.Expr, "a type's example")
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		if _, err := convert.Convert(v, td.Type); err != nil {
			diags = append(diags, errDiag("Example does not match its type",
				fmt.Sprintf("The example of type %q is not a %s: %s.", name, typeString(td.Type), err), td.example.Expr.Range()))
			continue
		}
		td.Example = v
	}
	return diags
}

// resolveType reads td's type expression, resolving the types it refers
// to first.
func (l *loader) resolveType(td *TypeDef) hcl.Diagnostics {
	td.state = typeResolving
	e, diags := l.expandTypeRefs(td.expr)
	if !diags.HasErrors() {
		var t cty.Type
		t, _, diags = typeexpr.TypeConstraintWithDefaults(e)
		if !diags.HasErrors() {
			td.Type, td.expanded, td.state = t, e, typeResolved
			return diags
		}
	}
	td.state = typeBad
	return diags
}

// decodeType reads an HCL type expression: string, number, bool,
// list(string), object({ score = number, tags = optional(list(string)) }),
// or a named type, type.NAME, anywhere in it.
func (l *loader) decodeType(a *hcl.Attribute) (cty.Type, hcl.Diagnostics) {
	e, ok := a.Expr.(hclsyntax.Expression)
	if !ok {
		t, _, diags := typeexpr.TypeConstraintWithDefaults(a.Expr)
		return t, diags
	}
	e, diags := l.expandTypeRefs(e)
	if diags.HasErrors() {
		return cty.DynamicPseudoType, diags
	}
	t, _, d := typeexpr.TypeConstraintWithDefaults(e)
	return t, append(diags, d...)
}

// namedType is the named type a returns attribute is exactly, if it is.
func (l *loader) namedType(a *hcl.Attribute) *TypeDef {
	st, ok := a.Expr.(*hclsyntax.ScopeTraversalExpr)
	if !ok || len(st.Traversal) != 2 || st.Traversal.RootName() != typeRoot {
		return nil
	}
	if at, ok := st.Traversal[1].(hcl.TraverseAttr); ok {
		return l.pb.Types[at.Name]
	}
	return nil
}

// expandTypeRefs is e with each type.NAME replaced by NAME's type
// expression, itself expanded, so that typeexpr reads the whole. It makes
// new nodes where it replaces and leaves e as it is.
func (l *loader) expandTypeRefs(e hclsyntax.Expression) (hclsyntax.Expression, hcl.Diagnostics) {
	switch e := e.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		if e.Traversal.RootName() != typeRoot {
			return e, nil
		}
		var name string
		if len(e.Traversal) == 2 {
			if at, ok := e.Traversal[1].(hcl.TraverseAttr); ok {
				name = at.Name
			}
		}
		if name == "" {
			return e, hcl.Diagnostics{errDiag("Invalid type reference",
				"A named type is written type.NAME.", e.Range())}
		}
		td := l.pb.Types[name]
		if td == nil {
			return e, hcl.Diagnostics{errDiag("Unknown type",
				fmt.Sprintf("No type %q is declared.%s", name, didYouMean(name, slices.Sorted(maps.Keys(l.pb.Types)))), e.Range())}
		}
		l.used["type."+name] = true
		switch td.state {
		case typeUnresolved:
			if d := l.resolveType(td); d.HasErrors() {
				return anyType(e.SrcRange), d
			}
		case typeResolving:
			return e, hcl.Diagnostics{errDiag("Type contains itself",
				fmt.Sprintf("Type %q is defined in terms of itself. A type is a finite shape; use any where the protocol nests without bound.", name), e.Range())}
		case typeBad:
			// Its problems are reported where it is declared.
			return anyType(e.SrcRange), nil
		}
		return td.expanded, nil
	case *hclsyntax.FunctionCallExpr:
		args, diags := l.expandAll(e.Args)
		c := *e
		c.Args = args
		return &c, diags
	case *hclsyntax.TupleConsExpr:
		exprs, diags := l.expandAll(e.Exprs)
		c := *e
		c.Exprs = exprs
		return &c, diags
	case *hclsyntax.ObjectConsExpr:
		var diags hcl.Diagnostics
		c := *e
		c.Items = make([]hclsyntax.ObjectConsItem, len(e.Items))
		for i, it := range e.Items {
			v, d := l.expandTypeRefs(it.ValueExpr)
			diags = append(diags, d...)
			c.Items[i] = hclsyntax.ObjectConsItem{KeyExpr: it.KeyExpr, ValueExpr: v}
		}
		return &c, diags
	}
	return e, nil
}

func (l *loader) expandAll(es []hclsyntax.Expression) ([]hclsyntax.Expression, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	out := make([]hclsyntax.Expression, len(es))
	for i, e := range es {
		var d hcl.Diagnostics
		out[i], d = l.expandTypeRefs(e)
		diags = append(diags, d...)
	}
	return out, diags
}

// anyType is the type expression any, standing for a type that could not
// be read.
func anyType(rng hcl.Range) hclsyntax.Expression {
	return &hclsyntax.ScopeTraversalExpr{Traversal: hcl.Traversal{hcl.TraverseRoot{Name: "any", SrcRange: rng}}, SrcRange: rng}
}
