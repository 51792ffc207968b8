package lang

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// visitExprs calls f for e and every expression in it, in the order
// hclsyntax.VisitAll visits them (but for the ChildScope wrappers of a
// for expression's parts, which are not expressions of the file). VisitAll
// allocates a closure at every node, a quarter of a load's allocations
// once files are parsed, for the few checks that look for calls, for
// expressions and comparisons with null; this walk allocates nothing.
// An expression type it does not know is walked by VisitAll.
func visitExprs(e hclsyntax.Expression, f func(hclsyntax.Expression)) {
	if e == nil {
		return
	}
	f(e)
	switch e := e.(type) {
	case *hclsyntax.LiteralValueExpr, *hclsyntax.ScopeTraversalExpr, *hclsyntax.AnonSymbolExpr, *hclsyntax.ExprSyntaxError:
	case *hclsyntax.ParenthesesExpr:
		visitExprs(e.Expression, f)
	case *hclsyntax.RelativeTraversalExpr:
		visitExprs(e.Source, f)
	case *hclsyntax.FunctionCallExpr:
		for _, a := range e.Args {
			visitExprs(a, f)
		}
	case *hclsyntax.ConditionalExpr:
		visitExprs(e.Condition, f)
		visitExprs(e.TrueResult, f)
		visitExprs(e.FalseResult, f)
	case *hclsyntax.IndexExpr:
		visitExprs(e.Collection, f)
		visitExprs(e.Key, f)
	case *hclsyntax.TupleConsExpr:
		for _, x := range e.Exprs {
			visitExprs(x, f)
		}
	case *hclsyntax.ObjectConsExpr:
		for _, item := range e.Items {
			visitExprs(item.KeyExpr, f)
			visitExprs(item.ValueExpr, f)
		}
	case *hclsyntax.ObjectConsKeyExpr:
		// A bare name is the key itself, not an expression (as in
		// ObjectConsKeyExpr's own walk).
		if hcl.ExprAsKeyword(e.Wrapped) == "" {
			visitExprs(e.Wrapped, f)
		}
	case *hclsyntax.ForExpr:
		visitExprs(e.CollExpr, f)
		visitExprs(e.KeyExpr, f)
		visitExprs(e.ValExpr, f)
		visitExprs(e.CondExpr, f)
	case *hclsyntax.SplatExpr:
		visitExprs(e.Source, f)
		visitExprs(e.Each, f)
	case *hclsyntax.BinaryOpExpr:
		visitExprs(e.LHS, f)
		visitExprs(e.RHS, f)
	case *hclsyntax.UnaryOpExpr:
		visitExprs(e.Val, f)
	case *hclsyntax.TemplateExpr:
		for _, p := range e.Parts {
			visitExprs(p, f)
		}
	case *hclsyntax.TemplateJoinExpr:
		visitExprs(e.Tuple, f)
	case *hclsyntax.TemplateWrapExpr:
		visitExprs(e.Wrapped, f)
	default:
		first := true
		hclsyntax.VisitAll(e, func(n hclsyntax.Node) hcl.Diagnostics {
			if first {
				first = false // e itself, visited above
				return nil
			}
			if x, ok := n.(hclsyntax.Expression); ok {
				if _, scope := n.(hclsyntax.ChildScope); !scope {
					f(x)
				}
			}
			return nil
		})
	}
}
