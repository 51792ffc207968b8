package lang

import (
	"fmt"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// Suggest returns the candidate closest to name, if one is close enough to
// be a likely typo: apl's one rule for "Did you mean", in diagnostics and
// on the command line alike.
func Suggest(name string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		d := levenshtein.Distance(name, c, nil)
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// didYouMean formats a suggestion sentence, or "".
func didYouMean(name string, candidates []string) string {
	if s := Suggest(name, candidates); s != "" {
		return fmt.Sprintf(" Did you mean %q?", s)
	}
	return ""
}

func errDiag(summary, detail string, rng hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: detail, Subject: rng.Ptr()}
}

func warnDiag(summary, detail string, rng hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: summary, Detail: detail, Subject: rng.Ptr()}
}

// constValue evaluates an attribute that must be a constant (no variables).
func constValue(attr *hcl.Attribute) (cty.Value, hcl.Diagnostics) {
	if vars := attr.Expr.Variables(); len(vars) > 0 {
		return cty.NilVal, hcl.Diagnostics{errDiag("Constant required",
			fmt.Sprintf("The %q attribute is read when the playbook loads, so it cannot refer to %q.", attr.Name, traversalString(vars[0])),
			vars[0].SourceRange())}
	}
	v, diags := attr.Expr.Value(&hcl.EvalContext{Functions: Functions()})
	return v, diags
}

func constString(attr *hcl.Attribute) (string, hcl.Diagnostics) {
	return constOfType(attr, cty.String, func(v cty.Value) string { return v.AsString() })
}

func constStrings(attr *hcl.Attribute) ([]string, hcl.Diagnostics) {
	return constOfType(attr, cty.List(cty.String), func(v cty.Value) []string {
		var out []string
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			if !ev.IsNull() {
				out = append(out, ev.AsString())
			}
		}
		return out
	})
}

func constInt(attr *hcl.Attribute) (int, hcl.Diagnostics) {
	whole := true
	n, diags := constOfType(attr, cty.Number, func(v cty.Value) int {
		whole = v.AsBigFloat().IsInt()
		i, _ := v.AsBigFloat().Int64()
		return int(i)
	})
	if !diags.HasErrors() && !whole {
		diags = append(diags, errDiag("Incorrect attribute value type",
			fmt.Sprintf("The %q attribute must be a whole number.", attr.Name), attr.Expr.Range()))
	}
	return n, diags
}

func constBool(attr *hcl.Attribute) (bool, hcl.Diagnostics) {
	return constOfType(attr, cty.Bool, func(v cty.Value) bool { return v.True() })
}

func constOfType[T any](attr *hcl.Attribute, ty cty.Type, get func(cty.Value) T) (T, hcl.Diagnostics) {
	var zero T
	v, diags := constValue(attr)
	if diags.HasErrors() {
		return zero, diags
	}
	v, err := convert.Convert(v, ty)
	if err != nil || v.IsNull() || !v.IsKnown() {
		msg := "a null value"
		if err != nil {
			msg = err.Error()
		}
		return zero, hcl.Diagnostics{errDiag("Incorrect attribute value type",
			fmt.Sprintf("The %q attribute must be a %s: %s.", attr.Name, ty.FriendlyName(), msg), attr.Expr.Range())}
	}
	return get(v), diags
}

func traversalString(t hcl.Traversal) string {
	var b strings.Builder
	for _, s := range t {
		switch s := s.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			b.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			b.WriteString("[" + formatValue(s.Key) + "]")
		default:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

func typeString(t cty.Type) string {
	if t == cty.NilType {
		return "none"
	}
	return typeexpr.TypeString(t)
}

// formatValue renders a known value compactly, as JSON where possible.
func formatValue(v cty.Value) string {
	if v == cty.NilVal {
		return "null"
	}
	if !v.IsWhollyKnown() {
		return "(unknown)"
	}
	if v.Type() == cty.String && !v.IsNull() {
		return fmt.Sprintf("%q", v.AsString())
	}
	b, err := ctyjson.Marshal(v, v.Type())
	if err != nil {
		return v.GoString()
	}
	return string(b)
}

var (
	ctyNumber = cty.Number
	ctyString = cty.String
)

type ctyValue = cty.Value

// sentence makes a message a sentence: a capital first letter and a
// final period.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
