package lang

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

// decodeExample decodes a step's example: a constant output that a dry run
// gives the step instead of running its action. It must be an output the
// step could produce, by the same rule as a test's mock (checkMockOutput):
// for an agent step, an answer its returns type accepts, or a string
// without returns.
func (l *loader) decodeExample(s *Step, a *hcl.Attribute) hcl.Diagnostics {
	if vars := a.Expr.Variables(); len(vars) > 0 {
		return hcl.Diagnostics{errDiag("Constant required",
			fmt.Sprintf("A step's example is a constant, read when the playbook loads, so it cannot refer to %q.", traversalString(vars[0])),
			vars[0].SourceRange())}
	}
	v, diags := constExpr(a.Expr, "a step's example")
	if diags.HasErrors() {
		return diags
	}
	switch s.Action.(type) {
	case nil:
		return append(diags, errDiag("Example on a step without an action",
			fmt.Sprintf("Step %q has no action, only routing, so it has no output to give an example of.", s.Name), a.NameRange))
	case *SubPlaybook, *Ask:
		// Their outputs are not answers an action makes up: a sub-run's
		// output, a person's choice.
		return append(diags, errDiag("Example on a step that cannot use one",
			fmt.Sprintf("Step %q %s; a dry run walks it instead of answering it with an example.", s.Name, map[bool]string{true: "runs a playbook", false: "asks a person"}[isSub(s.Action)]), a.NameRange))
	}
	_, isAgent := s.Action.(*AgentCall)
	s.Example = v
	return append(diags, checkMockOutput(l.pb, s, v, isAgent, "example", a.Expr.Range())...)
}

// takesExample reports whether a step with action a may have an example:
// one that makes up its output (an agent, a command, a builtin call).
func takesExample(a Action) bool {
	switch a.(type) {
	case nil, *SubPlaybook, *Ask:
		return false
	}
	return true
}

func isSub(a Action) bool {
	_, ok := a.(*SubPlaybook)
	return ok
}
