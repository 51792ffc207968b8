package lang

import "github.com/hashicorp/hcl/v2"

// Output is the run's return object; each attribute is evaluated when the
// run ends.
type Output struct {
	Attrs     []*NamedExpr
	DeclRange hcl.Range
}

// decodeOutputBlock reads the run's return object: any attributes, each
// evaluated when the run ends.
func (l *loader) decodeOutputBlock(b *hcl.Block) hcl.Diagnostics {
	attrs, diags := b.Body.JustAttributes()
	out := &Output{DeclRange: b.DefRange}
	for _, a := range sortedAttrs(attrs) {
		out.Attrs = append(out.Attrs, &NamedExpr{Name: a.Name, Expr: a.Expr, Range: a.Range})
		l.deferRefs(a.Expr, refScope{what: "the output block"})
	}
	l.pb.Output = out
	return diags
}
