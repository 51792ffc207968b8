package lang

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

var playbookSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "version"},
		{Name: "label"},
		{Name: "exit_codes"},
	},
}

// Playbook is a loaded, checked playbook: the immutable program an
// interpreter runs. Nothing in it changes after Load returns, so one
// Playbook may back many runs at once.
type Playbook struct {
	Name        string
	Description string
	Version     string
	// Label is the progress label template, e.g. "Phase ${inputs.phase}";
	// nil when the playbook declares none.
	Label hcl.Expression
	// ExitCodes maps a run's final status to the process exit code.
	ExitCodes map[string]int

	Inputs []*Input
	// Types are the named types, by name.
	Types   map[string]*TypeDef
	Modes   map[string]*Mode
	Budgets map[string]*Budget
	Prompts map[string]*Prompt
	Agents  map[string]*Agent
	Drivers map[string]*Driver
	// Steps are the main steps in declared order; OnFailure the steps run
	// when the run fails; Finally the steps run after every ending, after
	// OnFailure.
	Steps     []*Step
	OnFailure []*Step
	Finally   []*Step
	// Locals are the playbook's local values, each after those it reads.
	Locals []*Local
	// Vars are the declared run vars, in declared order.
	Vars   []*Var
	Output *Output

	Limits *Limits // nil: no run caps
	// Settings are the caps, concurrencies, limits and time limits written
	// over inputs, which a run fixes when it starts (Playbook.Fix).
	Settings       []*Setting
	CircuitBreaker *CircuitBreaker // nil: none
	// StatePath, when set, is where the run's state file lives (relative
	// to the working directory), instead of the run directory.
	StatePath string
	// Documents are the JSON files the protocol keeps, projected from
	// the run at every checkpoint, in declared order.
	Documents []*Document
	// Trace adds the playbook's attributes to every span; nil: none.
	Trace *Trace
	// Templates are the step templates, in declared order.
	Templates []*Template

	// ProgressTotal is how many main steps have a progress label (the M of
	// "Step: PLAN (N/M)").
	ProgressTotal int

	// Sources holds every file's bytes by filename, for diagnostics.
	Sources map[string][]byte
	// Hash identifies the playbook's source text; resume refuses a run
	// whose playbook changed.
	Hash string
	// Dir is the directory file() paths resolve against.
	Dir string
	// Extends lists the upstream playbooks, nearest first; Removed the
	// blocks the playbook removed from them.
	Extends []string
	Removed []Removal

	// body is the effective playbook's body, upstreams merged in;
	// overrides maps each winning attribute's range to those of the
	// definitions it overrode, nearest first.
	body      *hclsyntax.Body
	overrides map[hcl.Range][]hcl.Range
	// templateAttrs names the template each attribute of a template's
	// body belongs to, by its range.
	templateAttrs map[hcl.Range]string

	DeclRange hcl.Range

	steps  map[string]*Step
	inputs map[string]*Input
	locals map[string]*Local
	vars   map[string]*Var
	// decodeAnswer is the Loader's DecodeAnswer, for test files.
	decodeAnswer func([]byte, cty.Type) error
}

// Step returns the step with the given name, or nil.
func (p *Playbook) Step(name string) *Step { return p.steps[name] }

// Input returns the input with the given name, or nil.
func (p *Playbook) Input(name string) *Input { return p.inputs[name] }

// AllSteps returns every step: main, on_failure, finally and for_each
// bodies.
func (p *Playbook) AllSteps() []*Step {
	var out []*Step
	var walk func([]*Step)
	walk = func(steps []*Step) {
		for _, s := range steps {
			out = append(out, s)
			if s.ForEach != nil {
				walk(s.ForEach.Steps)
			}
		}
	}
	walk(p.Steps)
	walk(p.OnFailure)
	walk(p.Finally)
	return out
}

// ProgressSteps returns the steps that declare a progress label, in order;
// their position is the N of "Step: PLAN (N/M)".
func (p *Playbook) ProgressSteps() []*Step {
	var out []*Step
	for _, s := range p.Steps {
		if s.Progress != "" {
			out = append(out, s)
		}
	}
	return out
}

// ExitCodeOf returns the exit code of a run that ended with status and,
// for a failed run, the fail value (recommendation) it failed with: the
// exit_codes entry of the fail value, else ExitCode(status).
func (p *Playbook) ExitCodeOf(status, failValue string) int {
	if status == "failed" && failValue != "" {
		if c, ok := p.ExitCodes[failValue]; ok {
			return c
		}
	}
	return p.ExitCode(status)
}

// ExitCode returns the exit code for a final run status: the playbook's
// exit_codes entry, else 0 for "completed" and 1 for anything else.
func (p *Playbook) ExitCode(status string) int {
	if c, ok := p.ExitCodes[status]; ok {
		return c
	}
	if status == "completed" {
		return 0
	}
	return 1
}

// NamedExpr is an attribute kept unevaluated, in source order.
type NamedExpr struct {
	Name  string
	Expr  hcl.Expression
	Range hcl.Range
}

// String renders the compiled graph, one step per line with its edges: the
// form golden tests compare.
func (p *Playbook) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "playbook %q\n", p.Name)
	for _, in := range p.Inputs {
		def := "required"
		if !in.Required() {
			def = "default " + formatValue(in.Default)
		}
		fmt.Fprintf(&b, "input %s: %s (%s)\n", in.Name, typeString(in.Type), def)
	}
	modes := make([]string, 0, len(p.Modes))
	for n := range p.Modes {
		modes = append(modes, n)
	}
	sort.Strings(modes)
	for _, n := range modes {
		fmt.Fprintf(&b, "mode %s: %s\n", n, formatInputs(p.Modes[n].Inputs))
	}
	for _, s := range p.Steps {
		b.WriteString(s.String())
		b.WriteByte('\n')
		for _, e := range s.Edges {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	for _, s := range p.OnFailure {
		b.WriteString("on_failure ")
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	for _, s := range p.Finally {
		b.WriteString("finally ")
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	return b.String()
}

func formatInputs(m map[string]cty.Value) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + formatValue(m[n])
	}
	return strings.Join(parts, " ")
}

func (l *loader) decodePlaybookBlocks(blocks []*hcl.Block) hcl.Diagnostics {
	if len(blocks) == 0 {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Missing playbook block",
			Detail:   `Every playbook declares itself once: playbook "name" { description = "..." }.`,
		}}
	}
	b, diags := singleBlock("playbook", blocks, "")
	p := l.pb
	p.Name = b.Labels[0]
	p.DeclRange = b.DefRange
	content, d := b.Body.Content(playbookSchema)
	diags = append(diags, d...)
	if a := content.Attributes["description"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		p.Description = v
	}
	if a := content.Attributes["version"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		p.Version = v
	}
	if a := content.Attributes["label"]; a != nil {
		p.Label = a.Expr
		l.deferRefs(a.Expr, refScope{what: "the playbook label"})
	}
	if a := content.Attributes["exit_codes"]; a != nil {
		v, d := constValue(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			codes, d := decodeExitCodes(v, a)
			diags = append(diags, d...)
			p.ExitCodes = codes
		}
	}
	return diags
}

func decodeExitCodes(v cty.Value, a *hcl.Attribute) (map[string]int, hcl.Diagnostics) {
	if v.IsNull() || !(v.Type().IsObjectType() || v.Type().IsMapType()) {
		return nil, hcl.Diagnostics{errDiag("Invalid exit_codes",
			`exit_codes maps run statuses to exit codes, e.g. { completed = 0, blocked = 2 }.`, a.Expr.Range())}
	}
	codes := map[string]int{}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		if ev.Type() != cty.Number || ev.IsNull() || !ev.AsBigFloat().IsInt() {
			return nil, hcl.Diagnostics{errDiag("Invalid exit_codes",
				fmt.Sprintf("The exit code for status %q must be a whole number.", k.AsString()), a.Expr.Range())}
		}
		n, _ := ev.AsBigFloat().Int64()
		if n < 0 || n > 125 {
			return nil, hcl.Diagnostics{errDiag("Invalid exit_codes",
				fmt.Sprintf("The exit code for status %q is %d; use 0 to 125 (126 and above mean other things to shells, and 130 is an interrupted run).", k.AsString(), n), a.Expr.Range())}
		}
		codes[k.AsString()] = int(n)
	}
	return codes, nil
}
