package lang

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// SettingKind says what a Setting holds.
type SettingKind uint8

// The kinds of settings.
const (
	// SettingCount is a whole number of at least 1: a gate outcome's max,
	// a for_each step's concurrency, a limit's default.
	SettingCount SettingKind = iota
	// SettingDuration is a positive duration such as "30m": a step's
	// timeout.
	SettingDuration
	// SettingCaps maps key values to whole numbers of at least 1: a
	// limit's max.
	SettingCaps
)

// A Setting is an attribute that bounds a run — a gate outcome's max, a
// for_each step's concurrency, a limit block's max and default, a step's
// timeout — written as an expression over inputs rather than a constant.
// It is evaluated once, when the run starts, from the run's inputs (after
// the mode and --input): it is fixed for the run, so the graph stays
// bounded, while modes and callers can change it.
//
// The attribute's own field (Outcome.Max, ForEach.Concurrency, Limit.Max,
// Limit.Default, Step.Timeout) holds the setting's value under the inputs'
// defaults, which apl graph and the checks show; a run reads the value it
// fixed (Fixed) through Outcome.MaxIn and its siblings.
type Setting struct {
	// Name says which attribute this is, as STEP.RULE.max,
	// STEP.concurrency, STEP.limit.NAME.max, STEP.limit.NAME.default or
	// STEP.timeout. A run records its value under this name, so that a
	// resumed run keeps it.
	Name string
	Kind SettingKind
	Expr hcl.Expression
	// Inputs are the names of the inputs Expr reads, sorted.
	Inputs []string
}

// Fixed is a setting's value for one run: N for a count, D for a
// duration, Caps for caps.
type Fixed struct {
	N    int            `json:"n,omitempty"`
	D    time.Duration  `json:"d,omitempty"`
	Caps map[string]int `json:"caps,omitempty"`
}

// FixedSettings are the values of a playbook's settings for one run.
type FixedSettings map[*Setting]Fixed

// Eval works out the setting's value from a run's inputs (an object of
// every input's value).
func (s *Setting) Eval(inputs cty.Value) (Fixed, error) {
	f, msg := s.eval(inputs)
	if msg != "" {
		return Fixed{}, fmt.Errorf("%s: setting %s %s", s.Expr.Range(), s.Name, msg)
	}
	return f, nil
}

// eval is Eval with what is wrong as the end of a sentence whose subject
// is the setting; "" when nothing is.
func (s *Setting) eval(inputs cty.Value) (Fixed, string) {
	v, diags := s.Expr.Value(&hcl.EvalContext{
		Variables: map[string]cty.Value{RootInputs: inputs},
		Functions: Functions(),
	})
	if diags.HasErrors() {
		var msgs []string
		for _, d := range diags {
			msgs = append(msgs, strings.TrimSuffix(d.Detail, "."))
		}
		return Fixed{}, "cannot be worked out: " + strings.Join(msgs, "; ")
	}
	return s.Kind.fix(v)
}

// Fix evaluates every setting of the playbook from a run's inputs.
func (p *Playbook) Fix(inputs cty.Value) (FixedSettings, error) {
	fs := make(FixedSettings, len(p.Settings))
	for _, s := range p.Settings {
		f, err := s.Eval(inputs)
		if err != nil {
			return nil, err
		}
		fs[s] = f
	}
	return fs, nil
}

// MaxIn is how many times the outcome's goto or requeue may be taken in a
// run with settings fs; 0: no cap.
func (o *Outcome) MaxIn(fs FixedSettings) int {
	if f, ok := fs[o.MaxFrom]; ok && o.MaxFrom != nil {
		return f.N
	}
	return o.Max
}

// ConcurrencyIn is how many items run at once in a run with settings fs.
func (fe *ForEach) ConcurrencyIn(fs FixedSettings) int {
	if f, ok := fs[fe.ConcurrencyFrom]; ok && fe.ConcurrencyFrom != nil {
		return f.N
	}
	return fe.Concurrency
}

// CapIn is the cap of items whose key is key in a run with settings fs;
// 0: no cap.
func (lim *Limit) CapIn(fs FixedSettings, key string) int {
	caps, def := lim.CapsIn(fs)
	if n, ok := caps[key]; ok {
		return n
	}
	return def
}

// CapsIn is the limit's caps by key and its default cap (0: none) in a
// run with settings fs.
func (lim *Limit) CapsIn(fs FixedSettings) (caps map[string]int, def int) {
	caps, def = lim.Max, lim.Default
	if f, ok := fs[lim.MaxFrom]; ok && lim.MaxFrom != nil {
		caps = f.Caps
	}
	if f, ok := fs[lim.DefaultFrom]; ok && lim.DefaultFrom != nil {
		def = f.N
	}
	return caps, def
}

// TimeoutIn is the step's time limit in a run with settings fs; 0: none.
func (s *Step) TimeoutIn(fs FixedSettings) time.Duration {
	if f, ok := fs[s.TimeoutFrom]; ok && s.TimeoutFrom != nil {
		return f.D
	}
	return s.Timeout
}

// fix checks a setting's value and converts it; the message says what is
// wrong with it, "" when nothing is.
func (k SettingKind) fix(v cty.Value) (Fixed, string) {
	if !v.IsWhollyKnown() || v.IsNull() {
		return Fixed{}, "is null; " + k.want()
	}
	switch k {
	case SettingCount:
		n, ok := wholeNumber(v)
		if !ok || n < 1 {
			return Fixed{}, fmt.Sprintf("is %s; %s", formatValue(v), k.want())
		}
		return Fixed{N: n}, ""
	case SettingDuration:
		if v.Type() == cty.String {
			if d, err := time.ParseDuration(v.AsString()); err == nil && d > 0 {
				return Fixed{D: d}, ""
			}
		}
		return Fixed{}, fmt.Sprintf("is %s; %s", formatValue(v), k.want())
	case SettingCaps:
		if !(v.Type().IsObjectType() || v.Type().IsMapType()) {
			return Fixed{}, fmt.Sprintf("is %s; %s", formatValue(v), k.want())
		}
		caps := map[string]int{}
		for it := v.ElementIterator(); it.Next(); {
			kv, ev := it.Element()
			n, ok := wholeNumber(ev)
			if !ok || n < 1 {
				return Fixed{}, fmt.Sprintf("gives %q the cap %s; each cap must be a whole number of at least 1", kv.AsString(), formatValue(ev))
			}
			caps[kv.AsString()] = n
		}
		return Fixed{Caps: caps}, ""
	}
	return Fixed{}, "has an unknown kind"
}

func (k SettingKind) want() string {
	switch k {
	case SettingDuration:
		return `it must be a positive duration such as "90s" or "30m"`
	case SettingCaps:
		return "it must map key values to whole numbers of at least 1, e.g. { haiku = 5, sonnet = 3, opus = 1 }"
	}
	return "it must be a whole number of at least 1"
}

// decodeSetting reads an attribute that refers to something, which only
// a setting may: it must read inputs only, inputs with defaults, and give
// a valid value under the defaults and under every mode. It returns the
// setting (nil when the attribute is in error) and its value under the
// inputs' defaults.
func (l *loader) decodeSetting(a *hcl.Attribute, name string, kind SettingKind) (*Setting, Fixed, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	seen := map[string]bool{}
	for _, t := range a.Expr.Variables() {
		in, d := l.settingInput(a, t)
		diags = append(diags, d...)
		if in != nil {
			seen[in.Name] = true
		}
	}
	if diags.HasErrors() {
		return nil, Fixed{}, diags
	}
	s := &Setting{Name: name, Kind: kind, Expr: a.Expr}
	for n := range seen {
		s.Inputs = append(s.Inputs, n)
	}
	sort.Strings(s.Inputs)
	defaults := l.inputDefaults(nil)
	nominal, msg := l.settingValue(s, defaults)
	if msg != "" {
		return nil, Fixed{}, hcl.Diagnostics{errDiag("Invalid "+a.Name,
			fmt.Sprintf("With the inputs' defaults, %s %s.", a.Name, msg), a.Expr.Range())}
	}
	modes := make([]string, 0, len(l.pb.Modes))
	for m := range l.pb.Modes {
		modes = append(modes, m)
	}
	sort.Strings(modes)
	for _, m := range modes {
		if _, msg := l.settingValue(s, l.inputDefaults(l.pb.Modes[m].Inputs)); msg != "" {
			diags = append(diags, errDiag("Invalid "+a.Name,
				fmt.Sprintf("With mode %q, %s %s.", m, a.Name, msg), a.Expr.Range()))
		}
	}
	if diags.HasErrors() {
		return nil, Fixed{}, diags
	}
	l.pb.Settings = append(l.pb.Settings, s)
	return s, nominal, diags
}

// settingInput checks one reference of a setting: it must name an input
// that has a default.
func (l *loader) settingInput(a *hcl.Attribute, t hcl.Traversal) (*Input, hcl.Diagnostics) {
	ref := traversalString(t)
	if t.RootName() != RootInputs {
		return nil, hcl.Diagnostics{errDiag("Cap must be known at run start",
			fmt.Sprintf("%s is fixed when the run starts, so it may read inputs (which modes and --input set) and constants, but not %q, which is known only later.", a.Name, ref),
			t.SourceRange())}
	}
	var attr hcl.TraverseAttr
	ok := len(t) >= 2
	if ok {
		attr, ok = t[1].(hcl.TraverseAttr)
	}
	if !ok {
		return nil, hcl.Diagnostics{errDiag("Cap must be known at run start",
			fmt.Sprintf("%s reads one input by name, e.g. inputs.max_parallel, not %q.", a.Name, ref), t.SourceRange())}
	}
	in := l.pb.inputs[attr.Name]
	if in != nil {
		l.used["input."+in.Name] = true
		l.usedInputs[in.Name] = true
	}
	switch {
	case in == nil:
		return nil, hcl.Diagnostics{errDiag("Reference to undeclared input",
			fmt.Sprintf("There is no input named %q.%s", attr.Name, didYouMean(attr.Name, l.inputNames())), t.SourceRange())}
	case in.Required():
		return nil, hcl.Diagnostics{errDiag("Cap input without default",
			fmt.Sprintf("%s reads input %q, which has no default; apl graph and apl plan bound the run with the inputs' defaults. Give %q a default: a mode or --input still changes it.", a.Name, in.Name, in.Name),
			t.SourceRange())}
	}
	return in, nil
}

// inputDefaults is an object of every input's default, with preset's
// values over them; an input without one is unknown.
func (l *loader) inputDefaults(preset map[string]cty.Value) cty.Value {
	vals := map[string]cty.Value{}
	for _, in := range l.pb.Inputs {
		v, ok := preset[in.Name]
		if !ok {
			v = in.Default
		}
		if v == cty.NilVal {
			v = cty.UnknownVal(in.Type)
		}
		vals[in.Name] = v
	}
	return cty.ObjectVal(vals)
}

func (l *loader) settingValue(s *Setting, inputs cty.Value) (Fixed, string) {
	if !inputs.IsWhollyKnown() {
		// An input without a default was reported; an unknown value would
		// only say so again.
		if v, _ := s.Expr.Value(&hcl.EvalContext{Variables: map[string]cty.Value{RootInputs: inputs}, Functions: Functions()}); !v.IsWhollyKnown() {
			return Fixed{}, ""
		}
	}
	return s.eval(inputs)
}

// Fits reports whether f holds a value of kind k, as a recorded value
// must to be taken for a setting of that kind.
func (f Fixed) Fits(k SettingKind) bool {
	switch k {
	case SettingCount:
		return f.N >= 1
	case SettingDuration:
		return f.D > 0
	case SettingCaps:
		return f.Caps != nil
	}
	return false
}

// PlanSetting is a setting's value as apl plan assumes it, and where the
// inputs it reads got their values.
type PlanSetting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// From says, by input, where its value came from: "default", "mode
	// NAME" or "input" (apl plan --input).
	From  map[string]string `json:"from"`
	Range hcl.Range         `json:"-"`
}

// PlanSettings works out the playbook's settings as a run given mode and
// the given input values would fix them, the inputs' defaults standing in
// for the rest, and says where each value came from.
func (p *Playbook) PlanSettings(mode string, given map[string]cty.Value) (FixedSettings, []PlanSetting, error) {
	var preset map[string]cty.Value
	if mode != "" {
		m := p.Modes[mode]
		if m == nil {
			names := make([]string, 0, len(p.Modes))
			for n := range p.Modes {
				names = append(names, n)
			}
			return nil, nil, fmt.Errorf("playbook %q has no mode %q.%s", p.Name, mode, didYouMean(mode, names))
		}
		preset = m.Inputs
	}
	vals := map[string]cty.Value{}
	from := map[string]string{}
	for name := range given {
		if p.Input(name) == nil {
			names := make([]string, len(p.Inputs))
			for i, in := range p.Inputs {
				names[i] = in.Name
			}
			return nil, nil, fmt.Errorf("playbook %q has no input %q.%s", p.Name, name, didYouMean(name, names))
		}
	}
	for _, in := range p.Inputs {
		v, ok := given[in.Name]
		from[in.Name] = "input"
		if !ok {
			v, ok = preset[in.Name]
			from[in.Name] = "mode " + mode
		}
		if !ok {
			v = in.Default
			from[in.Name] = "default"
		}
		if v == cty.NilVal {
			v = cty.UnknownVal(in.Type)
		} else if cv, err := in.Convert(v); err != nil {
			return nil, nil, err
		} else {
			v = cv
		}
		vals[in.Name] = v
	}
	fs, err := p.Fix(cty.ObjectVal(vals))
	if err != nil {
		return nil, nil, err
	}
	out := make([]PlanSetting, 0, len(p.Settings))
	for _, s := range p.Settings {
		ps := PlanSetting{Name: s.Name, Value: fs[s].format(s.Kind), From: map[string]string{}, Range: s.Expr.Range()}
		for _, in := range s.Inputs {
			ps.From[in] = from[in]
		}
		out = append(out, ps)
	}
	return fs, out, nil
}

func (f Fixed) format(k SettingKind) string {
	switch k {
	case SettingDuration:
		return f.D.String()
	case SettingCaps:
		keys := make([]string, 0, len(f.Caps))
		for k := range f.Caps {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s = %d", k, f.Caps[k])
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	return fmt.Sprint(f.N)
}
