package lang

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

var checkSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "message"},
		{Name: "on_fail"},
		{Name: "max"},
	},
}

// Check is a condition a step's output must meet.
type Check struct {
	Name      string
	Condition *Condition
	Message   hcl.Expression
	OnFail    OnFail
	Max       int
	DeclRange hcl.Range
}

// OnFail says what a failed check does.
type OnFail string

// The on_fail choices of a check.
const (
	OnFailRetry OnFail = "retry" // run the step again, at most Max times
	OnFailFail  OnFail = "fail"  // fail the step
)

// decodeCheckBlock reads a check on the step's output: the condition sees
// the output as steps.NAME.output, like any condition.
func (l *loader) decodeCheckBlock(s *Step, b *hcl.Block, env *condEnv) (*Check, hcl.Diagnostics) {
	content, diags := b.Body.Content(checkSchema)
	c := &Check{Name: b.Labels[0], OnFail: OnFailRetry, Max: 1, DeclRange: b.DefRange}
	if a := content.Attributes["condition"]; a != nil {
		cond, d := l.decodeCondition(a, env)
		diags = append(diags, d...)
		c.Condition = cond
		l.noteConditionRefs(cond)
	}
	if a := content.Attributes["message"]; a != nil {
		c.Message = a.Expr
		l.deferRefs(a.Expr, refScope{body: s.Parent, step: s, what: "a check message"})
	}
	if a := content.Attributes["on_fail"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		if !d.HasErrors() && OnFail(v) != OnFailRetry && OnFail(v) != OnFailFail {
			diags = append(diags, errDiag("Invalid on_fail", fmt.Sprintf(`on_fail is "retry" (run the step again) or "fail", not %q.`, v), a.Expr.Range()))
		}
		c.OnFail = OnFail(v)
	}
	if a := content.Attributes["max"]; a != nil {
		n, d := constPositiveInt(a)
		diags = append(diags, d...)
		c.Max = n
	}
	return c, diags
}
