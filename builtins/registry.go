package builtins

import (
	"context"
	"fmt"
	"sort"

	"github.com/zclconf/go-cty/cty"
)

// Env is what a builtin may know about the run that calls it.
type Env struct {
	// Workdir is the project root: relative paths resolve against it and
	// sandboxed commands may not leave it.
	Workdir string
	// RunID is the id of the calling run.
	RunID string
	// Step is the name of the calling step.
	Step string
}

// Func is a builtin callable from a step as `call "NAME" { args = {...} }`.
// Args is an object value; the result is any cty value (usually an object)
// that becomes the step's output.
type Func func(ctx context.Context, env Env, args cty.Value) (cty.Value, error)

// Registry maps builtin names ("file.sha256", "git.head", ...) to functions.
// A registry is built once and only read afterwards, so it is safe to share.
type Registry map[string]Func

// Names returns the registered names, sorted.
func (r Registry) Names() []string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Call runs the named builtin.
func (r Registry) Call(ctx context.Context, name string, env Env, args cty.Value) (cty.Value, error) {
	f, ok := r[name]
	if !ok {
		return cty.NilVal, fmt.Errorf("unknown builtin %q", name)
	}
	return f(ctx, env, args)
}
