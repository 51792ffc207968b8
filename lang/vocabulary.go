package lang

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/conf"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// One function vocabulary: the functions of values (the table in
// functions.go) are callable from conditions under the same names, with
// the same meaning, since they are the same code. A condition calls a
// value function with its arguments converted to cty values, and gets
// the result converted back as conditions see values (ExprValue, whole
// numbers as int).
//
// expr-lang's builtins stay: where a builtin has a value function's name
// and the same meaning (upper, max, concat, sort, ...) the builtin is
// kept. Where the meaning differs, the value function's wins, so that a
// name means one thing everywhere:
//   - keys and values are sorted by key (expr's follow Go's map order,
//     which changes from run to run);
//   - join takes its separator first, as in values (join(", ", list));
//     expr's order, join(list, sep), is still read the same way, since
//     the two cannot be confused;
//   - split takes its separator first (split(",", s)); since both
//     arguments are strings, a call whose second argument is a string
//     literal and first is not is refused with the fix (checkSplit);
//   - replace reads a /regex/ as values do.
//
// Left out: try and can (in values their arguments are evaluated lazily;
// conditions have ?. and ?? instead), and timestamp and uuid (a route
// must not depend on when a run takes it).

// condOverrides are the expr builtins replaced by the value function of
// the same name.
var condOverrides = map[string]bool{"keys": true, "values": true, "join": true, "split": true, "replace": true}

// condExcluded are value functions conditions cannot call, with why.
var condExcluded = map[string]string{
	"try":       "conditions use ?. and ?? instead (steps.x.output?.field ?? default)",
	"can":       "conditions use ?. and ?? instead (steps.x.output?.field != nil)",
	"timestamp": "a condition cannot read the clock: a resumed run must take the same route; read steps.NAME.started_at",
	"uuid":      "a condition must give the same answer every time it is evaluated",
}

// containsCall is the name a call of contains is compiled under: in
// expr-lang, contains is an infix operator ("abc" contains "b"), so
// contains(list, v) is renamed before it is parsed (same length, so
// positions in errors stay right).
const containsCall = "Contains"

// condFunctions is the option that gives a condition the value
// functions: expr's Function option allocates each function anew for
// every condition compiled, so they are made once (condFunctionOptions
// applied to a scratch config) and shared.
var condFunctions = func() expr.Option {
	c := conf.CreateNew()
	for _, opt := range condFunctionOptions() {
		opt(c)
	}
	fns := c.Functions
	return func(c *conf.Config) {
		if len(c.Functions) == 0 {
			// Shared, not copied: expr writes a config's functions only
			// in its Function option, which compileExpr never applies.
			c.Functions = fns
			return
		}
		maps.Copy(c.Functions, fns)
	}
}()

// condFunctionOptions are the value functions as expr options.
func condFunctionOptions() []expr.Option {
	var opts []expr.Option
	for _, name := range slices.Sorted(maps.Keys(functions)) {
		if _, excluded := condExcluded[name]; excluded {
			continue
		}
		if _, ok := builtin.Index[name]; ok && !condOverrides[name] {
			continue
		}
		f := functions[name]
		callName := name
		if name == "contains" {
			callName = containsCall
		}
		call := func(args ...any) (any, error) { return callValueFunc(name, f, args) }
		if name == "join" {
			call = func(args ...any) (any, error) {
				// join(list) and join(list, sep), expr's order.
				if len(args) > 0 {
					if _, isList := args[0].([]any); isList {
						sep := any("")
						if len(args) > 1 {
							sep = args[1]
						}
						args = []any{sep, args[0]}
					}
				}
				return callValueFunc(name, f, args)
			}
		}
		opts = append(opts, expr.Function(callName, call))
	}
	return opts
}

// ConditionFunction says whether a condition may call the named function,
// and if not, why (for the functions of values that conditions leave
// out).
func ConditionFunction(name string) (ok bool, why string) {
	if why, excluded := condExcluded[name]; excluded {
		return false, why
	}
	if _, ok := functions[name]; ok {
		return true, ""
	}
	_, ok = builtin.Index[name]
	return ok, ""
}

// callValueFunc calls a value function with a condition's arguments.
func callValueFunc(name string, f function.Function, args []any) (any, error) {
	// Each argument is converted to its parameter's type first, as an
	// HCL function call does.
	params, varParam := f.Params(), f.VarParam()
	vals := make([]cty.Value, len(args))
	for i, a := range args {
		v, err := ctyOf(a)
		if err != nil {
			return nil, fmt.Errorf("%s(): argument %d: %w", name, i+1, err)
		}
		p := varParam
		if i < len(params) {
			p = &params[i]
		}
		if p != nil && !p.Type.Equals(cty.DynamicPseudoType) {
			if v, err = convert.Convert(v, p.Type); err != nil {
				return nil, fmt.Errorf("%s(): argument %d (%s): %w", name, i+1, p.Name, err)
			}
		}
		vals[i] = v
	}
	out, err := f.Call(vals)
	if err != nil {
		return nil, fmt.Errorf("%s(): %w", name, err)
	}
	return condValue(out), nil
}

// condValue is ExprValue, with whole numbers as int so that a function's
// result can index a list.
func condValue(v cty.Value) any {
	if v != cty.NilVal && v.IsKnown() && !v.IsNull() && v.Type() == cty.Number {
		if i, acc := v.AsBigFloat().Int64(); acc == big.Exact && int64(int(i)) == i {
			return int(i)
		}
	}
	return ExprValue(v)
}

// ctyOf converts a value a condition holds to a cty value: lists become
// tuples and maps objects, which the value functions accept wherever
// they take a list or a map.
func ctyOf(a any) (cty.Value, error) {
	switch a := a.(type) {
	case nil:
		return cty.NullVal(cty.DynamicPseudoType), nil
	case string:
		return cty.StringVal(a), nil
	case bool:
		return cty.BoolVal(a), nil
	case int:
		return cty.NumberIntVal(int64(a)), nil
	case int64:
		return cty.NumberIntVal(a), nil
	case int32:
		return cty.NumberIntVal(int64(a)), nil
	case uint:
		return cty.NumberUIntVal(uint64(a)), nil
	case uint64:
		return cty.NumberUIntVal(a), nil
	case float64:
		return cty.NumberFloatVal(a), nil
	case float32:
		return cty.NumberFloatVal(float64(a)), nil
	case []any:
		if len(a) == 0 {
			return cty.EmptyTupleVal, nil
		}
		vals := make([]cty.Value, len(a))
		for i, e := range a {
			v, err := ctyOf(e)
			if err != nil {
				return cty.NilVal, err
			}
			vals[i] = v
		}
		return cty.TupleVal(vals), nil
	case []string:
		vals := make([]any, len(a))
		for i, s := range a {
			vals[i] = s
		}
		return ctyOf(vals)
	case map[string]any:
		if len(a) == 0 {
			return cty.EmptyObjectVal, nil
		}
		vals := make(map[string]cty.Value, len(a))
		var first cty.Type
		same := true
		for k, e := range a {
			v, err := ctyOf(e)
			if err != nil {
				return cty.NilVal, err
			}
			vals[k] = v
			if first == cty.NilType {
				first = v.Type()
			}
			same = same && v.Type().Equals(first) && !v.IsNull()
		}
		// A map whose values are alike is a map, as a map(T) value is in
		// HCL (length() and the other map functions take it); otherwise
		// an object.
		if same {
			return cty.MapVal(vals), nil
		}
		return cty.ObjectVal(vals), nil
	}
	return cty.NilVal, fmt.Errorf("a value of Go type %T has no HCL form", a)
}

// renameContainsCalls renames each call of contains in a condition's
// source to containsCall, leaving the contains operator, string literals
// and member names (x.contains) alone.
func renameContainsCalls(src string) string {
	const word = "contains"
	if !strings.Contains(src, word+"(") && !strings.Contains(src, word+" (") {
		return src
	}
	b := []byte(src)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"' || c == '\'' || c == '`':
			// Skip the string literal, escapes included.
			for i++; i < len(b) && b[i] != c; i++ {
				if b[i] == '\\' && c != '`' {
					i++
				}
			}
		case isWordByte(c):
			j := i
			for j < len(b) && isWordByte(b[j]) {
				j++
			}
			if string(b[i:j]) == word && (i == 0 || b[i-1] != '.') {
				k := j
				for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r') {
					k++
				}
				if k < len(b) && b[k] == '(' {
					copy(b[i:j], containsCall)
				}
			}
			i = j - 1
		}
	}
	return string(b)
}

// splitOrderError reports a split call written in expr-lang's argument
// order, split(s, ","), which the value function would read as splitting
// "," at s: the separator comes first, as in values.
func splitOrderError(root ast.Node) string {
	var msg string
	ast.Find(root, func(n ast.Node) bool {
		// Parsed without the functions, split is expr's builtin.
		call, ok := n.(*ast.BuiltinNode)
		if !ok || call.Name != "split" || len(call.Arguments) != 2 {
			return false
		}
		_, firstLit := call.Arguments[0].(*ast.StringNode)
		sep, secondLit := call.Arguments[1].(*ast.StringNode)
		if secondLit && !firstLit {
			msg = fmt.Sprintf("split takes its separator first, as in values: split(%q, %s)", sep.Value, call.Arguments[0].String())
			return true
		}
		return false
	})
	return msg
}

// valueSpelling is the value function that does what an expr-lang
// builtin of another name does, for "did you mean" in values.
var valueSpelling = map[string]string{
	"len":        "length",
	"hasPrefix":  "startswith",
	"hasSuffix":  "endswith",
	"trimPrefix": "trimprefix",
	"trimSuffix": "trimsuffix",
	"toJSON":     "jsonencode",
	"fromJSON":   "jsondecode",
	"toBase64":   "base64encode",
	"fromBase64": "base64decode",
	"uniq":       "distinct",
	"string":     "tostring",
	"int":        "tonumber",
	"float":      "tonumber",
	"get":        "lookup",
	"all":        "alltrue",
	"any":        "anytrue",
}

// valueFunctionHint is the "did you mean" for a call of an unknown
// function in a value: the value function an expr-lang builtin's name
// stands for, a for expression for the builtins that take a predicate,
// or the nearest value function's name.
func valueFunctionHint(name string) string {
	switch name {
	case "filter", "map", "count", "find", "all", "any", "none", "one":
		alt := ""
		if v := valueSpelling[name]; v != "" {
			alt = fmt.Sprintf(" or %s([for x in LIST : CONDITION])", v)
		}
		return fmt.Sprintf(" %s is a condition (expr-lang) builtin; in a value, use a for expression: [for x in LIST : x if CONDITION]%s.", name, alt)
	}
	if v := valueSpelling[name]; v != "" {
		return fmt.Sprintf(" %s is a condition (expr-lang) builtin; in a value, did you mean %q?", name, v)
	}
	return didYouMean(name, slices.Sorted(maps.Keys(functions)))
}

// conditionFunctionHint is the "did you mean" for an unknown name called
// as a function in a condition.
func conditionFunctionHint(name string) string {
	if why, ok := condExcluded[name]; ok {
		return fmt.Sprintf(" %s() is a value function that conditions cannot call: %s.", name, why)
	}
	names := slices.DeleteFunc(allFunctionNames(), func(n string) bool { _, ex := condExcluded[n]; return ex })
	return didYouMean(name, names)
}

// allFunctionNames are the names of every function of either language,
// sorted (expr's now, which conditions cannot call, left out).
func allFunctionNames() []string {
	names := slices.Collect(maps.Keys(functions))
	for n := range builtin.Index {
		if n != "now" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// FunctionTable is the table of spec/language.md's "Functions": every
// function of either language, where a playbook may call it, and what it
// does, in Markdown.
func FunctionTable() string {
	names := allFunctionNames()
	var b strings.Builder
	b.WriteString("| function | in values | in conditions | what it does |\n|---|---|---|---|\n")
	for _, n := range names {
		f, isValue := functions[n]
		_, isExpr := builtin.Index[n]
		inValues, inConds, what := "", "yes", ""
		switch {
		case isValue:
			inValues = "yes"
			what = firstSentence(f.Description())
			if d := descriptions[n]; d != "" {
				what = d
			}
			if why, excluded := condExcluded[n]; excluded {
				inConds = "no: " + why
			} else if isExpr && !condOverrides[n] {
				inConds = "yes (expr-lang's builtin, same meaning)"
			}
		default:
			what = descriptions[n]
			if what == "" {
				what = "An expr-lang builtin."
			}
			if v := valueSpelling[n]; v != "" {
				inValues = "no: `" + v + "`"
			} else {
				inValues = "no"
			}
		}
		switch n {
		case "keys", "values":
			what += " Sorted by key in both languages."
		case "join":
			inConds += ", also in expr's order `join(list, sep)`"
		case "split":
			inConds += ": the separator first, as in values"
		case "contains":
			what += " (In conditions `s contains sub` is also expr's string operator.)"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", n, inValues, inConds, strings.TrimSpace(what))
	}
	return b.String()
}

// firstSentence is a function description's first sentence.
func firstSentence(s string) string {
	s = strings.ReplaceAll(strings.Join(strings.Fields(s), " "), `\"`, `"`)
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// descriptions say what a function does where its library does not say
// it (expr-lang's builtins, the functions written here) or says it
// wrong.
var descriptions = map[string]string{
	"alltrue":      "Whether every element of a list of bools is true (true for an empty list).",
	"anytrue":      "Whether any element of a list of bools is true.",
	"base64decode": "Decodes a Base64 string.",
	"base64encode": "Encodes a string as Base64.",
	"can":          "Whether its argument evaluates without an error.",
	"endswith":     "Whether a string ends with the given suffix.",
	"md5":          "The MD5 hash of a string, in hexadecimal.",
	"sha1":         "The SHA-1 hash of a string, in hexadecimal.",
	"sha256":       "The SHA-256 hash of a string, in hexadecimal.",
	"sha512":       "The SHA-512 hash of a string, in hexadecimal.",
	"startswith":   "Whether a string starts with the given prefix.",
	"trimsuffix":   "Removes the given suffix from the end of the given string, if present.",
	"try":          "The first of its arguments that evaluates without an error.",
	"urlencode":    "Escapes a string for use in a URL query.",
	"uuid":         "A new random UUID (version 4).",
	"uuidv5":       "A name-based UUID (version 5) in a namespace.",

	"all":           "Whether a predicate holds for every element: all(list, # > 0).",
	"any":           "Whether a predicate holds for some element: any(list, .pass).",
	"bitand":        "Bitwise and of two integers.",
	"bitnand":       "Bitwise and-not of two integers.",
	"bitnot":        "Bitwise not of an integer.",
	"bitor":         "Bitwise or of two integers.",
	"bitshl":        "Shifts an integer left by n bits.",
	"bitshr":        "Shifts an integer right by n bits, keeping its sign.",
	"bitushr":       "Shifts an integer right by n bits, as unsigned.",
	"bitxor":        "Bitwise exclusive or of two integers.",
	"count":         "How many elements a predicate holds for.",
	"date":          "Parses a date string into a date.",
	"duration":      "Parses a duration string (\"1h30m\") into a duration.",
	"filter":        "The elements a predicate holds for.",
	"find":          "The first element a predicate holds for, or nil.",
	"findIndex":     "The index of the first element a predicate holds for, or -1.",
	"findLast":      "The last element a predicate holds for, or nil.",
	"findLastIndex": "The index of the last element a predicate holds for, or -1.",
	"first":         "The first element of a list, or nil.",
	"float":         "Converts a number or string to a float.",
	"fromBase64":    "Decodes a Base64 string.",
	"fromJSON":      "Parses a JSON string.",
	"fromPairs":     "A map from a list of [key, value] pairs.",
	"get":           "The element at an index or key, or nil.",
	"groupBy":       "A map of the elements by the value a closure gives each.",
	"hasPrefix":     "Whether a string starts with a prefix.",
	"hasSuffix":     "Whether a string ends with a suffix.",
	"indexOf":       "The index of the first occurrence of a substring, or -1.",
	"int":           "Converts a number or string to an integer.",
	"last":          "The last element of a list, or nil.",
	"lastIndexOf":   "The index of the last occurrence of a substring, or -1.",
	"len":           "The length of a list, map or string.",
	"map":           "The values a closure gives each element.",
	"mean":          "The mean of a list of numbers.",
	"median":        "The median of a list of numbers.",
	"none":          "Whether a predicate holds for no element.",
	"one":           "Whether a predicate holds for exactly one element.",
	"reduce":        "Folds a list with a closure (#acc is the accumulator).",
	"repeat":        "A string repeated n times.",
	"round":         "A number rounded to the nearest integer.",
	"sortBy":        "A list sorted by the value a closure gives each element.",
	"splitAfter":    "Splits a string after each separator.",
	"string":        "Converts a value to a string.",
	"take":          "The first n elements of a list.",
	"timezone":      "A time zone by name.",
	"toBase64":      "Encodes a string as Base64.",
	"toJSON":        "Encodes a value as JSON.",
	"toPairs":       "A map's [key, value] pairs.",
	"trimPrefix":    "Removes a prefix from a string.",
	"trimSuffix":    "Removes a suffix from a string.",
	"type":          "The name of a value's type.",
	"uniq":          "A list without its duplicates.",
}
