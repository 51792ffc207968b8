package interp

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// shellAction runs a shell action. A non-zero exit fails the step; the
// exit code and parsed output are recorded either way.
func (r *run) shellAction(ctx context.Context, f *frame, s *lang.Step, a *lang.Shell, rec *StepRecord) (cty.Value, error) {
	ectx := r.evalCtx(f, nil, a.Command, a.Script, a.Dir, a.Env, a.Stdin)
	spec := builtins.ShellSpec{Step: s.Name, Parse: string(a.Parse), Timeout: r.limit(s).d}
	var input string
	if a.Command != nil {
		v, diags := a.Command.Value(ectx)
		if diags.HasErrors() {
			return cty.NilVal, diagsError(diags)
		}
		argv, err := stringList(v)
		if err != nil || len(argv) == 0 {
			return cty.NilVal, fmt.Errorf("%s: command must be a non-empty list of strings", a.Command.Range())
		}
		spec.Command = argv
		input = strings.Join(argv, " ")
	} else {
		script, err := renderScript(a.Script, ectx)
		if err != nil {
			return cty.NilVal, err
		}
		spec.Script = script
		input = script
	}
	if a.Dir != nil {
		dir, err := evalString(a.Dir, ectx)
		if err != nil {
			return cty.NilVal, err
		}
		spec.Dir = dir
	}
	if a.Env != nil {
		v, diags := a.Env.Value(ectx)
		if diags.HasErrors() {
			return cty.NilVal, diagsError(diags)
		}
		env, err := stringMap(v)
		if err != nil {
			return cty.NilVal, fmt.Errorf("%s: env: %w", a.Env.Range(), err)
		}
		keys := make([]string, 0, len(env))
		for k := range env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			spec.Env = append(spec.Env, k+"="+env[k])
		}
	}
	if a.Stdin != nil {
		in, err := evalString(a.Stdin, ectx)
		if err != nil {
			return cty.NilVal, err
		}
		spec.Stdin = in
	}

	start := r.now()
	if k := f.key(); k != "" {
		spec.Env = append(spec.Env, "APL_ITEM_KEY="+k)
	}
	base := artifactBase(f, s, rec.Runs)
	before := bootTicks() // the process starts after this
	spec.Started = func(pid int) {
		r.dir.procStarted(base, pid, before)
		r.host.waiting(r.st, &r.changes)
	}
	if out := r.opts.Output; out != nil {
		step, item := s.Name, f.key()
		spec.Live = func(stderr bool, line string) { out(step, item, stderr, r.redact.String(line)) }
	}
	var res builtins.ShellResult
	var err error
	r.host.block(func() { res, err = r.shell.Run(ctx, spec) })
	r.dir.procEnded(base)
	artifact := ""
	if res.Stdout != "" {
		artifact = r.artifact(s, base+".stdout", []byte(res.Stdout))
	}
	if res.Stderr != "" {
		r.artifact(s, base+".stderr", []byte(res.Stderr))
	}
	code := res.ExitCode
	rec.ExitCode = &code
	if err == nil && res.ExitCode != 0 {
		err = withKind(agent.KindExitStatus, fmt.Errorf("exit status %d%s", res.ExitCode, stderrExcerpt(res.Stderr)))
	}
	r.traceLater(s, Span{Step: s.Name, Item: f.key(), Action: "command_run", Attempt: rec.Runs, Artifact: artifact,
		InputSummary: input, OutputSummary: exitSummary(res)}, start, err)
	out := res.Output
	if out == cty.NilVal {
		out = cty.NullVal(cty.DynamicPseudoType)
	}
	return out, err
}

// exitSummary is what a command's span says of its result before it is
// summarized: "exit N:" and the head of its output.
func exitSummary(res builtins.ShellResult) string {
	out := "exit " + strconv.Itoa(res.ExitCode) + ":"
	if res.Stdout == "" {
		return out
	}
	// summarize reads no further than this.
	return out + " " + res.Stdout[:min(len(res.Stdout), 4096)]
}

// artifactBase names a step attempt's artifacts: STEP-N, or
// STEP.ITEM-N inside a for_each.
func artifactBase(f *frame, s *lang.Step, n int) string {
	if k := f.key(); k != "" {
		return s.Name + "." + safeName(k) + "-" + strconv.Itoa(n)
	}
	return s.Name + "-" + strconv.Itoa(n)
}

// stderrExcerpt is the first 500 characters of stderr (the sandbox
// policy's excerpt), for error messages.
func stderrExcerpt(stderr string) string {
	stderr = strings.TrimSpace(stderr)
	if stderr == "" {
		return ""
	}
	if len(stderr) > 500 {
		stderr = stderr[:500] + "..."
	}
	return ": " + stderr
}

func stringList(v cty.Value) ([]string, error) {
	if v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
		return nil, fmt.Errorf("want a list of strings, got %s", v.Type().FriendlyName())
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		s, err := toString(ev)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func stringMap(v cty.Value) (map[string]string, error) {
	if v.IsNull() || !(v.Type().IsMapType() || v.Type().IsObjectType()) {
		return nil, fmt.Errorf("want an object of strings, got %s", v.Type().FriendlyName())
	}
	out := map[string]string{}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		s, err := toString(ev)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.AsString(), err)
		}
		out[k.AsString()] = s
	}
	return out, nil
}
