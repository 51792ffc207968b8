package lang

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
)

var budgetSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "max_response_lines"},
		{Name: "max_summary_lines"},
		{Name: "enforcement"},
	},
}

// Budget is a context budget: how much of an agent's response the run
// ingests (the phase runner's context budget table).
type Budget struct {
	Name             string
	MaxResponseLines int
	MaxSummaryLines  int
	Enforcement      Enforcement
	DeclRange        hcl.Range
}

// Enforcement says what survives of a response cut to its budget.
type Enforcement string

// The enforcements of a budget.
const (
	EnforceJSON    Enforcement = "json"    // keep only the JSON block
	EnforceSummary Enforcement = "summary" // keep the last max_summary_lines lines
)

// decodeBudgetBlock reads a row of the context budget table.
func (l *loader) decodeBudgetBlock(b *hcl.Block) hcl.Diagnostics {
	diags := validName("budget", b)
	name := b.Labels[0]
	if prev := l.pb.Budgets[name]; prev != nil {
		return append(diags, duplicate("budget", name, prev.DeclRange, b))
	}
	bg := &Budget{Name: name, Enforcement: EnforceJSON, DeclRange: b.DefRange}
	l.pb.Budgets[name] = bg
	content, d := b.Body.Content(budgetSchema)
	diags = append(diags, d...)
	for _, f := range []struct {
		name string
		dst  *int
	}{{"max_response_lines", &bg.MaxResponseLines}, {"max_summary_lines", &bg.MaxSummaryLines}} {
		a := content.Attributes[f.name]
		if a == nil {
			continue
		}
		v, d := constInt(a)
		diags = append(diags, d...)
		if !d.HasErrors() && v < 0 {
			diags = append(diags, errDiag("Invalid budget", fmt.Sprintf("%s must not be negative.", f.name), a.Expr.Range()))
		}
		*f.dst = v
	}
	if a := content.Attributes["enforcement"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		if !d.HasErrors() && Enforcement(v) != EnforceJSON && Enforcement(v) != EnforceSummary {
			diags = append(diags, errDiag("Invalid enforcement",
				fmt.Sprintf(`Enforcement is "json" (keep only the JSON block) or "summary" (keep the last max_summary_lines lines), not %q.`, v), a.Expr.Range()))
		}
		bg.Enforcement = Enforcement(v)
	}
	if bg.MaxSummaryLines > bg.MaxResponseLines && bg.MaxResponseLines > 0 {
		diags = append(diags, errDiag("Invalid budget",
			fmt.Sprintf("max_summary_lines (%d) is larger than max_response_lines (%d).", bg.MaxSummaryLines, bg.MaxResponseLines), b.DefRange))
	}
	return diags
}
