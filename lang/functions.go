package lang

import (
	"errors"
	"fmt"
	"maps"
	"math/big"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-cty-funcs/crypto"
	"github.com/hashicorp/go-cty-funcs/encoding"
	ctyuuid "github.com/hashicorp/go-cty-funcs/uuid"
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// The functions are go-cty's stdlib and HashiCorp's go-cty-funcs under
// the names Terraform gives them, so that they behave as people who know
// Terraform expect. The few Terraform has that neither library holds
// (replace with a /regex/, sum, alltrue, anytrue, startswith, endswith,
// timestamp) are written here, after Terraform's.
var functions = map[string]function.Function{
	"abs":                    stdlib.AbsoluteFunc,
	"alltrue":                allTrueFunc,
	"anytrue":                anyTrueFunc,
	"base64decode":           encoding.Base64DecodeFunc,
	"base64encode":           encoding.Base64EncodeFunc,
	"can":                    tryfunc.CanFunc,
	"ceil":                   stdlib.CeilFunc,
	"chomp":                  stdlib.ChompFunc,
	"chunklist":              stdlib.ChunklistFunc,
	"coalesce":               stdlib.CoalesceFunc,
	"coalescelist":           stdlib.CoalesceListFunc,
	"compact":                stdlib.CompactFunc,
	"concat":                 stdlib.ConcatFunc,
	"contains":               stdlib.ContainsFunc,
	"csvdecode":              stdlib.CSVDecodeFunc,
	"distinct":               stdlib.DistinctFunc,
	"element":                stdlib.ElementFunc,
	"endswith":               endsWithFunc,
	"flatten":                stdlib.FlattenFunc,
	"floor":                  stdlib.FloorFunc,
	"format":                 stdlib.FormatFunc,
	"formatdate":             stdlib.FormatDateFunc,
	"formatlist":             stdlib.FormatListFunc,
	"indent":                 stdlib.IndentFunc,
	"join":                   stdlib.JoinFunc,
	"jsondecode":             stdlib.JSONDecodeFunc,
	"jsonencode":             stdlib.JSONEncodeFunc,
	"keys":                   stdlib.KeysFunc,
	"length":                 stdlib.LengthFunc,
	"log":                    stdlib.LogFunc,
	"lookup":                 stdlib.LookupFunc,
	"lower":                  stdlib.LowerFunc,
	"max":                    stdlib.MaxFunc,
	"md5":                    crypto.Md5Func,
	"merge":                  stdlib.MergeFunc,
	"min":                    stdlib.MinFunc,
	"parseint":               stdlib.ParseIntFunc,
	"pow":                    stdlib.PowFunc,
	"range":                  stdlib.RangeFunc,
	"regex":                  stdlib.RegexFunc,
	"regexall":               stdlib.RegexAllFunc,
	"regex_replace":          stdlib.RegexReplaceFunc,
	"replace":                replaceFunc,
	"reverse":                stdlib.ReverseListFunc,
	"setintersection":        stdlib.SetIntersectionFunc,
	"setproduct":             stdlib.SetProductFunc,
	"setsubtract":            stdlib.SetSubtractFunc,
	"setsymmetricdifference": stdlib.SetSymmetricDifferenceFunc,
	"setunion":               stdlib.SetUnionFunc,
	"sha1":                   crypto.Sha1Func,
	"sha256":                 crypto.Sha256Func,
	"sha512":                 crypto.Sha512Func,
	"signum":                 stdlib.SignumFunc,
	"slice":                  stdlib.SliceFunc,
	"sort":                   stdlib.SortFunc,
	"split":                  stdlib.SplitFunc,
	"startswith":             startsWithFunc,
	"strlen":                 stdlib.StrlenFunc,
	"strrev":                 stdlib.ReverseFunc,
	"substr":                 stdlib.SubstrFunc,
	"sum":                    sumFunc,
	"timeadd":                stdlib.TimeAddFunc,
	"timestamp":              timestampFunc(nil),
	"title":                  stdlib.TitleFunc,
	"tobool":                 stdlib.MakeToFunc(cty.Bool),
	"tolist":                 stdlib.MakeToFunc(cty.List(cty.DynamicPseudoType)),
	"tomap":                  stdlib.MakeToFunc(cty.Map(cty.DynamicPseudoType)),
	"tonumber":               stdlib.MakeToFunc(ctyNumber),
	"toset":                  stdlib.MakeToFunc(cty.Set(cty.DynamicPseudoType)),
	"tostring":               stdlib.MakeToFunc(ctyString),
	"trim":                   stdlib.TrimFunc,
	"trimprefix":             stdlib.TrimPrefixFunc,
	"trimspace":              stdlib.TrimSpaceFunc,
	"trimsuffix":             stdlib.TrimSuffixFunc,
	"try":                    tryfunc.TryFunc,
	"upper":                  stdlib.UpperFunc,
	"urlencode":              encoding.URLEncodeFunc,
	"uuid":                   uuidFunc(nil),
	"uuidv5":                 ctyuuid.V5Func,
	"values":                 stdlib.ValuesFunc,
	"zipmap":                 stdlib.ZipmapFunc,
}

// Functions returns the functions every playbook expression may call. The
// map is shared: callers must not modify it. file() is not among them: it
// is read when the playbook loads (see spec/language.md, "prompt").
// timestamp() and uuid() are there by name but fail: their values belong
// to a run (RunFunctions), never to the playbook's constants.
func Functions() map[string]function.Function { return functions }

// Impure are what the functions whose value is not fixed by their
// arguments read: the run's clock and a source of UUIDs, so that a run on
// a fake clock gets the same timestamps every time.
type Impure struct {
	Now  func() time.Time
	UUID func() string
}

// RunFunctions returns the functions of a run: Functions, with
// timestamp() reading im.Now and uuid() im.UUID. The map is new; build it
// once per run.
func RunFunctions(im Impure) map[string]function.Function {
	m := maps.Clone(functions)
	m["timestamp"] = timestampFunc(im.Now)
	m["uuid"] = uuidFunc(im.UUID)
	return m
}

// typeCheckFunctions are the functions load-time type checks evaluate with:
// Functions, with the impure ones giving an unknown string instead of
// failing, since a run will give them a value.
var typeCheckFunctions = func() map[string]function.Function {
	m := maps.Clone(functions)
	unknown := function.New(&function.Spec{
		Type: function.StaticReturnType(cty.String),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) { return cty.UnknownVal(cty.String), nil },
	})
	for _, name := range ImpureFunctions {
		m[name] = unknown
	}
	for _, name := range []string{"regex", "regexall"} {
		m[name] = patternTyped(m[name])
	}
	return m
}()

// patternTyped is f, a function whose result type follows from its first
// argument alone (a regular expression, whose capture groups make the
// type), with the type remembered by pattern. The type checks of a load
// ask for it at every call of the function, and compiling the pattern
// each time was 4% of a load. Its unknown results are never null, as f's
// are (regex and regexall refine them so).
func patternTyped(f function.Function) function.Function {
	type typed struct {
		ty  cty.Type
		err error
	}
	var mu sync.Mutex
	types := map[string]typed{}
	return function.New(&function.Spec{
		Description: f.Description(),
		Params:      f.Params(),
		VarParam:    f.VarParam(),
		Type: func(args []cty.Value) (cty.Type, error) {
			if !args[0].IsWhollyKnown() || args[0].IsNull() {
				return f.ReturnTypeForValues(args)
			}
			pattern := args[0].AsString()
			mu.Lock()
			t, ok := types[pattern]
			mu.Unlock()
			if ok {
				return t.ty, t.err
			}
			t.ty, t.err = f.ReturnTypeForValues(args)
			mu.Lock()
			if len(types) < 1024 { // bounded: patterns come from the playbooks a process loads
				types[pattern] = t
			}
			mu.Unlock()
			return t.ty, t.err
		},
		RefineResult: func(b *cty.RefinementBuilder) *cty.RefinementBuilder { return b.NotNull() },
		Impl:         func(args []cty.Value, _ cty.Type) (cty.Value, error) { return f.Call(args) },
	})
}

// ImpureFunctions are the functions whose value depends on when or where
// they are called.
var ImpureFunctions = []string{"timestamp", "uuid"}

var errNotInRun = errors.New("its value belongs to a run; it cannot be part of a constant")

// timestampFunc is Terraform's timestamp(): the time now, in UTC, as an
// RFC 3339 string.
func timestampFunc(now func() time.Time) function.Function {
	return function.New(&function.Spec{
		Description: "The current time, in UTC, as an RFC 3339 string.",
		Type:        function.StaticReturnType(cty.String),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			if now == nil {
				return cty.UnknownVal(cty.String), fmt.Errorf("timestamp(): %w", errNotInRun)
			}
			return cty.StringVal(now().UTC().Format(time.RFC3339)), nil
		},
	})
}

// uuidFunc is Terraform's uuid(): a new random (version 4) UUID.
func uuidFunc(gen func() string) function.Function {
	return function.New(&function.Spec{
		Description: "A new random UUID (version 4).",
		Type:        function.StaticReturnType(cty.String),
		Impl: func([]cty.Value, cty.Type) (cty.Value, error) {
			if gen == nil {
				return cty.UnknownVal(cty.String), fmt.Errorf("uuid(): %w", errNotInRun)
			}
			return cty.StringVal(gen()), nil
		},
	})
}

// replaceFunc is Terraform's replace: a substring wrapped in slashes is a
// regular expression (RE2), whose replacement may use $1 and ${name}.
var replaceFunc = function.New(&function.Spec{
	Description: "Replaces each occurrence of substr in str, or of a /regex/.",
	Params: []function.Parameter{
		{Name: "str", Type: cty.String},
		{Name: "substr", Type: cty.String},
		{Name: "replace", Type: cty.String},
	},
	Type: function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		str, substr, repl := args[0].AsString(), args[1].AsString(), args[2].AsString()
		if len(substr) > 1 && substr[0] == '/' && substr[len(substr)-1] == '/' {
			re, err := regexp.Compile(substr[1 : len(substr)-1])
			if err != nil {
				return cty.UnknownVal(cty.String), function.NewArgError(1, err)
			}
			return cty.StringVal(re.ReplaceAllString(str, repl)), nil
		}
		return cty.StringVal(strings.ReplaceAll(str, substr, repl)), nil
	},
})

// sumFunc is Terraform's sum: the sum of a list or set of numbers.
var sumFunc = function.New(&function.Spec{
	Description: "The sum of a list or set of numbers.",
	Params:      []function.Parameter{{Name: "list", Type: cty.DynamicPseudoType}},
	Type:        function.StaticReturnType(cty.Number),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		list := args[0]
		t := list.Type()
		if !(t.IsListType() || t.IsSetType() || t.IsTupleType()) {
			return cty.NilVal, function.NewArgErrorf(0, "sum needs a list or set of numbers, got %s", t.FriendlyName())
		}
		if !list.IsWhollyKnown() {
			return cty.UnknownVal(cty.Number), nil
		}
		total := new(big.Float)
		for it := list.ElementIterator(); it.Next(); {
			_, v := it.Element()
			if v.IsNull() {
				return cty.NilVal, function.NewArgErrorf(0, "sum: the list holds a null")
			}
			n, err := stdlib.MakeToFunc(cty.Number).Call([]cty.Value{v})
			if err != nil {
				return cty.NilVal, function.NewArgErrorf(0, "sum: %s is not a number", v.Type().FriendlyName())
			}
			total.Add(total, n.AsBigFloat())
		}
		return cty.NumberVal(total), nil
	},
})

// boolsFunc builds alltrue and anytrue: whether all (any) elements of a
// list of bools are true; an empty list is all true and not any.
func boolsFunc(all bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "list", Type: cty.List(cty.Bool)}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			if !args[0].IsWhollyKnown() {
				return cty.UnknownVal(cty.Bool), nil
			}
			for it := args[0].ElementIterator(); it.Next(); {
				_, v := it.Element()
				if v.IsNull() {
					continue
				}
				if v.True() != all {
					return cty.BoolVal(!all), nil
				}
			}
			return cty.BoolVal(all), nil
		},
	})
}

var (
	allTrueFunc = boolsFunc(true)
	anyTrueFunc = boolsFunc(false)
)

// affixFunc builds startswith and endswith.
func affixFunc(has func(s, affix string) bool) function.Function {
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "str", Type: cty.String}, {Name: "affix", Type: cty.String}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.BoolVal(has(args[0].AsString(), args[1].AsString())), nil
		},
	})
}

var (
	startsWithFunc = affixFunc(strings.HasPrefix)
	endsWithFunc   = affixFunc(strings.HasSuffix)
)
