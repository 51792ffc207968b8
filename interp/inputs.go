package interp

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// InputError is a problem with the inputs a run was given: an unknown
// mode, an unknown or missing input, a value that does not convert or
// fails its validation. It says what is wrong, not where the value came
// from or how to set one: that is the caller's to add (a flag, a var
// file, a sub-playbook's inputs block).
type InputError struct {
	Kind  InputProblem
	Input string // the input's name; "" when the mode is the problem
	Mode  string // the mode, when it is the problem
	Msg   string // the detail: the validation's message, the conversion error
}

// InputProblem says what is wrong with an input.
type InputProblem uint8

// The problems an input can have.
const (
	InputInvalid InputProblem = iota // the value does not convert, or fails a validation
	InputMissing                     // required, and not given
	InputUnknown                     // the playbook has no such input
	InputMode                        // the mode does not exist
)

func (e *InputError) Error() string {
	switch e.Kind {
	case InputMissing:
		return fmt.Sprintf("missing required input %q", e.Input)
	case InputUnknown, InputMode:
		return e.Msg
	}
	return fmt.Sprintf("invalid value for input %q: %s", e.Input, e.Msg)
}

// resolveInputs combines defaults, the mode's presets and explicit values,
// in that order of precedence (lowest first), and checks validations.
func resolveInputs(pb *lang.Playbook, mode string, given map[string]cty.Value) (cty.Value, error) {
	var preset map[string]cty.Value
	if mode != "" {
		m := pb.Modes[mode]
		if m == nil {
			names := make([]string, 0, len(pb.Modes))
			for n := range pb.Modes {
				names = append(names, n)
			}
			sort.Strings(names)
			if len(names) == 0 {
				return cty.NilVal, &InputError{Kind: InputMode, Mode: mode, Msg: fmt.Sprintf("playbook %q has no modes; mode %q cannot apply", pb.Name, mode)}
			}
			return cty.NilVal, &InputError{Kind: InputMode, Mode: mode, Msg: fmt.Sprintf("unknown mode %q; playbook %q has modes: %s", mode, pb.Name, strings.Join(names, ", "))}
		}
		preset = m.Inputs
	}
	for name := range given {
		if pb.Input(name) == nil {
			return cty.NilVal, &InputError{Kind: InputUnknown, Input: name, Msg: fmt.Sprintf("playbook %q has no input %q", pb.Name, name)}
		}
	}
	vals := make(map[string]cty.Value, len(pb.Inputs))
	for _, in := range pb.Inputs {
		v, ok := given[in.Name]
		if !ok {
			v, ok = preset[in.Name]
		}
		if !ok {
			if in.Required() {
				return cty.NilVal, &InputError{Kind: InputMissing, Input: in.Name}
			}
			v = in.Default
		}
		cv, err := in.Convert(v)
		if err != nil {
			return cty.NilVal, &InputError{Input: in.Name, Msg: err.Error()}
		}
		vals[in.Name] = cv
	}
	obj := cty.ObjectVal(vals)
	inputsEnv := lang.ExprValue(obj)
	for _, in := range pb.Inputs {
		for _, val := range in.Validations {
			if val.Condition == nil || val.Condition.Program == nil {
				continue
			}
			ok, err := val.Condition.Eval(validationEnv(in, vals[in.Name], inputsEnv))
			if err != nil {
				return cty.NilVal, &InputError{Input: in.Name, Msg: fmt.Sprintf("the validation failed to run: %v", err)}
			}
			if !ok {
				return cty.NilVal, &InputError{Input: in.Name, Msg: val.Message}
			}
		}
	}
	return obj, nil
}
