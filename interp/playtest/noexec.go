package playtest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/apl-lang/apl/builtins"
	"github.com/zclconf/go-cty/cty"
)

// A test's shell steps without a mock run for real, as go test runs the
// code it tests: a test of an untrusted playbook runs whatever its
// scripts say. With Options.NoExec a test starts no program at all. A
// step that would (a shell step without a mock, or a git.* call, since
// git runs the hooks and configuration of the repository it is in, which
// a test's own file.write steps could have planted) fails, and so does
// its test, whatever the test expects.

// errNoExec is the failure of a step that NoExec stopped.
var errNoExec = errors.New("no program may run")

// refusals records the steps NoExec stopped, in order, once each.
type refusals struct {
	mu    sync.Mutex
	steps []string
	what  map[string]string
}

func (r *refusals) add(step, what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.what[step]; ok {
		return
	}
	if r.what == nil {
		r.what = map[string]string{}
	}
	r.steps = append(r.steps, step)
	r.what[step] = what
}

// mismatches are the test's failures for the steps NoExec stopped.
func (r *refusals) mismatches() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.steps {
		out = append(out, fmt.Sprintf("step %s: %s without a mock; with NoExec (apl test --no-exec) a test runs no program, so mock the step", s, r.what[s]))
	}
	return out
}

// refusingShell stands for the real shell: it runs nothing.
type refusingShell struct{ r *refusals }

func (s refusingShell) Run(_ context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	s.r.add(spec.Step, "a shell step")
	res := builtins.ShellResult{ExitCode: -1, Output: cty.NullVal(cty.DynamicPseudoType)}
	return res, fmt.Errorf("step %s is a shell step without a mock: %w", spec.Step, errNoExec)
}

// refusingGit stands for the git binary behind the git.* builtins.
type refusingGit struct{}

func (refusingGit) Run(context.Context, string, ...string) (string, error) {
	return "", fmt.Errorf("git: %w", errNoExec)
}

// wrap records the steps whose builtins NoExec stopped: those that reached
// refusingGit.
func (r *refusals) wrap(funcs builtins.Registry) builtins.Registry {
	out := make(builtins.Registry, len(funcs))
	for name, f := range funcs {
		out[name] = func(ctx context.Context, env builtins.Env, args cty.Value) (cty.Value, error) {
			v, err := f(ctx, env, args)
			if errors.Is(err, errNoExec) {
				r.add(env.Step, fmt.Sprintf("a %s call, which runs git,", name))
			}
			return v, err
		}
	}
	return out
}
