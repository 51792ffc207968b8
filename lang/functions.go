package lang

import (
	"github.com/hashicorp/hcl/v2/ext/tryfunc"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

var functions = map[string]function.Function{
	"abs":        stdlib.AbsoluteFunc,
	"can":        tryfunc.CanFunc,
	"ceil":       stdlib.CeilFunc,
	"chomp":      stdlib.ChompFunc,
	"coalesce":   stdlib.CoalesceFunc,
	"compact":    stdlib.CompactFunc,
	"concat":     stdlib.ConcatFunc,
	"contains":   stdlib.ContainsFunc,
	"distinct":   stdlib.DistinctFunc,
	"element":    stdlib.ElementFunc,
	"flatten":    stdlib.FlattenFunc,
	"floor":      stdlib.FloorFunc,
	"format":     stdlib.FormatFunc,
	"formatlist": stdlib.FormatListFunc,
	"indent":     stdlib.IndentFunc,
	"join":       stdlib.JoinFunc,
	"jsondecode": stdlib.JSONDecodeFunc,
	"jsonencode": stdlib.JSONEncodeFunc,
	"keys":       stdlib.KeysFunc,
	"length":     stdlib.LengthFunc,
	"lookup":     stdlib.LookupFunc,
	"lower":      stdlib.LowerFunc,
	"max":        stdlib.MaxFunc,
	"merge":      stdlib.MergeFunc,
	"min":        stdlib.MinFunc,
	"range":      stdlib.RangeFunc,
	"regex":      stdlib.RegexFunc,
	"replace":    stdlib.ReplaceFunc,
	"reverse":    stdlib.ReverseListFunc,
	"slice":      stdlib.SliceFunc,
	"sort":       stdlib.SortFunc,
	"split":      stdlib.SplitFunc,
	"strlen":     stdlib.StrlenFunc,
	"substr":     stdlib.SubstrFunc,
	"title":      stdlib.TitleFunc,
	"tonumber":   stdlib.MakeToFunc(ctyNumber),
	"tostring":   stdlib.MakeToFunc(ctyString),
	"trim":       stdlib.TrimFunc,
	"trimspace":  stdlib.TrimSpaceFunc,
	"try":        tryfunc.TryFunc,
	"upper":      stdlib.UpperFunc,
	"values":     stdlib.ValuesFunc,
	"zipmap":     stdlib.ZipmapFunc,
}

// Functions returns the functions every playbook expression may call. The
// map is shared: callers must not modify it. file() is not among them: it
// is read when the playbook loads (see spec/language.md, "prompt").
func Functions() map[string]function.Function { return functions }
