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
	case *hclsyntax.ForExpr:
		visitExprs(e.CollExpr, f)
		visitExprs(e.KeyExpr, f)
		visitExprs(e.ValExpr, f)
		visitExprs(e.CondExpr, f)
	case *hclsyntax.ParenthesesExpr, *hclsyntax.RelativeTraversalExpr, *hclsyntax.FunctionCallExpr,
		*hclsyntax.ConditionalExpr, *hclsyntax.IndexExpr, *hclsyntax.TupleConsExpr, *hclsyntax.ObjectConsExpr,
		*hclsyntax.ObjectConsKeyExpr, *hclsyntax.SplatExpr, *hclsyntax.BinaryOpExpr, *hclsyntax.UnaryOpExpr,
		*hclsyntax.TemplateExpr, *hclsyntax.TemplateJoinExpr, *hclsyntax.TemplateWrapExpr:
		children(e, func(c hclsyntax.Expression) { visitExprs(c, f) })
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

// exprVariables is e.Variables() (hclsyntax.Variables): the traversals
// from the root scope in e, those from a for expression's own key and
// value variables left out, found without hclsyntax.Walk's closure at
// every node.
func exprVariables(e hclsyntax.Expression) []hcl.Traversal {
	w := varsWalk{}
	w.walk(e)
	return w.vars
}

// varsWalk collects traversals; locals are the key and value variables
// of the for expressions around the current expression.
type varsWalk struct {
	vars   []hcl.Traversal
	locals []string
}

func (w *varsWalk) walk(e hclsyntax.Expression) {
	if e == nil {
		return
	}
	switch e := e.(type) {
	case *hclsyntax.ScopeTraversalExpr:
		name := e.Traversal.RootName()
		for _, l := range w.locals {
			if l == name {
				return
			}
		}
		w.vars = append(w.vars, e.Traversal)
	case *hclsyntax.ForExpr:
		w.walk(e.CollExpr)
		n := len(w.locals)
		for _, v := range []string{e.KeyVar, e.ValVar} {
			if v != "" {
				w.locals = append(w.locals, v)
			}
		}
		w.walk(e.KeyExpr)
		w.walk(e.ValExpr)
		w.walk(e.CondExpr)
		w.locals = w.locals[:n]
	case *hclsyntax.LiteralValueExpr, *hclsyntax.AnonSymbolExpr, *hclsyntax.ExprSyntaxError:
	case *hclsyntax.ParenthesesExpr, *hclsyntax.RelativeTraversalExpr, *hclsyntax.FunctionCallExpr,
		*hclsyntax.ConditionalExpr, *hclsyntax.IndexExpr, *hclsyntax.TupleConsExpr, *hclsyntax.ObjectConsExpr,
		*hclsyntax.ObjectConsKeyExpr, *hclsyntax.SplatExpr, *hclsyntax.BinaryOpExpr, *hclsyntax.UnaryOpExpr,
		*hclsyntax.TemplateExpr, *hclsyntax.TemplateJoinExpr, *hclsyntax.TemplateWrapExpr:
		children(e, w.walk)
	default:
		// A kind this walk does not know: hcl's own, with the locals
		// around it left out.
		for _, tr := range e.Variables() {
			local := false
			for _, l := range w.locals {
				local = local || l == tr.RootName()
			}
			if !local {
				w.vars = append(w.vars, tr)
			}
		}
	}
}

// children calls f for each direct child expression of e, in VisitAll's
// order, for the kinds visitExprs knows but traversals, for expressions
// and leaves.
func children(e hclsyntax.Expression, f func(hclsyntax.Expression)) {
	switch e := e.(type) {
	case *hclsyntax.ParenthesesExpr:
		f(e.Expression)
	case *hclsyntax.RelativeTraversalExpr:
		f(e.Source)
	case *hclsyntax.FunctionCallExpr:
		for _, a := range e.Args {
			f(a)
		}
	case *hclsyntax.ConditionalExpr:
		f(e.Condition)
		f(e.TrueResult)
		f(e.FalseResult)
	case *hclsyntax.IndexExpr:
		f(e.Collection)
		f(e.Key)
	case *hclsyntax.TupleConsExpr:
		for _, x := range e.Exprs {
			f(x)
		}
	case *hclsyntax.ObjectConsExpr:
		for _, item := range e.Items {
			f(item.KeyExpr)
			f(item.ValueExpr)
		}
	case *hclsyntax.ObjectConsKeyExpr:
		if hcl.ExprAsKeyword(e.Wrapped) == "" {
			f(e.Wrapped)
		}
	case *hclsyntax.SplatExpr:
		f(e.Source)
		f(e.Each)
	case *hclsyntax.BinaryOpExpr:
		f(e.LHS)
		f(e.RHS)
	case *hclsyntax.UnaryOpExpr:
		f(e.Val)
	case *hclsyntax.TemplateExpr:
		for _, p := range e.Parts {
			f(p)
		}
	case *hclsyntax.TemplateJoinExpr:
		f(e.Tuple)
	case *hclsyntax.TemplateWrapExpr:
		f(e.Wrapped)
	}
}
