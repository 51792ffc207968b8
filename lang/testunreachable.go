package lang

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

// unreachableSchema is an unreachable block of a test file: a branch no
// test can take, named by its address, and why.
var unreachableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "reason", Required: true},
	},
}

// Unreachable is a branch of the playbook (Branch) that a test file says
// no test can take, and why: apl test --cover leaves it out of the share
// it reports and lists it with the reason, and says so if a test takes
// it after all.
type Unreachable struct {
	Branch    string
	Reason    string
	DeclRange hcl.Range
}

func (d *testDecoder) decodeUnreachable(b *hcl.Block) (*Unreachable, hcl.Diagnostics) {
	id := b.Labels[0]
	if d.branches == nil {
		d.branches, d.unreachable = map[string]Branch{}, map[string]hcl.Range{}
		for _, br := range d.pb.Branches() {
			d.branches[br.ID] = br
		}
	}
	if _, ok := d.branches[id]; !ok {
		return nil, hcl.Diagnostics{errDiag("Unknown branch",
			fmt.Sprintf("The playbook has no branch %q; apl test --cover lists the branches a suite did not take by their addresses.%s",
				id, didYouMean(id, slices.Sorted(maps.Keys(d.branches)))), b.LabelRanges[0])}
	}
	if prev, ok := d.unreachable[id]; ok {
		return nil, hcl.Diagnostics{duplicate("unreachable", id, prev, b)}
	}
	d.unreachable[id] = b.DefRange
	content, diags := b.Body.Content(unreachableSchema)
	u := &Unreachable{Branch: id, DeclRange: b.DefRange}
	if a := content.Attributes["reason"]; a != nil {
		v, rd := constString(a)
		diags = append(diags, rd...)
		if !rd.HasErrors() && strings.TrimSpace(v) == "" {
			diags = append(diags, errDiag("Empty reason",
				"Say why no test can take the branch, e.g. reason = \"the rule before it always matches first\".", a.Expr.Range()))
		}
		u.Reason = v
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return u, diags
}
