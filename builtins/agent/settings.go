package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	ctyjson "github.com/zclconf/go-cty/cty/json"
)

// This file is the one list of the settings of a playbook's driver block:
// the type of each, the driver types that take it, and how it becomes a
// field of Config. ConfigFrom reads a block with it at run time, and
// Schema hands it to the loader, so that apl validate rejects what a run
// would.

// The kinds of driver that take a setting.
var (
	cliTypes  = []string{TypeCommand, TypeClaudeCode, TypeCodex, TypeGemini}
	presets   = []string{TypeClaudeCode, TypeCodex, TypeGemini}
	httpTypes = []string{TypeOpenAI, TypeAnthropic}
)

// Inputs and outputs of the command driver.
var (
	commandInputs  = []string{"stdin", "file", "arg"}
	commandOutputs = []string{"text", "json", "jsonl"}
)

// setting is one attribute of a driver block besides type.
type setting struct {
	name  string
	ty    cty.Type // what the value converts to; cty.DynamicPseudoType: any
	what  string   // the type, for messages
	types []string // the driver types that take it
	set   func(cfg *Config, v cty.Value) error
}

var settings = []setting{
	{"command", cty.List(cty.String), "a list of strings", cliTypes, func(cfg *Config, v cty.Value) (err error) {
		cfg.Command, err = goAs[[]string](v)
		return err
	}},
	{"input", cty.String, "a string", []string{TypeCommand}, func(cfg *Config, v cty.Value) error {
		cfg.Input = v.AsString()
		return oneOf(cfg.Input, commandInputs)
	}},
	{"output", cty.String, "a string", []string{TypeCommand}, func(cfg *Config, v cty.Value) error {
		cfg.Output = v.AsString()
		return oneOf(cfg.Output, commandOutputs)
	}},
	{"fields", cty.Map(cty.String), "an object of strings", []string{TypeCommand}, func(cfg *Config, v cty.Value) (err error) {
		if cfg.Fields, err = goAs[map[string]string](v); err != nil {
			return err
		}
		for _, k := range slices.Sorted(maps.Keys(cfg.Fields)) {
			if !slices.Contains(fieldNames, k) {
				return fmt.Errorf("unknown field %q (known: %s)", k, strings.Join(fieldNames, ", "))
			}
		}
		return nil
	}},
	{"env", cty.Map(cty.String), "an object of strings", cliTypes, func(cfg *Config, v cty.Value) (err error) {
		cfg.Env, err = goAs[map[string]string](v)
		return err
	}},
	{"model", cty.String, "a string", types, func(cfg *Config, v cty.Value) error {
		cfg.Model = v.AsString()
		return nil
	}},
	{"base_url", cty.String, "a string", httpTypes, func(cfg *Config, v cty.Value) error {
		cfg.BaseURL = v.AsString()
		return nil
	}},
	{"api_key_env", cty.String, "a string", httpTypes, func(cfg *Config, v cty.Value) error {
		cfg.APIKeyEnv = v.AsString()
		return nil
	}},
	{"max_tokens", cty.Number, "a whole number", httpTypes, func(cfg *Config, v cty.Value) (err error) {
		cfg.MaxTokens, err = count(v)
		return err
	}},
	{"options", cty.DynamicPseudoType, "an object", presets, func(cfg *Config, v cty.Value) (err error) {
		if !v.Type().IsObjectType() && !v.Type().IsMapType() {
			return fmt.Errorf("want an object, got %s", v.Type().FriendlyName())
		}
		cfg.Options, err = goAs[map[string]any](v)
		return err
	}},
	{"timeout", cty.String, "a duration string", types, func(cfg *Config, v cty.Value) (err error) {
		if cfg.Timeout, err = time.ParseDuration(v.AsString()); err != nil {
			return fmt.Errorf("want a duration such as \"90s\" or \"2m\", got %q", v.AsString())
		}
		if cfg.Timeout < 0 {
			return errors.New("must not be negative")
		}
		return nil
	}},
	{"retries", cty.Number, "a whole number", httpTypes, func(cfg *Config, v cty.Value) (err error) {
		cfg.Retry.Max, err = count(v)
		return err
	}},
	{"prices", cty.DynamicPseudoType, "an object of models", types, func(cfg *Config, v cty.Value) (err error) {
		cfg.Prices, err = prices(v)
		return err
	}},
}

// ConfigFrom reads the settings of a driver block of type driverType as
// a run uses them. Each value is converted to its setting's type first, so
// max_tokens = "1024" is 1024. A setting the type does not take is an
// error.
func ConfigFrom(driverType string, values map[string]cty.Value) (Config, error) {
	cfg := Config{Type: driverType}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		if err := set(&cfg, driverType, name, values[name]); err != nil {
			return cfg, fmt.Errorf("%s: %w", name, err)
		}
	}
	return cfg, nil
}

// set checks one setting and sets it in cfg.
func set(cfg *Config, driverType, name string, v cty.Value) error {
	i := slices.IndexFunc(settings, func(s setting) bool { return s.name == name })
	if i < 0 {
		return errors.New("unknown setting")
	}
	s := settings[i]
	if slices.Contains(types, driverType) && !slices.Contains(s.types, driverType) {
		return fmt.Errorf("driver %s does not take this setting", driverType)
	}
	if v.IsNull() || !v.IsWhollyKnown() {
		return errors.New("want a value, got null")
	}
	cv, err := convert.Convert(v, s.ty)
	if err != nil {
		return fmt.Errorf("want %s, got %s", s.what, v.Type().FriendlyName())
	}
	return s.set(cfg, cv)
}

// DriverSchema is the list of driver types and their settings, as the playbook
// loader asks for it (lang.DriverSchema).
type DriverSchema struct{}

// Types returns the driver types, in the order messages list them.
func (DriverSchema) Types() []string { return slices.Clone(types) }

// Settings returns the settings a driver type takes besides type, with the
// type each converts to; nil for an unknown type.
func (DriverSchema) Settings(driverType string) map[string]cty.Type {
	if !slices.Contains(types, driverType) {
		return nil
	}
	out := map[string]cty.Type{}
	for _, s := range settings {
		if slices.Contains(s.types, driverType) {
			out[s.name] = s.ty
		}
	}
	return out
}

// Check checks one setting's value as ConfigFrom reads it.
func (DriverSchema) Check(driverType, name string, v cty.Value) error {
	var cfg Config
	return set(&cfg, driverType, name, v)
}

// CheckDriver checks a driver block whose settings each pass Check as a
// whole, as New would: a command driver needs a command, fields need json
// output, options must be the preset's. The environment is left out: an
// unset base_url is not looked up.
func (DriverSchema) CheckDriver(driverType string, values map[string]cty.Value) error {
	cfg, err := ConfigFrom(driverType, values)
	if err != nil {
		return err
	}
	if cfg.BaseURL == "" && slices.Contains(httpTypes, driverType) {
		cfg.BaseURL = "http://localhost" // the run's environment decides
	}
	_, err = New(cfg)
	return err
}

// oneOf checks that s is one of the choices.
func oneOf(s string, choices []string) error {
	if !slices.Contains(choices, s) {
		return fmt.Errorf("%q is not one of %s", s, strings.Join(choices, ", "))
	}
	return nil
}

// count reads a whole number that is not negative.
func count(v cty.Value) (int, error) {
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		return 0, errors.New("want a whole number")
	}
	i, acc := bf.Int64()
	if acc != 0 || i < 0 || int64(int(i)) != i {
		return 0, errors.New("want a whole number, not negative")
	}
	return int(i), nil
}

// goAs converts a value to T through its JSON form: numbers become
// float64, lists []any and objects map[string]any, as Options holds them.
func goAs[T any](v cty.Value) (T, error) {
	var out T
	data, err := ctyjson.Marshal(v, v.Type())
	if err == nil {
		err = json.Unmarshal(data, &out)
	}
	if err != nil {
		return out, fmt.Errorf("cannot read %s: %w", v.Type().FriendlyName(), err)
	}
	return out, nil
}

// prices reads { "model" = { input = 3, output = 15 } } in USD per
// million tokens.
func prices(v cty.Value) (map[string]Price, error) {
	m, err := goAs[map[string]any](v)
	if err != nil || (!v.Type().IsObjectType() && !v.Type().IsMapType()) {
		return nil, fmt.Errorf("want an object of models")
	}
	out := map[string]Price{}
	for _, model := range slices.Sorted(maps.Keys(m)) {
		pm, ok := m[model].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: want { input = N, output = N }", model)
		}
		var p Price
		for _, k := range slices.Sorted(maps.Keys(pm)) {
			f, ok := pm[k].(float64)
			if !ok {
				return nil, fmt.Errorf("%s.%s: want a number", model, k)
			}
			if f < 0 {
				return nil, fmt.Errorf("%s.%s: must not be negative", model, k)
			}
			switch k {
			case "input":
				p.InputPerMTok = f
			case "output":
				p.OutputPerMTok = f
			case "cache_read":
				p.CacheReadPerMTok = f
			case "cache_write":
				p.CacheWritePerMTok = f
			default:
				return nil, fmt.Errorf("%s: unknown price %q (input, output, cache_read, cache_write)", model, k)
			}
		}
		out[model] = p
	}
	return out, nil
}

// SendsSchema reports whether a driver of this type, with these settings,
// hands the model a step's returns as a JSON Schema besides the prompt
// (lang.SchemaSender): the presets but gemini and the HTTP drivers do, and
// a command driver whose command passes {schema_file}.
func (DriverSchema) SendsSchema(driverType string, values map[string]cty.Value) bool {
	switch driverType {
	case TypeClaudeCode, TypeCodex, TypeOpenAI, TypeAnthropic:
		return true
	case TypeCommand:
		cmd, ok := values["command"]
		if !ok || cmd.IsNull() || !cmd.IsKnown() || !cmd.CanIterateElements() {
			return false
		}
		for it := cmd.ElementIterator(); it.Next(); {
			_, tok := it.Element()
			if tok.Type() == cty.String && tok.IsKnown() && !tok.IsNull() && strings.Contains(tok.AsString(), "{schema_file}") {
				return true
			}
		}
	}
	return false
}
