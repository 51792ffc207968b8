package lang

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var askSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "question", Required: true},
		{Name: "options"},
		{Name: "text"},
		{Name: "default"},
	},
}

// Ask asks a person to choose one of Options or, with Text, to type an
// answer.
type Ask struct {
	Question hcl.Expression
	Options  hcl.Expression // list of strings; nil with Text
	// Text asks for a free-text answer (the conductor's success metrics
	// that the user types) instead of a choice.
	Text      bool
	Default   hcl.Expression // may be nil
	DeclRange hcl.Range
}

func (*Ask) action()            {}
func (a *Ask) Range() hcl.Range { return a.DeclRange }
func (a *Ask) String() string   { return "ask" }

// decodeAskBlock reads a human decision: a question and the options a
// person chooses from (the conductor's high-severity escalation), or a
// question a person answers in words (text = true).
func (l *loader) decodeAskBlock(s *Step, b *hcl.Block) (Action, hcl.Diagnostics) {
	content, diags := b.Body.Content(askSchema)
	a := &Ask{DeclRange: b.DefRange}
	scope := refScope{body: s.Parent, step: s, action: true, what: "an ask action"}
	if at := content.Attributes["question"]; at != nil {
		a.Question = at.Expr
		l.deferRefs(at.Expr, scope)
	}
	if at := content.Attributes["text"]; at != nil {
		v, d := constBool(at)
		diags = append(diags, d...)
		a.Text = v
		if v && content.Attributes["options"] != nil {
			diags = append(diags, errDiag("Options with a free-text answer",
				"text = true asks a person to type an answer, so there are no options to choose from. Remove options, or text to ask for a choice.", content.Attributes["options"].NameRange))
			return a, diags
		}
	}
	if !a.Text && content.Attributes["options"] == nil {
		diags = append(diags, errDiag("Ask without options",
			"An ask needs options to choose from, e.g. options = [\"retry\", \"skip\"], or text = true for an answer the person types.", b.DefRange))
	}
	if at := content.Attributes["options"]; at != nil {
		a.Options = at.Expr
		l.deferRefs(at.Expr, scope)
		if v, d := at.Expr.Value(nil); !d.HasErrors() && v.IsKnown() && !v.IsNull() {
			if !v.CanIterateElements() || v.LengthInt() < 2 {
				diags = append(diags, errDiag("Invalid options", "options is a list of at least two choices, e.g. [\"retry\", \"skip\", \"abort\"].", at.Expr.Range()))
			}
		}
	}
	if at := content.Attributes["default"]; at != nil {
		a.Default = at.Expr
		l.deferRefs(at.Expr, scope)
		dv, d1 := at.Expr.Value(nil)
		ov, d2 := cty.DynamicVal, hcl.Diagnostics(nil)
		if a.Options != nil {
			ov, d2 = a.Options.Value(nil)
		}
		if a.Options != nil && !d1.HasErrors() && !d2.HasErrors() && dv.Type() == cty.String && !dv.IsNull() && ov.IsKnown() && !ov.IsNull() && ov.CanIterateElements() {
			found := false
			for it := ov.ElementIterator(); it.Next(); {
				if _, v := it.Element(); v.Type() == cty.String && !v.IsNull() && v.AsString() == dv.AsString() {
					found = true
				}
			}
			if !found {
				diags = append(diags, errDiag("Invalid default", fmt.Sprintf("The default %q is not one of the options.", dv.AsString()), at.Expr.Range()))
			}
		}
	}
	return a, diags
}
