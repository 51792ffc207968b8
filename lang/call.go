package lang

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// Call invokes a named builtin ("file.sha256", "git.revert", ...) with the
// block's attributes as arguments.
type Call struct {
	Builtin   string
	Args      []*NamedExpr
	DeclRange hcl.Range
}

func (*Call) action()            {}
func (a *Call) Range() hcl.Range { return a.DeclRange }
func (a *Call) String() string   { return "call " + a.Builtin }

func (l *loader) decodeCallBlock(s *Step, b *hcl.Block) (Action, hcl.Diagnostics) {
	c := &Call{Builtin: b.Labels[0], DeclRange: b.DefRange}
	attrs, diags := b.Body.JustAttributes()
	if l.builtins != nil && !slices.Contains(l.builtins, c.Builtin) {
		diags = append(diags, errDiag("Unknown builtin",
			fmt.Sprintf("There is no builtin named %q.%s", c.Builtin, didYouMean(c.Builtin, l.builtins)), b.LabelRanges[0]))
	}
	for _, a := range sortedAttrs(attrs) {
		c.Args = append(c.Args, &NamedExpr{Name: a.Name, Expr: a.Expr, Range: a.Range})
		l.deferRefs(a.Expr, refScope{body: s.Parent, step: s, action: true, what: "a builtin call"})
	}
	return c, diags
}
