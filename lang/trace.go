package lang

import (
	"fmt"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var traceSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "attributes", Required: true}},
}

// Trace holds what the playbook adds to every span apl writes to
// trace.jsonl (the orchestrator asks for phase_id on every span).
type Trace struct {
	// Attributes are evaluated once, when the run starts, and written as
	// top-level fields of every span.
	Attributes []*NamedExpr
	DeclRange  hcl.Range
}

// SpanFields are the fields apl writes on every span itself; a trace
// attribute may not take one of their names. interp's Span is checked
// against this list by a test.
var SpanFields = []string{
	"timestamp", "run_id", "step", "item", "action", "input_summary", "output_summary",
	"duration_ms", "status", "attempt", "artifact", "session_id",
}

// decodeTraceBlocks reads the playbook's trace block: at most one, whose
// attributes object has constant names.
func (l *loader) decodeTraceBlocks(blocks []*hcl.Block) hcl.Diagnostics {
	b, diags := singleBlock("trace", blocks, "")
	if b == nil {
		return diags
	}
	content, d := b.Body.Content(traceSchema)
	diags = append(diags, d...)
	t := &Trace{DeclRange: b.DefRange}
	l.pb.Trace = t
	a := content.Attributes["attributes"]
	if a == nil {
		return diags
	}
	pairs, d := hcl.ExprMap(a.Expr)
	if d.HasErrors() {
		return append(diags, errDiag("Invalid trace attributes",
			"attributes is an object of names and values, e.g. attributes = { phase_id = inputs.phase }.", a.Expr.Range()))
	}
	seen := map[string]bool{}
	for _, p := range pairs {
		k, kd := p.Key.Value(nil)
		if kd.HasErrors() || k.Type() != cty.String || k.IsNull() || !hclIdent(k.AsString()) {
			diags = append(diags, errDiag("Invalid trace attribute name",
				"A trace attribute's name is a constant word of letters, digits and underscores, e.g. phase_id.", p.Key.Range()))
			continue
		}
		name := k.AsString()
		switch {
		case slices.Contains(SpanFields, name):
			diags = append(diags, errDiag("Reserved trace attribute",
				fmt.Sprintf("apl writes %q on every span itself; name the attribute otherwise, e.g. phase_%s.", name, name), p.Key.Range()))
			continue
		case seen[name]:
			diags = append(diags, errDiag("Duplicate trace attribute", fmt.Sprintf("Trace attribute %q is set twice.", name), p.Key.Range()))
			continue
		}
		seen[name] = true
		rng := hcl.RangeBetween(p.Key.Range(), p.Value.Range())
		t.Attributes = append(t.Attributes, &NamedExpr{Name: name, Expr: p.Value, Range: rng})
		l.deferRefs(p.Value, refScope{vars: true, what: "a trace attribute"})
	}
	return diags
}
