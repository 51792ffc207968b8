package lang

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

var varSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "default"},
		{Name: "description"},
	},
}

// A Var is a declared run var (var "NAME" { type, default }): vars.NAME
// with a type that conditions and values are checked against, and the
// value it holds until a gate's set changes it. Vars that are only set,
// never declared, stay untyped.
type Var struct {
	Name string
	// Type is the declared type, else the default's, else any
	// (DynamicPseudoType).
	Type cty.Type
	// Default is the value the run starts with, converted to Type; a null
	// of Type without a default.
	Default     cty.Value
	Description string
	DeclRange   hcl.Range
}

// decodeVarBlock reads a var declaration.
func (l *loader) decodeVarBlock(b *hcl.Block) hcl.Diagnostics {
	diags := validName("var", b)
	name := b.Labels[0]
	if prev := l.pb.vars[name]; prev != nil {
		return append(diags, duplicate("var", name, prev.DeclRange, b))
	}
	v := &Var{Name: name, Type: cty.DynamicPseudoType, DeclRange: b.DefRange}
	content, d := b.Body.Content(varSchema)
	diags = append(diags, d...)
	if a := content.Attributes["type"]; a != nil {
		t, d := l.decodeType(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			v.Type = t
		}
	}
	if a := content.Attributes["description"]; a != nil {
		s, d := constString(a)
		diags = append(diags, d...)
		v.Description = s
	}
	v.Default = cty.NullVal(v.Type)
	if a := content.Attributes["default"]; a != nil {
		dv, d := constValue(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			if content.Attributes["type"] == nil && !dv.IsNull() {
				v.Type = dv.Type()
			}
			cv, err := convert.Convert(dv, v.Type)
			if err != nil {
				diags = append(diags, errDiag("Invalid default value",
					fmt.Sprintf("The default of var %q is not a %s: %s.", name, typeString(v.Type), err), a.Expr.Range()))
			} else {
				v.Default = cv
			}
		}
	}
	if l.pb.vars == nil {
		l.pb.vars = map[string]*Var{}
	}
	l.pb.Vars = append(l.pb.Vars, v)
	l.pb.vars[name] = v
	return diags
}

// checkVarRef checks the attributes read below vars.NAME against a
// declared var's type. Whether NAME exists is checkVarTraversals' part.
func (l *loader) checkVarRef(attrs []string, rng hcl.Range) hcl.Diagnostics {
	if len(attrs) == 0 || l.pb.vars[attrs[0]] == nil {
		return nil
	}
	v := l.pb.vars[attrs[0]]
	t, path := v.Type, "vars."+v.Name
	for _, a := range attrs[1:] {
		if !t.IsObjectType() {
			return nil
		}
		if !t.HasAttribute(a) {
			return hcl.Diagnostics{errDiag("Unknown var field",
				fmt.Sprintf("%s has no field %q: var %q is declared %s.%s", path, a, v.Name, typeString(t),
					didYouMean(a, slices.Sorted(maps.Keys(t.AttributeTypes())))), rng)}
		}
		t = t.AttributeType(a)
		path += "." + a
	}
	return nil
}

// Var returns the declared var with the given name, or nil.
func (p *Playbook) Var(name string) *Var { return p.vars[name] }

// checkSetTypes checks what each gate's set assigns to a declared var
// against the var's type, where the value's type can be told at load.
func (l *loader) checkSetTypes(tc *typeChecker) hcl.Diagnostics {
	if len(l.pb.Vars) == 0 {
		return nil
	}
	var diags hcl.Diagnostics
	var outcome func(s *Step, o *Outcome)
	outcome = func(s *Step, o *Outcome) {
		if o == nil {
			return
		}
		outcome(s, o.Exhausted)
		if o.Set == nil {
			return
		}
		pairs, d := hcl.ExprMap(o.Set)
		if d.HasErrors() {
			return
		}
		for _, p := range pairs {
			k, d := p.Key.Value(nil)
			if d.HasErrors() || !k.IsKnown() || k.IsNull() || k.Type() != cty.String {
				continue
			}
			v := l.pb.vars[k.AsString()]
			if v == nil || v.Type == cty.DynamicPseudoType {
				continue
			}
			t := typeOf(p.Value, tc.stepCtx(s))
			if t == cty.DynamicPseudoType {
				continue
			}
			if _, err := convert.Convert(cty.UnknownVal(t), v.Type); err != nil {
				diags = append(diags, errDiag("Var set to the wrong type",
					fmt.Sprintf("var %q is declared %s at %s, but this set gives it %s.", v.Name, typeString(v.Type), v.DeclRange, typeString(t)), p.Value.Range()))
			}
		}
	}
	for _, s := range l.pb.AllSteps() {
		if g := s.Gate; g != nil {
			for _, r := range g.Rules {
				outcome(s, r.Outcome)
			}
			if g.Otherwise != nil {
				outcome(s, g.Otherwise.Outcome)
			}
		}
	}
	return diags
}
