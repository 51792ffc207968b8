package lang

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var modeSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "inputs", Required: true},
	},
}

// Mode is a named preset of input values, chosen with --mode.
type Mode struct {
	Name        string
	Description string
	Inputs      map[string]cty.Value
	DeclRange   hcl.Range
}

// decodeModeBlock reads a named input preset. Modes may only set declared
// inputs, with values of their types.
func (l *loader) decodeModeBlock(b *hcl.Block) hcl.Diagnostics {
	diags := validName("mode", b)
	name := b.Labels[0]
	if prev := l.pb.Modes[name]; prev != nil {
		return append(diags, duplicate("mode", name, prev.DeclRange, b))
	}
	m := &Mode{Name: name, Inputs: map[string]cty.Value{}, DeclRange: b.DefRange}
	l.pb.Modes[name] = m
	content, d := b.Body.Content(modeSchema)
	diags = append(diags, d...)
	if a := content.Attributes["description"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		m.Description = v
	}
	a := content.Attributes["inputs"]
	if a == nil {
		return diags
	}
	// Read item by item so that each problem points at its own line.
	items, d := hcl.ExprMap(a.Expr)
	if d.HasErrors() {
		return append(diags, errDiag("Invalid mode inputs",
			`A mode's inputs is an object of input values, e.g. inputs = { pass_threshold = 7 }.`, a.Expr.Range()))
	}
	for _, it := range items {
		key := hcl.ExprAsKeyword(it.Key)
		if key == "" {
			kv, d := it.Key.Value(nil)
			if d.HasErrors() || kv.Type() != cty.String {
				diags = append(diags, errDiag("Invalid mode inputs", "Each key must be an input name.", it.Key.Range()))
				continue
			}
			key = kv.AsString()
		}
		in := l.pb.inputs[key]
		if in == nil {
			diags = append(diags, errDiag("Mode sets an undeclared input",
				fmt.Sprintf("Mode %q sets %q, but there is no input named %q.%s", name, key, key, didYouMean(key, l.inputNames())), it.Key.Range()))
			continue
		}
		l.used["input."+key] = true
		v, d := it.Value.Value(&hcl.EvalContext{Functions: Functions()})
		if d.HasErrors() {
			diags = append(diags, d...)
			continue
		}
		cv, err := in.Convert(v)
		if err != nil {
			diags = append(diags, errDiag("Wrong type for a mode input",
				fmt.Sprintf("Mode %q sets %q to %s, but %s.", name, key, formatValue(v), err), it.Value.Range()))
			continue
		}
		m.Inputs[key] = cv
	}
	return diags
}
