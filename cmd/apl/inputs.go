package main

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"
	"github.com/apl-lang/apl/builtins"
	"github.com/apl-lang/apl/interp"
	"github.com/apl-lang/apl/lang"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/zclconf/go-cty/cty"
)

// A playbook's inputs reach apl run from five places. From the strongest
// to the weakest:
//
//  1. the input's own flag, --phase 6.3, or for the positional input
//     the argument after the playbook (not both);
//  2. --var phase=6.3;
//  3. --var-file FILE, an HCL or JSON file of name = value;
//  4. the environment, APL_VAR_phase=6.3;
//  5. the --mode's presets (applied by interp);
//
// and the input's default is used when none sets it. Inside one place an
// input given twice is an error; across places the stronger wins.

// envVarPrefix is the prefix of the environment variables that set inputs:
// APL_VAR_<input name>.
const envVarPrefix = "APL_VAR_"

// inputValue is the kong flag of a string, number, list or object input. It
// keeps what the user typed; runCmd reads it by the input's type once kong
// is done, so that every value's message names its flag the same way.
type inputValue struct{ vals []string }

// Decode takes the flag's value. A value that is itself a flag
// (--phase --agent-cmd x) is a missing value, not a value; a negative
// number (--offset -2) is a value.
func (v *inputValue) Decode(ctx *kong.DecodeContext) error {
	t := ctx.Scan.Peek()
	if t.IsEOL() || !t.IsValue() && !isNegativeNumber(t.String()) {
		what := "it is the last argument"
		if !t.IsEOL() {
			what = fmt.Sprintf("%s is a flag; to give a value that starts with -, write --%s=%s", t, ctx.Value.Name, t)
		}
		return fmt.Errorf("needs a value: %s", what)
	}
	ctx.Scan.Pop()
	v.vals = append(v.vals, fmt.Sprint(t.Value))
	return nil
}

// argInputValue is the kong argument of a positional input: apl run
// PLAYBOOK "Fix typo in README".
type argInputValue struct{ vals []string }

// Decode takes the argument.
func (v *argInputValue) Decode(ctx *kong.DecodeContext) error {
	v.vals = append(v.vals, fmt.Sprint(ctx.Scan.Pop().Value))
	return nil
}

// boolInputValue is the kong flag of a bool input: --existing-plan alone,
// or --existing-plan=false.
type boolInputValue struct{ vals []string }

// Decode takes the value after "=", or true.
func (v *boolInputValue) Decode(ctx *kong.DecodeContext) error {
	if t := ctx.Scan.Peek(); t.Type == kong.FlagValueToken {
		ctx.Scan.Pop()
		v.vals = append(v.vals, fmt.Sprint(t.Value))
		return nil
	}
	v.vals = append(v.vals, "true")
	return nil
}

// IsBool makes kong take the flag's value only after "=".
func (*boolInputValue) IsBool() bool { return true }

func isNegativeNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && strings.HasPrefix(s, "-")
}

var (
	inputValueType     = reflect.TypeFor[inputValue]()
	boolInputValueType = reflect.TypeFor[boolInputValue]()
	argInputValueType  = reflect.TypeFor[argInputValue]()
)

// inputFlags are the flags of a playbook's inputs, as a struct that kong
// embeds into apl run (a kong.Plugins element), so that kong parses them
// with the run options and lists them in the help.
type inputFlags struct {
	pb *lang.Playbook
	// fields[i] is the struct field of pb.Inputs[i], -1 when the input
	// has no flag of its own.
	fields []int
	// flags[i] and clashes[i] are the flags that set pb.Inputs[i], its
	// alias first, and those it cannot have since run options have them.
	flags, clashes [][]string
	// arg is the struct field of the positional input's argument, -1
	// when the playbook has none.
	arg int
	// modes maps a mode flag's struct field to its mode: --quality is
	// --mode quality, for each mode whose name no option or input has.
	modes map[int]string
	value reflect.Value // a pointer to the generated struct
}

// newInputFlags builds the flags of pb's inputs: one per input, named after
// it (pass_threshold → --pass-threshold), with its alias as the primary
// name when it has one. taken reports the names of the run options, which
// an input cannot have: it is set with --var instead.
func newInputFlags(pb *lang.Playbook, taken func(string) bool) *inputFlags {
	f := &inputFlags{pb: pb, arg: -1}
	var fields []reflect.StructField
	if in := pb.PositionalInput(); in != nil {
		// Before the flags: kong lists a struct's arguments in field order.
		tag := fmt.Sprintf(`arg:"" optional:"" name:%s help:%s`, strconv.Quote(in.Name), strconv.Quote(kongEscape(inputHelp(in))))
		f.arg = len(fields)
		fields = append(fields, reflect.StructField{Name: "Arg", Type: argInputValueType, Tag: reflect.StructTag(tag)})
	}
	for _, in := range pb.Inputs {
		names := []string{in.FlagName()}
		if in.Flag != "" && in.Flag != in.FlagName() {
			names = []string{in.Flag, in.FlagName()}
		}
		var ok, clash []string
		for _, n := range names {
			if taken(n) {
				clash = append(clash, n)
			} else {
				ok = append(ok, n)
			}
		}
		f.flags = append(f.flags, ok)
		f.clashes = append(f.clashes, clash)
		if len(ok) == 0 {
			f.fields = append(f.fields, -1)
			continue
		}
		typ := inputValueType
		if in.Type == cty.Bool {
			typ = boolInputValueType
		}
		// The placeholder is VALUE: the type is spelled out in the help.
		help := inputHelp(in)
		if len(ok) > 1 {
			// kong's help does not show aliases.
			help = strings.TrimSuffix(help, ")") + ", also --" + strings.Join(ok[1:], ", --") + ")"
		}
		tag := fmt.Sprintf(`placeholder:"VALUE" name:%s help:%s`, strconv.Quote(ok[0]), strconv.Quote(kongEscape(help)))
		if len(ok) > 1 {
			tag += fmt.Sprintf(` aliases:%s`, strconv.Quote(strings.Join(ok[1:], ",")))
		}
		f.fields = append(f.fields, len(fields))
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("Input%d", len(fields)), Type: typ, Tag: reflect.StructTag(tag)})
	}
	f.modes = map[int]string{}
	for _, name := range slices.Sorted(maps.Keys(pb.Modes)) {
		flag := strings.ReplaceAll(name, "_", "-")
		if taken(flag) || slices.ContainsFunc(f.flags, func(names []string) bool { return slices.Contains(names, flag) }) {
			continue
		}
		help := "Run in mode " + name + ", as --mode " + name + " does."
		if d := pb.Modes[name].Description; d != "" {
			help = d + " (--mode " + name + ")"
		}
		tag := fmt.Sprintf(`name:%s help:%s`, strconv.Quote(flag), strconv.Quote(kongEscape(help)))
		f.modes[len(fields)] = name
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("Mode%d", len(fields)), Type: reflect.TypeFor[bool](), Tag: reflect.StructTag(tag)})
	}
	f.value = reflect.New(reflect.StructOf(fields))
	return f
}

// mode is the mode of the run: --mode's, or a mode flag's. Two that name
// different modes are a usage error.
func (f *inputFlags) mode(given string) (string, error) {
	mode, from := given, "--mode "+given
	for _, i := range slices.Sorted(maps.Keys(f.modes)) {
		if !f.value.Elem().Field(i).Bool() {
			continue
		}
		name := f.modes[i]
		flag := "--" + strings.ReplaceAll(name, "_", "-")
		if mode != "" && mode != name {
			return "", fmt.Errorf("%s and %s name two modes; give one", from, flag)
		}
		mode, from = name, flag
	}
	return mode, nil
}

// kongEscape keeps kong from reading ${...} in a playbook's text as one of
// its variables.
func kongEscape(s string) string { return strings.ReplaceAll(s, "$", "$$") }

// inputHelp is an input's line in apl run PLAYBOOK --help: its description,
// its type, and its default or that it is required.
func inputHelp(in *lang.Input) string {
	req := "required"
	if !in.Required() {
		req = "default " + formatDefault(in)
	}
	desc := in.Description
	if desc != "" {
		desc += " "
	}
	return fmt.Sprintf("%s(%s, %s)", desc, typeLabel(in.Type), req)
}

// raw returns what the flags of pb.Inputs[i] were given, in order.
func (f *inputFlags) raw(i int) []string {
	if f.fields[i] < 0 {
		return nil
	}
	switch v := f.value.Elem().Field(f.fields[i]).Addr().Interface().(type) {
	case *inputValue:
		return v.vals
	case *boolInputValue:
		return v.vals
	}
	return nil
}

// byFlag returns the input that a flag sets, or nil.
func (f *inputFlags) byFlag(name string) *lang.Input {
	for i, in := range f.pb.Inputs {
		if slices.Contains(f.flags[i], name) {
			return in
		}
	}
	return nil
}

// first is the flag for the example in a hint: the first input's alias if
// it has one, as the playbook's author chose it for users. The positional
// input comes last: the hint is about the other inputs.
func (f *inputFlags) first() string {
	for i, flags := range f.flags {
		if len(flags) > 0 && !f.pb.Inputs[i].Positional {
			return flags[0]
		}
	}
	for _, flags := range f.flags {
		if len(flags) > 0 {
			return flags[0]
		}
	}
	return "name"
}

// given is an input's value as typed, and where it came from, for
// messages: "--phase", "--var phase", "vars.hcl:3", "APL_VAR_phase".
type given struct {
	val, from string
	// parsed is set for a --var-file value, which HCL has already read.
	parsed cty.Value
}

// collect gathers the inputs given on the command line, in var files and
// in the environment, the stronger over the weaker, and reads them by
// their inputs' types.
//
// from says where each given input's value came from, for messages.
func (f *inputFlags) collect(o *runOptions, getenv func(string) string) (inputs map[string]cty.Value, from map[string]string, diags hcl.Diagnostics, srcs map[string][]byte, err error) {
	raw := map[string]given{}
	// The environment: the weakest; a variable for no input is ignored, as
	// it may be meant for another playbook.
	for _, in := range f.pb.Inputs {
		if s := getenv(envVarPrefix + in.Name); s != "" {
			raw[in.Name] = given{val: s, from: envVarPrefix + in.Name}
		}
	}
	// Var files, later ones over earlier ones.
	srcs = map[string][]byte{}
	for _, path := range o.VarFile {
		vals, src, diags := f.readVarFile(path)
		srcs[path] = src
		if diags.HasErrors() {
			return nil, nil, diags, srcs, fmt.Errorf("--var-file %s: %s", path, countDiags(diags))
		}
		for name, g := range vals {
			raw[name] = g
		}
	}
	// --var, then the flags.
	seen := map[string]bool{}
	for _, v := range o.Var {
		name, val, ok := strings.Cut(v, "=")
		if !ok {
			return nil, nil, nil, nil, fmt.Errorf("--var %q: want name=value", v)
		}
		if seen[name] {
			return nil, nil, nil, nil, fmt.Errorf("input %q given twice", name)
		}
		seen[name] = true
		if f.pb.Input(name) == nil {
			return nil, nil, nil, nil, fmt.Errorf("--var %s: playbook %q has no input %q%s", name, f.pb.Name, name, suggestInput(f.pb, name, " (did you mean --var %s=...?)"))
		}
		raw[name] = given{val: val, from: "--var " + name}
	}
	for i, in := range f.pb.Inputs {
		switch vals := f.raw(i); len(vals) {
		case 0:
		case 1:
			raw[in.Name] = given{val: vals[0], from: "--" + f.flags[i][0]}
		default:
			return nil, nil, nil, nil, fmt.Errorf("input %q given twice", in.Name)
		}
	}
	if f.arg >= 0 {
		if vals := f.value.Elem().Field(f.arg).Addr().Interface().(*argInputValue).vals; len(vals) > 0 {
			in := f.pb.PositionalInput()
			if g, ok := raw[in.Name]; ok && strings.HasPrefix(g.from, "--") && !strings.HasPrefix(g.from, "--var") {
				return nil, nil, nil, nil, fmt.Errorf("input %q given twice: as the argument %q and as %s", in.Name, vals[0], g.from)
			}
			raw[in.Name] = given{val: vals[0], from: "the argument"}
		}
	}
	inputs, from = map[string]cty.Value{}, map[string]string{}
	for _, in := range f.pb.Inputs {
		g, ok := raw[in.Name]
		if !ok {
			continue
		}
		from[in.Name] = g.from
		if g.parsed != cty.NilVal {
			inputs[in.Name] = g.parsed
			continue
		}
		v, err := parseInput(in, g.val)
		if err != nil {
			return nil, nil, nil, nil, fmt.Errorf("%s: %w", g.from, err)
		}
		inputs[in.Name] = v
	}
	return inputs, from, nil, nil, nil
}

// inputError puts interp's problem with an input into words that say
// where its value came from, or how to give one.
func (f *inputFlags) inputError(ie *interp.InputError, from map[string]string, mode string) error {
	switch ie.Kind {
	case interp.InputMissing:
		if in := f.pb.PositionalInput(); in != nil && in.Name == ie.Input {
			return fmt.Errorf("%v: give it as the argument after the playbook, or with --%s", ie, f.flagFor(ie.Input))
		}
		return fmt.Errorf("%v: set it with --%s", ie, f.flagFor(ie.Input))
	case interp.InputMode:
		return fmt.Errorf("--mode %s: %v", mode, ie)
	case interp.InputInvalid:
		src, ok := from[ie.Input]
		switch {
		case ok:
		case mode != "":
			src = "--mode " + mode
		default:
			src = "the default of " + ie.Input
		}
		return fmt.Errorf("%s: %v", src, ie)
	}
	return ie
}

// flagFor is the flag that sets an input: the first of its names.
func (f *inputFlags) flagFor(input string) string {
	for i, in := range f.pb.Inputs {
		if in.Name == input && len(f.flags[i]) > 0 {
			return f.flags[i][0]
		}
	}
	return "var " + input + "=VALUE"
}

// readVarFile reads a --var-file: HCL (name = value, as in Terraform's
// .tfvars) or, when its name ends in .json, a JSON object. Every problem is
// a diagnostic with its place in the file.
func (f *inputFlags) readVarFile(path string) (map[string]given, []byte, hcl.Diagnostics) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Unreadable var file",
			Detail: fmt.Sprintf("--var-file %s: %v.", path, errorDetail(err))}}
	}
	p := hclparse.NewParser()
	var file *hcl.File
	var diags hcl.Diagnostics
	if strings.HasSuffix(path, ".json") {
		file, diags = p.ParseJSON(src, path)
	} else {
		file, diags = p.ParseHCL(src, path)
	}
	if diags.HasErrors() {
		return nil, src, diags
	}
	attrs, d := file.Body.JustAttributes()
	diags = append(diags, d...)
	out := map[string]given{}
	// In the file's order, so that its problems are reported in order.
	sorted := slices.SortedFunc(maps.Values(attrs), func(a, b *hcl.Attribute) int {
		return a.NameRange.Start.Byte - b.NameRange.Start.Byte
	})
	for _, a := range sorted {
		name := a.Name
		in := f.pb.Input(name)
		if in == nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Unknown input",
				Detail:  fmt.Sprintf("Playbook %q has no input %q.%s", f.pb.Name, name, suggestInput(f.pb, name, " Did you mean %q?")),
				Subject: a.NameRange.Ptr()})
			continue
		}
		v, d := a.Expr.Value(&hcl.EvalContext{Functions: lang.Functions()})
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		cv, err := in.Convert(v)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid input value",
				Detail: sentence(err.Error()), Subject: a.Expr.Range().Ptr()})
			continue
		}
		out[name] = given{from: fmt.Sprintf("%s:%d", path, a.NameRange.Start.Line), parsed: cv}
	}
	return out, src, diags
}

// errorDetail is an OS error without the path, which the message already
// names.
func errorDetail(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// sentence makes a message a sentence for a diagnostic's Detail.
func sentence(s string) string {
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// suggestInput suggests the input closest to a name, in the form format
// gives it, or "".
func suggestInput(pb *lang.Playbook, name, format string) string {
	names := make([]string, len(pb.Inputs))
	for i, in := range pb.Inputs {
		names[i] = in.Name
	}
	if s := lang.Suggest(name, names); s != "" {
		return fmt.Sprintf(format, s)
	}
	return ""
}

// parseInput reads a command-line value for an input; the caller puts
// the flag in front of lang's message about what the user typed.
func parseInput(in *lang.Input, s string) (cty.Value, error) {
	v, err := in.ParseValue(s)
	var ve *lang.ValueError
	if errors.As(err, &ve) {
		return cty.NilVal, errors.New(ve.Msg)
	}
	return v, err
}

func formatDefault(in *lang.Input) string {
	if in.Type == cty.String {
		return fmt.Sprintf("%q", in.Default.AsString())
	}
	b, err := builtins.CtyToJSON(in.Default)
	if err != nil {
		return "?"
	}
	return string(b)
}

func typeLabel(t cty.Type) string { return t.FriendlyNameForConstraint() }
