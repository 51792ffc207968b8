package lang

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

var inputSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "default"},
		{Name: "description"},
		{Name: "flag"},
		{Name: "positional"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "message", Required: true},
	},
}

// Input is a declared input: a typed value given on the command line, by a
// mode or by its default.
type Input struct {
	Name        string
	Type        cty.Type
	Default     cty.Value // cty.NilVal when the input is required
	Description string
	Flag        string // an extra flag name, e.g. "phase"
	// Positional lets apl run take the input as the argument after the
	// playbook: apl run stdlib:risk-pipeline "Fix typo in README". At most
	// one input of a playbook has it.
	Positional  bool
	Validations []*Validation
	DeclRange   hcl.Range
}

// PositionalInput returns the input apl run takes as the argument after
// the playbook, or nil.
func (p *Playbook) PositionalInput() *Input {
	for _, in := range p.Inputs {
		if in.Positional {
			return in
		}
	}
	return nil
}

// Required reports whether the input has no default.
func (i *Input) Required() bool { return i.Default == cty.NilVal }

// FlagName is the input's CLI flag: pass_threshold → pass-threshold.
func (i *Input) FlagName() string { return strings.ReplaceAll(i.Name, "_", "-") }

// Validation is a condition an input's value must meet.
type Validation struct {
	Condition *Condition
	Message   string
}

func (l *loader) decodeInputBlock(b *hcl.Block) hcl.Diagnostics {
	diags := validName("input", b)
	name := b.Labels[0]
	if prev := l.pb.inputs[name]; prev != nil {
		return append(diags, duplicate("input", name, prev.DeclRange, b))
	}
	// Without a type, an input takes its default's type, else string.
	in := &Input{Name: name, Type: cty.String, Default: cty.NilVal, DeclRange: b.DefRange}
	content, d := b.Body.Content(inputSchema)
	diags = append(diags, d...)
	if a := content.Attributes["type"]; a != nil {
		t, d := l.decodeType(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			in.Type = t
		}
	} else if a := content.Attributes["default"]; a != nil {
		if v, d := constValue(a); !d.HasErrors() && !v.IsNull() {
			in.Type = v.Type()
		}
	}
	if a := content.Attributes["description"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		in.Description = v
	}
	if a := content.Attributes["flag"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		in.Flag = strings.TrimLeft(v, "-")
	}
	if a := content.Attributes["positional"]; a != nil {
		v, d := constBool(a)
		diags = append(diags, d...)
		in.Positional = v
		if prev := l.pb.PositionalInput(); v && prev != nil {
			diags = append(diags, errDiag("Several positional inputs",
				fmt.Sprintf("Input %q is already the argument after the playbook (%s); apl run takes one. Give this one a flag.", prev.Name, prev.DeclRange), a.NameRange))
			in.Positional = false
		}
	}
	if a := content.Attributes["default"]; a != nil {
		v, d := constValue(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			cv, err := convert.Convert(v, in.Type)
			if err != nil {
				diags = append(diags, errDiag("Invalid default value",
					fmt.Sprintf("The default of input %q is not a %s: %s.", name, typeString(in.Type), err), a.Expr.Range()))
			} else {
				in.Default = cv
			}
		}
	}
	for _, vb := range content.Blocks {
		vc, d := vb.Body.Content(validationSchema)
		diags = append(diags, d...)
		if vc.Attributes["condition"] == nil || vc.Attributes["message"] == nil {
			continue
		}
		msg, d := constString(vc.Attributes["message"])
		diags = append(diags, d...)
		in.Validations = append(in.Validations, &Validation{Message: msg, Condition: &Condition{Range: vc.Attributes["condition"].Expr.Range()}})
		l.pendingValidations = append(l.pendingValidations, pendingValidation{in, len(in.Validations) - 1, vc.Attributes["condition"]})
	}
	l.pb.Inputs = append(l.pb.Inputs, in)
	l.pb.inputs[name] = in
	return diags
}

type pendingValidation struct {
	in   *Input
	i    int
	attr *hcl.Attribute
}

// compileValidations compiles an input's validation conditions, which see
// the input's own value as `value` and the other inputs as `inputs`.
func (l *loader) compileValidations(in *Input) hcl.Diagnostics {
	var diags hcl.Diagnostics
	venv := l.condEnv(Scope{Input: in})
	for _, p := range l.pendingValidations {
		if p.in != in {
			continue
		}
		c, d := l.decodeCondition(p.attr, venv)
		diags = append(diags, d...)
		if c != nil {
			in.Validations[p.i].Condition = c
		}
	}
	return diags
}

// ValueError is a command-line value that does not read as its input's
// type. Msg speaks of what the user typed; the CLI puts the flag before
// it.
type ValueError struct {
	Input string
	Type  cty.Type
	Msg   string
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("input %q (%s): %s", e.Input, typeString(e.Type), e.Msg)
}

// ParseValue reads a command-line value for the input: strings are taken
// as they are, numbers and bools as such (7, -2.5, true, false, 1, 0), and
// lists and objects with HCL syntax (["make lint"], { a = 1 }), where a
// bare word is an error rather than a variable.
func (in *Input) ParseValue(s string) (cty.Value, error) {
	bad := func(format string, args ...any) error {
		return &ValueError{Input: in.Name, Type: in.Type, Msg: fmt.Sprintf(format, args...)}
	}
	switch in.Type {
	case cty.String:
		return cty.StringVal(s), nil
	case cty.Number:
		v, err := cty.ParseNumberVal(strings.TrimSpace(s))
		if err == nil && !v.AsBigFloat().IsInf() {
			return in.Convert(v)
		}
		if v, ok := constValueOf(s); ok && v.Type() == cty.Number {
			return in.Convert(v) // max(3, 4)
		}
		return cty.NilVal, bad("%q is not a number", s)
	case cty.Bool:
		if b, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
			return in.Convert(cty.BoolVal(b))
		}
		if v, ok := constValueOf(s); ok && v.Type() == cty.Bool {
			return in.Convert(v)
		}
		return cty.NilVal, bad("%q is not a bool: use true or false", s)
	}
	what := in.Type.FriendlyNameForConstraint()
	expr, diags := hclsyntax.ParseExpression([]byte(s), "--"+in.FlagName(), hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() {
		if in.Type == cty.DynamicPseudoType {
			return cty.StringVal(s), nil
		}
		return cty.NilVal, bad("%q is not valid HCL for a %s: %s", s, what, diags[0].Summary)
	}
	if vars := expr.Variables(); len(vars) > 0 {
		if in.Type == cty.DynamicPseudoType {
			return cty.StringVal(s), nil
		}
		return cty.NilVal, bad("%q is not valid HCL for a %s: %s is not quoted", s, what, vars[0].RootName())
	}
	v, diags := expr.Value(&hcl.EvalContext{Functions: Functions()})
	if diags.HasErrors() {
		return cty.NilVal, bad("%q is not a %s: %s", s, what, diags[0].Summary)
	}
	return in.Convert(v)
}

// constValueOf evaluates s as an HCL expression without variables.
func constValueOf(s string) (cty.Value, bool) {
	expr, diags := hclsyntax.ParseExpression([]byte(s), "value", hcl.Pos{Line: 1, Column: 1})
	if diags.HasErrors() || len(expr.Variables()) > 0 {
		return cty.NilVal, false
	}
	v, diags := expr.Value(&hcl.EvalContext{Functions: Functions()})
	return v, !diags.HasErrors() && v.IsWhollyKnown() && !v.IsNull()
}

// Convert converts v to the input's type, with an error that names it.
func (in *Input) Convert(v cty.Value) (cty.Value, error) {
	cv, err := convert.Convert(v, in.Type)
	if err != nil {
		return cty.NilVal, fmt.Errorf("input %q must be a %s: %s", in.Name, typeString(in.Type), err)
	}
	if cv.IsNull() {
		return cty.NilVal, fmt.Errorf("input %q must not be null", in.Name)
	}
	return cv, nil
}
