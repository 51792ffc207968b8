package lang

import (
	"strings"
	"testing"

	"github.com/zclconf/go-cty/cty"
)

// TestInputParseValue reads command-line values: strings as they are,
// everything else with HCL syntax.
func TestInputParseValue(t *testing.T) {
	tests := []struct {
		name string
		typ  cty.Type
		in   string
		want cty.Value
	}{
		{"string", cty.String, "6.3", cty.StringVal("6.3")},
		{"string kept verbatim", cty.String, `"quoted" ${x}`, cty.StringVal(`"quoted" ${x}`)},
		{"empty string", cty.String, "", cty.StringVal("")},
		{"whole number", cty.Number, "7", cty.NumberIntVal(7)},
		{"fraction", cty.Number, "9.5", cty.NumberFloatVal(9.5)},
		{"bool true", cty.Bool, "true", cty.True},
		{"bool false", cty.Bool, "false", cty.False},
		{"list", cty.List(cty.String), `["make lint", "make test"]`, cty.ListVal([]cty.Value{cty.StringVal("make lint"), cty.StringVal("make test")})},
		{"empty list", cty.List(cty.String), `[]`, cty.ListValEmpty(cty.String)},
		{"list converts elements", cty.List(cty.String), `[1, true]`, cty.ListVal([]cty.Value{cty.StringVal("1"), cty.StringVal("true")})},
		{"object", cty.Object(map[string]cty.Type{"a": cty.Number}), `{ a = 1 }`, cty.ObjectVal(map[string]cty.Value{"a": cty.NumberIntVal(1)})},
		{"functions", cty.Number, `max(3, 4)`, cty.NumberIntVal(4)},
		{"any takes a bare word as a string", cty.DynamicPseudoType, "hello", cty.StringVal("hello")},
		{"any takes HCL values", cty.DynamicPseudoType, "7", cty.NumberIntVal(7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &Input{Name: "pass_threshold", Type: tt.typ}
			got, err := in.ParseValue(tt.in)
			if err != nil {
				t.Fatalf("ParseValue(%q): %v", tt.in, err)
			}
			if !got.RawEquals(tt.want) {
				t.Errorf("ParseValue(%q) = %#v, want %#v", tt.in, got, tt.want)
			}
		})
	}
}

// TestInputParseValueErrors checks that a value of the wrong type is
// refused with a message that names the value and the type. The cmd
// package puts the flag in front (--pass-threshold: ...); the messages
// below say which input they are about where lang knows it.
func TestInputParseValueErrors(t *testing.T) {
	tests := []struct {
		name string
		typ  cty.Type
		in   string
		want []string // substrings of the error
	}{
		{"word for a number", cty.Number, "high", []string{`"high"`, "number"}},
		{"bool for a number", cty.Number, "true", []string{`input "pass_threshold"`, "number"}},
		{"string for a number", cty.Number, `"seven"`, []string{`input "pass_threshold"`, "number"}},
		{"number for a bool", cty.Bool, "7", []string{`input "pass_threshold"`, "bool"}},
		{"syntax", cty.List(cty.String), `["a",`, []string{"not valid HCL", "list(string)"}},
		{"string for a list", cty.List(cty.String), `"make lint"`, []string{`input "pass_threshold"`, "list(string)"}},
		{"null", cty.Number, "null", []string{`input "pass_threshold"`, "null"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &Input{Name: "pass_threshold", Type: tt.typ}
			v, err := in.ParseValue(tt.in)
			if err == nil {
				t.Fatalf("ParseValue(%q) = %#v, want an error", tt.in, v)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestInputParseValueErrorNamesInput: a value HCL cannot evaluate (a bare
// word for a number) is refused without saying which input it was for,
// while a value of the wrong type names the input. cmd adds the flag, but
// every other caller (interp's --var handling, resume) gets a message that
// names nothing.
func TestInputParseValueErrorNamesInput(t *testing.T) {
	in := &Input{Name: "pass_threshold", Type: cty.Number}
	for _, s := range []string{"high", `["a",`} {
		_, err := in.ParseValue(s)
		if err == nil || !strings.Contains(err.Error(), "pass_threshold") && !strings.Contains(err.Error(), "pass-threshold") {
			t.Errorf("ParseValue(%q) error = %v, want it to name the input or its flag", s, err)
		}
	}
}

// TestInputFlagName checks flag names use dashes.
func TestInputFlagName(t *testing.T) {
	in := &Input{Name: "pass_threshold"}
	if got := in.FlagName(); got != "pass-threshold" {
		t.Errorf("FlagName() = %q, want %q", got, "pass-threshold")
	}
}

// TestInputDecode checks what the loader makes of input blocks: types
// from the type, else from the default, else string; required inputs;
// flags without leading dashes.
func TestInputDecode(t *testing.T) {
	src := `
playbook "inputs" {
  description = "Inputs."
}
input "phase" {
  flag = "--phase-id"
}
input "threshold" {
  default = 7
}
input "checks" {
  type    = list(string)
  default = ["a"]
}
input "anything" {
  type = any
}
step "s" {
  shell {
    command = concat([inputs.phase, tostring(inputs.threshold), tostring(inputs.anything)], inputs.checks)
  }
}
`
	pb, diags := (&Loader{}).LoadSources(map[string][]byte{"inputs.hcl": []byte(src)}, t.TempDir())
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	tests := []struct {
		name     string
		typ      cty.Type
		required bool
		flag     string
	}{
		{"phase", cty.String, true, "phase-id"},
		{"threshold", cty.Number, false, ""},
		{"checks", cty.List(cty.String), false, ""},
		{"anything", cty.DynamicPseudoType, true, ""},
	}
	for _, tt := range tests {
		in := pb.Input(tt.name)
		if in == nil {
			t.Errorf("no input %q", tt.name)
			continue
		}
		if !in.Type.Equals(tt.typ) {
			t.Errorf("input %s: type %s, want %s", tt.name, typeString(in.Type), typeString(tt.typ))
		}
		if in.Required() != tt.required {
			t.Errorf("input %s: Required() = %v, want %v", tt.name, in.Required(), tt.required)
		}
		if in.Flag != tt.flag {
			t.Errorf("input %s: Flag = %q, want %q", tt.name, in.Flag, tt.flag)
		}
	}
	if pb.Input("nope") != nil {
		t.Errorf("Input(%q) is not nil", "nope")
	}
	if got := pb.Input("checks").Default; !got.RawEquals(cty.ListVal([]cty.Value{cty.StringVal("a")})) {
		t.Errorf("checks default = %#v", got)
	}
}
