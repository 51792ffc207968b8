package lang

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

var mockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "output"},
		{Name: "outputs"},
		{Name: "exit_code"},
		{Name: "error"},
		{Name: "error_kind"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "agent", LabelNames: []string{"name"}},
	},
}

// agentMockSchema is a mock's agent block: the answers of one agent.
var agentMockSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "output"},
		{Name: "outputs"},
		{Name: "error"},
		{Name: "error_kind"},
	},
}

// ErrorKinds are the kinds of failure steps.NAME.error_kind names, in the
// order the language reference lists them. The drivers classify real
// errors (builtins/agent.Kinds is the same list); a test's mock may give
// its error one of them.
var ErrorKinds = []string{"timeout", "exit_status", "no_json", "schema", "rate_limited",
	"unavailable", "refused_by_policy", "budget", "interrupted", "other"}

// Mock stands in for a step's action.
type Mock struct {
	Step string
	// Outputs are the action's outputs, one per call in order; the last
	// repeats. Empty when the mock sets only Error or ExitCode.
	Outputs []cty.Value
	// ExitCode is a shell step's exit code; nil means 0. A non-zero code
	// fails the step, as a real command's would.
	ExitCode *int
	// Error, when set, fails the action with this message on every call.
	Error string
	// ErrorKind is the kind of Error (one of ErrorKinds) that
	// steps.NAME.error_kind reads; "" leaves it to the run, which calls
	// an error it cannot classify "other".
	ErrorKind string
	// Agent is, for a mock's agent block, the agent whose calls it
	// answers; "" for the mock of a step.
	Agent string
	// Agents are an agent step's agent blocks, by agent name: each
	// answers the calls that ask its agent (the step's own or a
	// fallback), so a test can make one agent unavailable and let the
	// next answer.
	Agents    map[string]*Mock
	DeclRange hcl.Range
}

// For returns the mock that answers a call of the step asking agent: its
// agent block for that agent, else the mock itself when it sets an answer
// of its own; nil when neither does, and the call has no mock.
func (m *Mock) For(agent string) *Mock {
	if a := m.Agents[agent]; a != nil {
		return a
	}
	if len(m.Outputs) == 0 && m.Error == "" && m.ExitCode == nil && len(m.Agents) > 0 {
		return nil
	}
	return m
}

// Output returns the mock's answer to the step's call-th call (1-based),
// or cty.NilVal when the mock has no outputs.
func (m *Mock) Output(call int) cty.Value {
	if len(m.Outputs) == 0 {
		return cty.NilVal
	}
	return m.Outputs[max(min(call, len(m.Outputs)), 1)-1]
}

func (d *testDecoder) decodeMock(t *Test, b *hcl.Block) hcl.Diagnostics {
	name := b.Labels[0]
	s := d.pb.Step(name)
	if s == nil {
		return hcl.Diagnostics{errDiag("Reference to undeclared step",
			fmt.Sprintf("There is no step named %q to mock.%s", name, didYouMean(name, slices.Sorted(maps.Keys(d.pb.steps)))), b.LabelRanges[0])}
	}
	if prev := t.Mocks[name]; prev != nil {
		return hcl.Diagnostics{duplicate("mock", name, prev.DeclRange, b)}
	}
	m := &Mock{Step: name, DeclRange: b.DefRange}
	t.Mocks[name] = m
	content, diags := b.Body.Content(mockSchema)
	if diags.HasErrors() {
		return diags
	}
	if s.Action == nil {
		return append(diags, errDiag("Mock of a step without an action",
			fmt.Sprintf("Step %q has no action, only routing, so there is nothing to mock.", name), b.LabelRanges[0]))
	}
	if _, ok := s.Action.(*AgentCall); !ok && len(content.Blocks) > 0 {
		return append(diags, errDiag("Agent mock of a step that asks no agent",
			fmt.Sprintf("Step %q does not ask an agent, so its mock has no agent blocks; set its output, outputs or error directly.", name), content.Blocks[0].DefRange))
	}
	diags = append(diags, d.decodeAgentMocks(s, m, content.Blocks)...)
	return append(diags, d.decodeMockAnswer(s, m, content.Attributes, b)...)
}

// decodeAgentMocks reads a mock's agent blocks: each names one of the
// agents the step may ask, its own or a fallback.
func (d *testDecoder) decodeAgentMocks(s *Step, m *Mock, blocks hcl.Blocks) hcl.Diagnostics {
	call, ok := s.Action.(*AgentCall)
	if !ok || len(blocks) == 0 {
		return nil
	}
	var names []string
	for _, a := range call.Agents() {
		names = append(names, a.Name)
	}
	var diags hcl.Diagnostics
	m.Agents = map[string]*Mock{}
	for _, ab := range blocks {
		name := ab.Labels[0]
		if !slices.Contains(names, name) {
			diags = append(diags, errDiag("Mock of an agent the step does not ask",
				fmt.Sprintf("Step %q asks %s; it never asks agent %q, so a mock of it would never answer. List an agent in the step's fallback to mock it.%s",
					s.Name, quoteJoin(names), name, didYouMean(name, names)), ab.LabelRanges[0]))
			continue
		}
		if prev := m.Agents[name]; prev != nil {
			diags = append(diags, duplicate("agent mock", name, prev.DeclRange, ab))
			continue
		}
		am := &Mock{Step: s.Name, Agent: name, DeclRange: ab.DefRange}
		m.Agents[name] = am
		content, cd := ab.Body.Content(agentMockSchema)
		diags = append(diags, cd...)
		if cd.HasErrors() {
			continue
		}
		diags = append(diags, d.decodeMockAnswer(s, am, content.Attributes, ab)...)
	}
	return diags
}

// quoteJoin lists names quoted, joined with commas and "and".
func quoteJoin(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// decodeMockAnswer reads what a mock (or one of its agent blocks)
// answers: its output or outputs, exit code, or error.
func (d *testDecoder) decodeMockAnswer(s *Step, m *Mock, attrs map[string]*hcl.Attribute, b *hcl.Block) hcl.Diagnostics {
	var diags hcl.Diagnostics
	name := s.Name
	_, isShell := s.Action.(*Shell)
	_, isAgent := s.Action.(*AgentCall)
	out, outs, code, errA, kindA := attrs["output"], attrs["outputs"], attrs["exit_code"], attrs["error"], attrs["error_kind"]
	if kindA != nil && errA == nil {
		return append(diags, errDiag("Mock error kind without error",
			"error_kind says what kind of failure a mock's error is; set error too, e.g. error = \"model not found\" with error_kind = \"unavailable\".", kindA.NameRange))
	}
	if out != nil && outs != nil {
		return append(diags, errDiag("Conflicting mock attributes",
			"Set output (the same answer to every call) or outputs (one per call), not both.", outs.NameRange))
	}
	if errA != nil && (out != nil || outs != nil || code != nil) {
		return append(diags, errDiag("Conflicting mock attributes",
			"A mock with error fails the step's action on every call, so it has no output or exit_code.", errA.NameRange))
	}
	if out == nil && outs == nil && code == nil && errA == nil {
		if m.Agent == "" && len(m.Agents) > 0 {
			return diags // only agent blocks: the agents without one have no mock
		}
		what := "output, outputs or error"
		if isShell {
			what = "output, outputs, exit_code or error"
		}
		subject := fmt.Sprintf("A mock of step %q", name)
		if m.Agent != "" {
			subject = fmt.Sprintf("The mock of agent %q of step %q", m.Agent, name)
		}
		return append(diags, errDiag("Empty mock", fmt.Sprintf("%s sets %s.", subject, what), b.DefRange))
	}

	if errA != nil {
		v, ed := constString(errA)
		diags = append(diags, ed...)
		if !ed.HasErrors() && v == "" {
			diags = append(diags, errDiag("Empty mock error", "The error message may not be empty.", errA.Expr.Range()))
		}
		m.Error = v
		if kindA != nil {
			k, kd := constString(kindA)
			diags = append(diags, kd...)
			if !kd.HasErrors() && !slices.Contains(ErrorKinds, k) {
				diags = append(diags, errDiag("Unknown error kind",
					fmt.Sprintf("%q is not an error kind; the kinds are %s.%s", k, strings.Join(ErrorKinds, ", "), didYouMean(k, ErrorKinds)), kindA.Expr.Range()))
			}
			m.ErrorKind = k
		}
		return diags
	}
	if code != nil {
		if !isShell {
			diags = append(diags, errDiag("Unsupported mock attribute",
				fmt.Sprintf("Step %q is not a shell step, so it has no exit_code; use error to fail it.", name), code.NameRange))
		} else if v, cd := constInt(code); cd.HasErrors() {
			diags = append(diags, cd...)
		} else {
			m.ExitCode = &v
		}
	}

	// Each output with the range a problem with it points at.
	var ranges []hcl.Range
	switch {
	case out != nil:
		v, od := constExpr(out.Expr, "a mock's output")
		diags = append(diags, od...)
		if !od.HasErrors() {
			m.Outputs, ranges = []cty.Value{v}, []hcl.Range{out.Expr.Range()}
		}
	case outs != nil:
		items, ld := hcl.ExprList(outs.Expr)
		if ld.HasErrors() || len(items) == 0 {
			return append(diags, errDiag("Invalid mock outputs",
				"outputs is a non-empty list of the step's outputs, one per call, e.g. outputs = [{ pass = false }, { pass = true }]; the last one repeats.", outs.Expr.Range()))
		}
		for _, it := range items {
			v, od := constExpr(it, "a mock's output")
			diags = append(diags, od...)
			if od.HasErrors() {
				continue
			}
			m.Outputs = append(m.Outputs, v)
			ranges = append(ranges, it.Range())
		}
	case isShell && (m.ExitCode == nil || *m.ExitCode == 0):
		// A shell mock without output prints nothing; that must fit
		// returns too.
		return append(diags, checkMockOutput(d.pb, s, cty.StringVal(""), false, "mock", b.DefRange)...)
	}
	ask, isAsk := s.Action.(*Ask)
	for i, v := range m.Outputs {
		if isAsk {
			diags = append(diags, checkMockAnswer(s.Name, ask, v, ranges[i])...)
			continue
		}
		diags = append(diags, checkMockOutput(d.pb, s, v, isAgent, "mock", ranges[i])...)
	}
	return diags
}

// checkMockAnswer checks a mocked answer to an ask step: a string, and,
// for a choice, one of the options when they are constant.
func checkMockAnswer(step string, a *Ask, v cty.Value, rng hcl.Range) hcl.Diagnostics {
	if v.IsNull() || v.Type() != cty.String {
		return hcl.Diagnostics{errDiag("Mock does not match the step",
			fmt.Sprintf("Step %q asks a person, so its mock's output is the chosen option, a string, not %s.", step, formatValue(v)), rng)}
	}
	if a.Options == nil {
		return nil // a text answer: any string
	}
	opts, diags := a.Options.Value(nil)
	if diags.HasErrors() || !opts.IsWhollyKnown() || opts.IsNull() || !opts.CanIterateElements() {
		return nil
	}
	var names []string
	for it := opts.ElementIterator(); it.Next(); {
		_, o := it.Element()
		if o.IsNull() || o.Type() != cty.String {
			return nil
		}
		if o.AsString() == v.AsString() {
			return nil
		}
		names = append(names, o.AsString())
	}
	return hcl.Diagnostics{errDiag("Mock answer is not an option",
		fmt.Sprintf("Step %q offers %s; %q is not one of them.%s", step, strings.Join(names, ", "), v.AsString(), didYouMean(v.AsString(), names)), rng)}
}

// checkMockOutput checks that a mocked output is one the step could
// produce: for an agent step, what decoding its answer against returns
// accepts (or text, without returns), decoded by the runtime's own decoder
// (Loader.DecodeAnswer); for shell and call steps, a value that converts
// to returns. what names the value in messages: "mock" or "example".
func checkMockOutput(pb *Playbook, s *Step, v cty.Value, isAgent bool, what string, rng hcl.Range) hcl.Diagnostics {
	if isAgent && s.Returns == cty.NilType {
		if v.Type() != cty.String || v.IsNull() {
			return hcl.Diagnostics{errDiag(upperFirst(what)+" does not match the step",
				fmt.Sprintf("Step %q is an agent step without returns, so its output is the answer's text; give the %s as a string, not %s.", s.Name, what, formatValue(v)), rng)}
		}
		return nil
	}
	if s.Returns == cty.NilType {
		return nil
	}
	var problem error
	switch {
	case isAgent && pb.decodeAnswer != nil:
		// A mock stands for the answer's JSON: what the agent would print.
		js, err := answerJSON(v)
		if err != nil {
			problem = err
		} else {
			problem = pb.decodeAnswer(js, s.Returns)
		}
	case isAgent:
		// No decoder was given: the check is left to the run.
	default:
		if _, err := convert.Convert(v, s.Returns); err != nil {
			problem = err
		}
	}
	if problem == nil {
		return nil
	}
	return hcl.Diagnostics{errDiag(upperFirst(what)+" does not match returns",
		fmt.Sprintf("Step %q returns %s, but this output does not fit: %s.", s.Name, typeString(s.Returns), problem), rng)}
}
