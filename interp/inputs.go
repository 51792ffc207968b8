package interp

import (
	"fmt"
	"sort"
	"strings"

	"github.com/apl-lang/apl/lang"
	"github.com/zclconf/go-cty/cty"
)

// InputError is a problem with the inputs a run was given: a missing
// required input, an unknown mode, a failed validation. The CLI reports
// it as a usage error.
type InputError struct {
	Input string // the input's name; "" for a mode problem
	Flag  string // the flag that sets it, e.g. "--phase"
	Msg   string
}

func (e *InputError) Error() string { return e.Msg }

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
				return cty.NilVal, &InputError{Msg: fmt.Sprintf("playbook %q has no modes; --mode %s cannot apply", pb.Name, mode)}
			}
			return cty.NilVal, &InputError{Msg: fmt.Sprintf("unknown mode %q; playbook %q has modes: %s", mode, pb.Name, strings.Join(names, ", "))}
		}
		preset = m.Inputs
	}
	for name := range given {
		if pb.Input(name) == nil {
			return cty.NilVal, &InputError{Input: name, Msg: fmt.Sprintf("playbook %q has no input %q", pb.Name, name)}
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
				return cty.NilVal, &InputError{Input: in.Name, Flag: flagOf(in),
					Msg: fmt.Sprintf("missing required input %q: set it with %s", in.Name, flagOf(in))}
			}
			v = in.Default
		}
		cv, err := in.Convert(v)
		if err != nil {
			return cty.NilVal, &InputError{Input: in.Name, Flag: flagOf(in), Msg: fmt.Sprintf("%s: %v", flagOf(in), err)}
		}
		vals[in.Name] = cv
	}
	obj := cty.ObjectVal(vals)
	inputsEnv := goValue(obj)
	for _, in := range pb.Inputs {
		for _, val := range in.Validations {
			if val.Condition == nil || val.Condition.Program == nil {
				continue
			}
			ok, err := val.Condition.Eval(map[string]any{lang.RootValue: goValue(vals[in.Name]), lang.RootInputs: inputsEnv})
			if err != nil {
				return cty.NilVal, &InputError{Input: in.Name, Flag: flagOf(in),
					Msg: fmt.Sprintf("%s: validation of input %q failed to run: %v", flagOf(in), in.Name, err)}
			}
			if !ok {
				return cty.NilVal, &InputError{Input: in.Name, Flag: flagOf(in),
					Msg: fmt.Sprintf("%s: invalid value for input %q: %s", flagOf(in), in.Name, val.Message)}
			}
		}
	}
	return obj, nil
}

func flagOf(in *lang.Input) string {
	if in.Flag != "" {
		return "--" + in.Flag
	}
	return "--" + in.FlagName()
}
