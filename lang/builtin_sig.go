package lang

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// BuiltinSignatures is what the loader knows of the builtins `call` blocks
// use. The builtins package owns them (builtins.Registry) and the Loader
// hands them to lang, as it hands it the builtins' names, so that a call a
// run would reject fails validation, and so that steps.NAME.output of a
// call step has a type.
type BuiltinSignatures interface {
	// Args returns the arguments a builtin takes, with the type each
	// converts to, and the ones a call must give; ok is false when the
	// builtin's signature is unknown.
	Args(builtin string) (args map[string]cty.Type, required []string, ok bool)
	// Result returns the type of a builtin's output;
	// cty.DynamicPseudoType when it is unknown.
	Result(builtin string) cty.Type
}

// checkCall checks a call step's arguments against its builtin's
// signature: names, required ones, and the types of the values as far as
// they are known before a run.
func (l *loader) checkCall(s *Step, c *Call, ctx *hcl.EvalContext) hcl.Diagnostics {
	if l.sigs == nil {
		return nil
	}
	params, required, ok := l.sigs.Args(c.Builtin)
	if !ok {
		return nil
	}
	names := slices.Sorted(maps.Keys(params))
	var diags hcl.Diagnostics
	// given holds the arguments a call gives, and the names its misspelt
	// ones suggest, whose absence is then no news.
	given := map[string]bool{}
	for _, a := range c.Args {
		given[a.Name] = true
		pt, ok := params[a.Name]
		if !ok {
			given[Suggest(a.Name, names)] = true
			detail := fmt.Sprintf("Builtin %q takes no arguments.", c.Builtin)
			if len(names) > 0 {
				detail = fmt.Sprintf("Builtin %q has no argument %q; it takes %s.%s", c.Builtin, a.Name, quoteList(names), didYouMean(a.Name, names))
			}
			diags = append(diags, errDiag("Unsupported argument", detail, nameRange(a)))
			continue
		}
		if ctx == nil || pt == cty.DynamicPseudoType {
			continue
		}
		v, d := a.Expr.Value(ctx)
		if d.HasErrors() || v.Type() == cty.DynamicPseudoType {
			continue
		}
		if !v.Type().Equals(pt) && convert.GetConversionUnsafe(v.Type(), pt) == nil {
			diags = append(diags, errDiag("Invalid argument type",
				fmt.Sprintf("Argument %q of builtin %q must be a %s, not %s.", a.Name, c.Builtin, pt.FriendlyName(), v.Type().FriendlyName()), a.Expr.Range()))
		}
	}
	for _, r := range required {
		if !given[r] {
			diags = append(diags, errDiag("Missing required argument",
				fmt.Sprintf("Builtin %q needs the argument %q.", c.Builtin, r), c.DeclRange))
		}
	}
	return diags
}

// nameRange is the range of an argument's name: the start of its
// attribute, one word long.
func nameRange(a *NamedExpr) hcl.Range {
	r := a.Range
	r.End = r.Start
	r.End.Column += len(a.Name)
	r.End.Byte += len(a.Name)
	return r
}
