package builtins

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// FuncOptions supplies the outside world the Funcs reach, so a test can
// substitute a fake for it.
type FuncOptions struct {
	// Git runs git for the git.* builtins; nil means ExecGit{}.
	Git Git
}

// Funcs returns the builtins the stdlib protocols need, wired to the real
// file system and the git binary on PATH.
func Funcs() Registry { return NewFuncs(FuncOptions{}) }

// NewFuncs returns the same builtins as Funcs with the given dependencies.
// Every builtin takes an object of named arguments, refuses names it does
// not know (a misspelt optional argument would otherwise be silently
// ignored), resolves relative paths against Env.Workdir without letting them
// leave it, and returns an object. Errors start with the builtin's name.
func NewFuncs(opts FuncOptions) Registry {
	if opts.Git == nil {
		opts.Git = ExecGit{}
	}
	defs := funcDefs(gitFuncs{git: opts.Git})
	r := make(Registry, len(defs))
	for name, d := range defs {
		r[name] = d.bind(name)
	}
	return r
}

// funcDefs lists the builtins with their parameters; signatures describes
// the same ones.
func funcDefs(g gitFuncs) map[string]funcDef {
	return map[string]funcDef{
		"file.sha256":  {[]string{"path"}, fileSHA256},
		"file.read":    {[]string{"path"}, fileRead},
		"file.write":   {[]string{"path", "content", "mode"}, fileWrite},
		"file.append":  {[]string{"path", "content"}, fileAppend},
		"file.symlink": {[]string{"path", "target"}, fileSymlink},
		"jsonl.append": {[]string{"path", "record"}, jsonlAppend},
		"json.read":    {[]string{"path"}, jsonRead},
		"glob":         {[]string{"pattern"}, globFunc},

		"git.head":         {nil, g.head},
		"git.status":       {nil, g.status},
		"git.diff_stat":    {[]string{"from", "to"}, g.diffStat},
		"git.log":          {[]string{"range", "max"}, g.log},
		"git.commit_range": {[]string{"from", "to"}, g.commitRange},
		"git.revert":       {[]string{"from", "to", "branch", "message"}, g.revert},
	}
}

// funcDef is a builtin before its argument checking is wrapped around it.
type funcDef struct {
	params []string
	run    func(ctx context.Context, env Env, a args) (cty.Value, error)
}

func (d funcDef) bind(name string) Func {
	return func(ctx context.Context, env Env, v cty.Value) (cty.Value, error) {
		a, err := newArgs(v, d.params)
		if err == nil {
			var out cty.Value
			if out, err = d.run(ctx, env, a); err == nil {
				return out, nil
			}
		}
		return cty.NilVal, fmt.Errorf("%s: %w", name, err)
	}
}

// args is a builtin's argument object, with null attributes treated as
// absent so `mode = null` means the default.
type args map[string]cty.Value

func newArgs(v cty.Value, params []string) (args, error) {
	if v == cty.NilVal || v.IsNull() {
		return args{}, nil
	}
	if !v.IsWhollyKnown() {
		return nil, errors.New("arguments are not known yet")
	}
	ty := v.Type()
	if !ty.IsObjectType() && !ty.IsMapType() {
		return nil, fmt.Errorf("arguments must be an object, not %s", ty.FriendlyName())
	}
	a := args{}
	for it := v.ElementIterator(); it.Next(); {
		k, e := it.Element()
		name := k.AsString()
		if !slices.Contains(params, name) {
			return nil, unsupported(name, params)
		}
		if !e.IsNull() {
			a[name] = e
		}
	}
	return a, nil
}

func unsupported(name string, params []string) error {
	if len(params) == 0 {
		return fmt.Errorf("unsupported argument %q: this builtin takes no arguments", name)
	}
	sorted := append([]string(nil), params...)
	sort.Strings(sorted)
	return fmt.Errorf("unsupported argument %q; the arguments are %s", name, strings.Join(quoteAll(sorted), ", "))
}

// str returns a string argument; numbers and bools convert, as they would
// in an HCL string template.
func (a args) str(name string) (string, bool, error) {
	v, ok := a[name]
	if !ok {
		return "", false, nil
	}
	s, err := convert.Convert(v, cty.String)
	if err != nil {
		return "", false, fmt.Errorf("argument %q must be a string, not %s", name, v.Type().FriendlyName())
	}
	return s.AsString(), true, nil
}

func (a args) required(name string) (string, error) {
	s, ok, err := a.str(name)
	if err != nil {
		return "", err
	}
	if !ok || s == "" {
		return "", fmt.Errorf("argument %q is required", name)
	}
	return s, nil
}

// text is a required string argument that may be empty, like a file's
// content.
func (a args) text(name string) (string, error) {
	s, ok, err := a.str(name)
	if err == nil && !ok {
		err = fmt.Errorf("argument %q is required", name)
	}
	return s, err
}

// positiveInt returns a whole-number argument greater than zero, or 0 when
// it is absent.
func (a args) positiveInt(name string) (int, error) {
	v, ok := a[name]
	if !ok {
		return 0, nil
	}
	n, err := convert.Convert(v, cty.Number)
	if err != nil {
		return 0, fmt.Errorf("argument %q must be a number, not %s", name, v.Type().FriendlyName())
	}
	i, acc := n.AsBigFloat().Int64()
	if acc != big.Exact || i < 1 || i > 1<<31 {
		return 0, fmt.Errorf("argument %q must be a whole number greater than zero, not %s", name, n.AsBigFloat().Text('g', -1))
	}
	return int(i), nil
}

// mode reads a permission argument. HCL has no octal literals, so both
// "0644" and 644 mean rw-r--r--: the digits are always read as octal.
func (a args) mode(name string) (uint32, bool, error) {
	s, ok, err := a.str(name)
	if err != nil || !ok {
		return 0, false, err
	}
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || m > 0o777 {
		return 0, false, fmt.Errorf("argument %q must be octal permission digits such as \"0644\", not %q", name, s)
	}
	return uint32(m), true, nil
}

func quoteAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = strconv.Quote(s)
	}
	return out
}

// stringList builds a list of strings that is well-typed even when empty,
// so HCL expressions such as length() work on every result.
func stringList(items []string) cty.Value {
	if len(items) == 0 {
		return cty.ListValEmpty(cty.String)
	}
	vals := make([]cty.Value, len(items))
	for i, s := range items {
		vals[i] = cty.StringVal(s)
	}
	return cty.ListVal(vals)
}

// objectList is stringList for lists of objects of type ty.
func objectList(ty cty.Type, items []cty.Value) cty.Value {
	if len(items) == 0 {
		return cty.ListValEmpty(ty)
	}
	return cty.ListVal(items)
}
