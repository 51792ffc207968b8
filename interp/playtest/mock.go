package playtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/builtins/agent"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// mocks hands out a test's mocked answers and counts each step's calls,
// so that the N-th call gets the N-th output.
type mocks struct {
	byStep map[string]*lang.Mock
	mu     sync.Mutex
	calls  map[string]int
	// asked are, for each record of an agent step (the step, or the
	// step of one for_each item), the mocks that answered its calls in
	// order: its agent blocks, or the step's mock.
	asked map[string][]*lang.Mock
	// last is the agent each step's last call asked.
	last map[string]string
}

func newMocks(m map[string]*lang.Mock) *mocks {
	return &mocks{byStep: m, calls: map[string]int{}, asked: map[string][]*lang.Mock{}, last: map[string]string{}}
}

// next returns step's mock and the 1-based number of this call, or nil
// when the step has no mock.
func (m *mocks) next(step string) (*lang.Mock, int) {
	mk := m.byStep[step]
	if mk == nil {
		return nil, 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls[step]++
	return mk, m.calls[step]
}

// agentCall returns the mock that answers req, a call that asks the
// agent named ag (lang.Mock.For), and the 1-based number of the calls
// that mock has answered for the step, this one included. mocked is false
// when the step has no mock; answer is nil when its mock has none for ag.
//
// The interpreter numbers an agent step's calls itself (req.Attempt, per
// item inside a for_each, re-prompts and fallbacks included); it is the
// authority on which answer is due. A mock that answers every call of the
// step gets the number as it is; an agent block counts only the calls
// that asked its agent, so that a fallback's first answer is its mock's
// first output.
func (m *mocks) agentCall(req agent.Request, ag string) (answer *lang.Mock, n int, mocked bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last[req.Step] = ag
	mk := m.byStep[req.Step]
	if mk == nil {
		return nil, 0, false
	}
	am := mk.For(ag)
	if req.Attempt <= 0 {
		key := req.Step + "\x00" + ag
		m.calls[key]++
		return am, m.calls[key], true
	}
	key := req.Step + "\x00" + req.ItemKey
	seq := m.asked[key]
	if len(seq) >= req.Attempt {
		seq = seq[:req.Attempt-1] // the record started over: a new item of the same key
	}
	for len(seq) < req.Attempt-1 {
		seq = append(seq, mk) // calls made before this driver saw them
	}
	seq = append(seq, am)
	m.asked[key] = seq
	for _, x := range seq {
		if x == am {
			n++
		}
	}
	return am, n, true
}

// Mocked returns actions that answer the steps a test's mocks name from
// the mocks and hand the others to next: in apl test, the real shell and
// builtins (next.Drivers nil: an agent step without a mock fails); in a
// dry run (interp.DryRun.Wrap), the dry run's stand-ins. Each returned set
// counts its own calls, so the N-th call of a step gets the N-th output.
func Mocked(m map[string]*lang.Mock, next interp.Actions) interp.Actions {
	acts, _ := mocked(m, next)
	return acts
}

// mocked is Mocked, with the mocks that count the calls.
func mocked(m map[string]*lang.Mock, next interp.Actions) (interp.Actions, *mocks) {
	mk := newMocks(m)
	return interp.Actions{
		Shell: &mockShell{mocks: mk, real: next.Shell},
		Drivers: func(a *lang.Agent) (agent.Driver, error) {
			d := &mockDriver{mocks: mk, agent: a.Name}
			if next.Drivers != nil {
				drv, err := next.Drivers(a)
				if err != nil {
					return nil, err
				}
				d.next = drv
			}
			return d, nil
		},
		Funcs:     mk.wrap(next.Funcs),
		Playbooks: mk.playbooks(next.Playbooks),
	}, mk
}

// agents returns the agent each step's last call asked.
func (m *mocks) agents() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.last)
}

// playbooks answers mocked playbook steps from the mocks, so that a test
// of a playbook that runs another does not run it; the others go to next,
// else run their playbooks.
func (m *mocks) playbooks(next interp.PlaybookStub) interp.PlaybookStub {
	return func(ctx context.Context, step string) (cty.Value, bool, error) {
		mk, n := m.next(step)
		if mk == nil {
			if next != nil {
				return next(ctx, step)
			}
			return cty.NilVal, false, nil
		}
		if mk.Error != "" {
			return cty.NilVal, true, mockError(mk)
		}
		if out := mk.Output(n); out != cty.NilVal {
			return out, true, nil
		}
		return cty.EmptyObjectVal, true, nil
	}
}

// mockDriver answers the calls that ask one agent from the mocks, and the
// others with next; without next, a step without a mock fails.
type mockDriver struct {
	mocks *mocks
	agent string // the agent block's name
	next  agent.Driver
}

func (d *mockDriver) Call(ctx context.Context, req agent.Request) (agent.Response, error) {
	mk, n, mocked := d.mocks.agentCall(req, d.agent)
	if mk == nil {
		if d.next != nil {
			return d.next.Call(ctx, req)
		}
		if mocked {
			return agent.Response{}, fmt.Errorf("step %s has no mock for agent %s", req.Step, d.agent)
		}
		return agent.Response{}, fmt.Errorf("step %s is an agent step and has no mock", req.Step)
	}
	if mk.Error != "" {
		return agent.Response{}, mockError(mk)
	}
	text, err := answerText(mk.Output(n))
	if err != nil {
		return agent.Response{}, fmt.Errorf("mock of step %s: %w", req.Step, err)
	}
	return agent.Response{Text: text}, nil
}

// answerText is what an agent would have answered: the text itself for a
// string, else the value as JSON.
func answerText(v cty.Value) (string, error) {
	if v == cty.NilVal {
		return "", nil
	}
	if v.Type() == cty.String && !v.IsNull() {
		return v.AsString(), nil
	}
	b, err := builtins.CtyToJSON(v)
	return string(b), err
}

// mockShell answers mocked shell steps and hands the others to real.
type mockShell struct {
	mocks *mocks
	real  interp.ShellRunner
}

func (s *mockShell) Run(ctx context.Context, spec builtins.ShellSpec) (builtins.ShellResult, error) {
	mk, n := s.mocks.next(spec.Step)
	if mk == nil {
		return s.real.Run(ctx, spec)
	}
	res := builtins.ShellResult{ExitCode: -1, Output: cty.NullVal(cty.DynamicPseudoType)}
	if mk.Error != "" {
		return res, mockError(mk)
	}
	out := mk.Output(n)
	if out == cty.NilVal {
		out = cty.StringVal("")
	}
	stdout, err := answerText(out)
	if err != nil {
		return res, fmt.Errorf("mock of step %s: %w", spec.Step, err)
	}
	res.ExitCode = 0
	if mk.ExitCode != nil {
		res.ExitCode = *mk.ExitCode
	}
	res.Stdout, res.Output = stdout, out
	return res, nil
}

// wrap returns funcs with every builtin answering mocked steps from the
// mocks and the rest for real.
func (m *mocks) wrap(funcs builtins.Registry) builtins.Registry {
	out := make(builtins.Registry, len(funcs))
	for name, f := range funcs {
		out[name] = func(ctx context.Context, env builtins.Env, args cty.Value) (cty.Value, error) {
			mk, n := m.next(env.Step)
			if mk == nil {
				return f(ctx, env, args)
			}
			if mk.Error != "" {
				return cty.NilVal, mockError(mk)
			}
			if out := mk.Output(n); out != cty.NilVal {
				return out, nil
			}
			return cty.EmptyObjectVal, nil
		}
	}
	return out
}

// mockError is the failure a mock with error gives: its message, of its
// error_kind when it names one (steps.NAME.error_kind), else left for the
// run to classify.
func mockError(mk *lang.Mock) error {
	err := errors.New(mk.Error)
	if mk.ErrorKind != "" {
		return &agent.KindError{Kind: mk.ErrorKind, Err: err}
	}
	return err
}

// mockAsker answers the ask steps a test mocks: the N-th time a step asks
// in the run, its mock's N-th output is the choice. An ask step without a
// mock has no answer, so the run waits, as it would with no one at a
// terminal.
type mockAsker struct{ mocks *mocks }

func (a mockAsker) Ask(_ context.Context, q interp.Question) (string, error) {
	mk, n := a.mocks.next(q.Step)
	if mk == nil {
		return "", interp.ErrNoAnswer
	}
	if mk.Error != "" {
		return "", mockError(mk)
	}
	out := mk.Output(n)
	if out == cty.NilVal || out.IsNull() || out.Type() != cty.String {
		return "", fmt.Errorf("mock of step %s: an ask's answer is one of its options, a string", q.Step)
	}
	return out.AsString(), nil
}
