package lang

import (
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// FunctionSignature writes the signature of a function of values as an
// editor shows it: join(separator string, lists ...list of string) string.
// ok is false for a name that is no function of values (an expr-lang
// builtin only conditions call has no typed signature here).
func FunctionSignature(name string) (sig string, ok bool) {
	f, ok := functions[name]
	if !ok {
		return "", false
	}
	var params []string
	for _, p := range f.Params() {
		params = append(params, p.Name+" "+p.Type.FriendlyName())
	}
	if v := f.VarParam(); v != nil {
		params = append(params, v.Name+" ..."+v.Type.FriendlyName())
	}
	ret := "any"
	if t, err := f.ReturnType(paramTypes(f)); err == nil {
		ret = t.FriendlyName()
	}
	return name + "(" + strings.Join(params, ", ") + ") " + ret, true
}

func paramTypes(f function.Function) []cty.Type {
	var ts []cty.Type
	for _, p := range f.Params() {
		ts = append(ts, p.Type)
	}
	return ts
}
