package interp

import (
	"context"
	"fmt"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// DryRun makes a run walk its graph without changing the world (apl run
// --dry-run): no agent is called, no command runs and nothing is written
// in the project. Each agent, shell and call step is answered instead:
//
//   - by the caller's stand-ins, when Wrap puts some in front (apl run
//     --mocks: a test file's mocks);
//   - else by the step's declared example (lang.Step.Example);
//   - else, for builtins that only read (builtins.Declaration), by the
//     builtin itself, so a dry run sees the project as it is;
//   - else by a value made from the step's returns type, or for a call
//     the builtin's declared result type (Example).
//
// An ask step takes its default, else its first option. The run's state,
// trace and artifacts go to a throwaway directory unless Options.RunsDir
// names one, and a playbook's state block is ignored.
type DryRun struct {
	// Prompt, when set, is told each agent prompt as rendered, mocked
	// steps' included.
	Prompt func(step, item, prompt string)
	// Wrap, when set, is handed the dry run's actions and returns the ones
	// the run uses: stand-ins that answer some steps and hand the others
	// on. It is called once per run, sub-runs included.
	Wrap func(Actions) Actions
}

// Actions are the ways a run reaches the world: commands, agents and
// builtins; and Playbooks, which may answer playbook steps instead of
// their sub-runs.
type Actions struct {
	Shell     ShellRunner
	Drivers   DriverFactory
	Funcs     builtins.Registry
	Playbooks PlaybookStub
}

// dryActions puts a dry run's stand-ins in place of r's actions.
func (r *run) dryActions(base builtins.Registry) {
	d := r.opts.DryRun
	acts := Actions{Shell: dryShell{r}, Drivers: func(*lang.Agent) (agent.Driver, error) { return dryDriver{r}, nil },
		Funcs: r.dryFuncs(base), Playbooks: r.playbooks}
	if d.Wrap != nil {
		acts = d.Wrap(acts)
	}
	r.shell, r.funcs, r.drivers, r.playbooks = acts.Shell, acts.Funcs, acts.Drivers, acts.Playbooks
	if d.Prompt != nil {
		inner := r.drivers
		r.drivers = func(a *lang.Agent) (agent.Driver, error) {
			drv, err := inner(a)
			if err != nil {
				return nil, err
			}
			return promptTap{drv, d.Prompt}, nil
		}
	}
	if len(r.opts.Answers) == 0 {
		r.opts.Asker = dryAsker{}
	}
}

// dryOutput is what a dry run answers for step name: its example, else a
// value of type t.
func (r *run) dryOutput(name string, t cty.Type) cty.Value {
	if s := r.pb.Step(name); s != nil && s.Example != cty.NilVal {
		return s.Example
	}
	return Example(t)
}

// Example makes a value of type t for a dry run: "example" for strings, 0
// for numbers, true for bools, one element for lists, sets and maps, every
// attribute for objects. A value of no known type is the string "example".
func Example(t cty.Type) cty.Value {
	switch {
	case t == cty.NilType || t == cty.DynamicPseudoType || t == cty.String:
		return cty.StringVal("example")
	case t == cty.Number:
		return cty.Zero
	case t == cty.Bool:
		return cty.True
	case t.IsListType():
		return cty.ListVal([]cty.Value{Example(t.ElementType())})
	case t.IsSetType():
		return cty.SetVal([]cty.Value{Example(t.ElementType())})
	case t.IsMapType():
		return cty.MapVal(map[string]cty.Value{"example": Example(t.ElementType())})
	case t.IsObjectType():
		attrs := map[string]cty.Value{}
		for name, at := range t.AttributeTypes() {
			attrs[name] = Example(at)
		}
		return cty.ObjectVal(attrs)
	case t.IsTupleType():
		elems := make([]cty.Value, len(t.TupleElementTypes()))
		for i, et := range t.TupleElementTypes() {
			elems[i] = Example(et)
		}
		return cty.TupleVal(elems)
	}
	return cty.NullVal(t)
}

// answerText is an output as an agent or a command would print it: a
// string as it is, anything else as JSON.
func answerText(v cty.Value) (string, error) {
	if v.Type() == cty.String && !v.IsNull() {
		return v.AsString(), nil
	}
	b, err := builtins.CtyToJSON(v)
	return string(b), err
}

// dryShell answers shell steps without running them.
type dryShell struct{ r *run }

func (d dryShell) Run(_ context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	t := cty.NilType
	if s := d.r.pb.Step(spec.Step); s != nil {
		t = s.Returns
	}
	var out cty.Value
	switch {
	case t != cty.NilType:
		out = d.r.dryOutput(spec.Step, t)
	case spec.Parse == "json":
		out = d.r.dryOutput(spec.Step, cty.EmptyObject)
	case spec.Parse == "lines":
		out = d.r.dryOutput(spec.Step, cty.List(cty.String))
	default:
		out = d.r.dryOutput(spec.Step, cty.String)
	}
	text, err := answerText(out)
	if err != nil {
		return builtins.ShellResult{ExitCode: -1}, fmt.Errorf("dry run: the example of step %s: %w", spec.Step, err)
	}
	return builtins.ShellResult{ExitCode: 0, Stdout: text, Output: out}, nil
}

// dryDriver answers agent calls without calling an agent.
type dryDriver struct{ r *run }

func (d dryDriver) Call(_ context.Context, req agent.Request) (agent.Response, error) {
	t := cty.String
	if s := d.r.pb.Step(req.Step); s != nil && s.Returns != cty.NilType {
		t = s.Returns
	}
	text, err := answerText(d.r.dryOutput(req.Step, t))
	if err != nil {
		return agent.Response{}, fmt.Errorf("dry run: the example of step %s: %w", req.Step, err)
	}
	return agent.Response{Text: text}, nil
}

// dryFuncs runs the builtins that only read and answers the others from
// their declared result type. A step's example answers it either way.
func (r *run) dryFuncs(base builtins.Registry) builtins.Registry {
	out := make(builtins.Registry, len(base))
	for name, f := range base {
		decl := builtins.Declaration(name)
		out[name] = func(ctx context.Context, env builtins.Env, args cty.Value) (cty.Value, error) {
			if s := r.pb.Step(env.Step); s != nil && s.Example != cty.NilVal {
				return s.Example, nil
			}
			if decl.Reads {
				return f(ctx, env, args)
			}
			return exampleResult(decl.Result, args), nil
		}
	}
	return out
}

// exampleResult is the stand-in result of a builtin that writes: a value
// of its result type whose path, when it has one, is the path it was
// given.
func exampleResult(t cty.Type, args cty.Value) cty.Value {
	v := Example(t)
	if !t.IsObjectType() || !t.HasAttribute("path") || args.IsNull() || !args.Type().IsObjectType() || !args.Type().HasAttribute("path") {
		return v
	}
	p := args.GetAttr("path")
	if p.Type() != cty.String || p.IsNull() || !p.IsKnown() {
		return v
	}
	attrs := v.AsValueMap()
	attrs["path"] = p
	return cty.ObjectVal(attrs)
}

// promptTap tells a dry run's Prompt of each prompt on its way to the
// driver.
type promptTap struct {
	agent.Driver
	tell func(step, item, prompt string)
}

func (p promptTap) Call(ctx context.Context, req agent.Request) (agent.Response, error) {
	// A re-prompt of the same call repeats the prompt with more after it;
	// it is shown again, as the agent would see it again.
	p.tell(req.Step, req.ItemKey, req.Prompt)
	return p.Driver.Call(ctx, req)
}

// dryAsker answers an ask step with its default, else its first option,
// or for a text question an example of the step's returns type.
type dryAsker struct{}

func (dryAsker) Ask(_ context.Context, q Question) (string, error) {
	switch {
	case q.Default != "":
		return q.Default, nil
	case q.Text || len(q.Options) == 0:
		return q.Example, nil
	}
	return q.Options[0], nil
}
