package lang

import (
	"fmt"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

var stepSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "progress"},
		{Name: "when"},
		{Name: "skip_reason"},
		{Name: "returns"},
		{Name: "example"},
		{Name: "timeout"},
		{Name: "next"},
		{Name: "continue_on_error"},
		{Name: "serial"},
		{Name: "release_slot"},
		{Name: "max_tokens"},
		{Name: "max_cost_usd"},
		{Name: "progress_when"},
		{Name: "progress_start"},
		{Name: "progress_done"},
		// for_each steps
		{Name: "for_each"},
		{Name: "key"},
		{Name: "depends_on"},
		{Name: "priority"},
		{Name: "concurrency"},
		{Name: "on_item_failure"},
		// A step's own gate actions, without a gate (stepActions).
		{Name: "set"},
		{Name: "append"},
		{Name: "log"},
		{Name: "event"},
		{Name: "details"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "shell"},
		{Type: "agent", LabelNames: []string{"name"}},
		{Type: "call", LabelNames: []string{"builtin"}},
		{Type: "ask"},
		{Type: "playbook"},
		{Type: "gate"},
		{Type: "retry"},
		{Type: "check", LabelNames: []string{"name"}},
		{Type: "limit", LabelNames: []string{"name"}},
		{Type: "step", LabelNames: []string{"name"}},
		{Type: "locals"},
		// A template instance's arguments: made by expandTemplates from
		// its with, never written (a written one is refused there).
		{Type: argsBlock},
	},
}

// Step is a node of the step graph.
type Step struct {
	Name        string
	Index       int // position in declared order
	Description string
	// Progress is the step's progress label ("PLAN"); steps with one are
	// announced as "Step: PLAN (N/M)".
	Progress string
	// ProgressIndex is the step's place among the main steps with a
	// progress label (the N of N/M), 0 for others.
	ProgressIndex int
	// ProgressStart and ProgressDone are string templates whose text
	// follows the step's start and completion lines ("Step: TRIAGE
	// complete. Routing: verify_only"); nil when the step has none.
	ProgressStart, ProgressDone hcl.Expression
	// progressTemplate is where the first of them is declared, for the
	// warning when the step is never announced.
	progressTemplate *hcl.Attribute
	When             *Condition // nil: always runs
	SkipReason       hcl.Expression
	// Returns is the declared type of the step's output; cty.NilType when
	// the step declares none.
	Returns cty.Type
	// Example is the output a dry run (apl run --dry-run) gives the step
	// instead of running its action; cty.NilVal when the step declares
	// none. It fits Returns, checked at load.
	Example cty.Value
	Timeout time.Duration
	// TimeoutFrom, when timeout reads inputs, is the setting a run fixes
	// it from; Timeout is then its value under the inputs' defaults.
	TimeoutFrom     *Setting
	ContinueOnError bool
	Action          Action // nil for a step that only routes
	Gate            *Gate
	// Template is the template the step uses (use = template.NAME); ""
	// for a step written out. Its arguments are among its Locals.
	Template string
	// Locals are the step's own named values (locals { NAME = EXPR }),
	// evaluated when the step starts, after its when, each after those it
	// reads; only the step's own expressions read them, as local.NAME.
	Locals []*Local
	locals map[string]*Local
	// Retry re-runs the action when it fails; Checks reject an output and
	// may re-run the step.
	Retry  *Retry
	Checks []*Check
	// MaxTokens and MaxCostUSD cap what the step's agent calls may spend
	// (zero: no cap).
	MaxTokens  int
	MaxCostUSD float64
	// ProgressWhen tells whether the step made progress, for the circuit
	// breaker's no-progress count; nil means a completed step did.
	ProgressWhen *Condition
	// ForEach makes the step run its nested steps once per item.
	ForEach *ForEach
	// Parent is the for_each step whose body holds this step.
	Parent *Step
	// Serial lets one item at a time run this step (a review queue).
	Serial bool
	// ReleaseSlot, on a step of a for_each body, gives back the item's
	// concurrency slot and its places in the limits when the item reaches
	// this step or any step after it (ForEach.ReleaseFrom).
	ReleaseSlot bool
	// Next is where control goes after the step when no gate rule routes
	// elsewhere; nil means the run ends after this step.
	Next *Step
	// Edges are the step-to-step edges of its successors (Successors), for
	// the cycle, reachability and slot-release checks and the planner.
	Edges     []*Edge
	OnFailure bool // the step belongs to the on_failure section
	Finally   bool // the step belongs to the finally section
	DeclRange hcl.Range
}

// Range returns where the step is declared.
func (s *Step) Range() hcl.Range { return s.DeclRange }

// String renders the step as golden tests see it.
func (s *Step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %s", s.Name)
	if s.Template != "" {
		fmt.Fprintf(&b, " (template.%s)", s.Template)
	}
	if s.Action != nil {
		fmt.Fprintf(&b, " [%s]", s.Action)
	}
	if s.Progress != "" {
		fmt.Fprintf(&b, " progress=%s", s.Progress)
	}
	if s.When != nil {
		fmt.Fprintf(&b, " when=%q", s.When.Source)
	}
	if s.Returns != cty.NilType {
		fmt.Fprintf(&b, " returns=%s", typeString(s.Returns))
	}
	if s.Timeout > 0 {
		fmt.Fprintf(&b, " timeout=%s", s.Timeout)
	}
	return b.String()
}

// Action is what a step does. The set of actions is closed: *Shell,
// *AgentCall, *Call, *Ask and *SubPlaybook. The interpreter dispatches on it with one type
// switch.
type Action interface {
	Range() hcl.Range
	String() string
	action()
}

var stepHeaderSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{{Name: "returns"}, {Name: "for_each"}},
	Blocks:     []hcl.BlockHeaderSchema{{Type: "step", LabelNames: []string{"name"}}},
}

// section is where a top-level step is declared: among the main steps, in
// on_failure or in finally.
type section uint8

const (
	secMain section = iota
	secOnFailure
	secFinally
)

// sectionSchema is the body of an on_failure or a finally block.
var sectionSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{{Type: "step", LabelNames: []string{"name"}}},
}

// declareStep registers a step's name and returns type, and those of the
// steps nested in it; bodies are decoded once every step is known
// (decodeStepBody).
func (l *loader) declareStep(b *hcl.Block, parent *Step, sec section) hcl.Diagnostics {
	diags := validName("step", b)
	name := b.Labels[0]
	if prev := l.pb.steps[name]; prev != nil {
		return append(diags, duplicate("step", name, prev.DeclRange, b))
	}
	s := &Step{Name: name, Returns: cty.NilType, OnFailure: sec == secOnFailure, Finally: sec == secFinally, Parent: parent, DeclRange: b.DefRange}
	if inst := l.instances[name]; inst != nil {
		s.Template = inst.tmpl.Name
	}
	content, _, d := b.Body.PartialContent(stepHeaderSchema)
	diags = append(diags, d...)
	if a := content.Attributes["returns"]; a != nil {
		t, d := l.decodeType(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			s.Returns = t
		}
		if td := l.namedType(a); td != nil {
			l.returnsDefs[s] = td
		}
	}
	switch {
	case parent != nil:
		s.Index = len(parent.ForEach.Steps)
		parent.ForEach.Steps = append(parent.ForEach.Steps, s)
	case sec == secOnFailure:
		s.Index = len(l.pb.OnFailure)
		l.pb.OnFailure = append(l.pb.OnFailure, s)
	case sec == secFinally:
		s.Index = len(l.pb.Finally)
		l.pb.Finally = append(l.pb.Finally, s)
	default:
		s.Index = len(l.pb.Steps)
		l.pb.Steps = append(l.pb.Steps, s)
	}
	l.pb.steps[name] = s
	l.stepBlocks[s] = b
	if content.Attributes["for_each"] != nil {
		if parent != nil {
			diags = append(diags, errDiag("Nested for_each",
				fmt.Sprintf("Step %q is inside for_each step %q; a for_each body cannot hold another for_each.", name, parent.Name), content.Attributes["for_each"].NameRange))
		}
		s.ForEach = &ForEach{Concurrency: 1, ItemType: cty.DynamicPseudoType}
		if s.Returns != cty.NilType {
			diags = append(diags, errDiag("returns on a for_each step",
				"A for_each step's output is fixed (items, completed, failed, blocked); declare returns on its nested steps.", content.Attributes["returns"].NameRange))
			s.Returns = cty.NilType
		}
	}
	for _, nb := range content.Blocks {
		if s.ForEach == nil {
			diags = append(diags, errDiag("Nested step without for_each",
				fmt.Sprintf("Step %q holds step %q, but only a for_each step has nested steps (run once per item).", name, nb.Labels[0]), nb.DefRange))
			continue
		}
		if s.ForEach != nil && parent == nil {
			diags = append(diags, l.declareStep(nb, s, sec)...)
		}
	}
	if s.ForEach != nil {
		s.Returns = forEachOutputType
		if len(s.ForEach.Steps) == 0 && parent == nil {
			diags = append(diags, errDiag("Empty for_each",
				fmt.Sprintf("for_each step %q has no nested steps to run per item.", name), b.DefRange))
		}
	}
	return diags
}

// forEachOutputType is the output of every for_each step.
var forEachOutputType = cty.Object(map[string]cty.Type{
	"items": cty.Map(cty.Object(map[string]cty.Type{"key": cty.String, "status": cty.String, "recommendation": cty.String,
		"error": cty.String, "outputs": cty.DynamicPseudoType})),
	"completed":  cty.Number,
	"failed":     cty.Number,
	"blocked":    cty.Number,
	"deadlocked": cty.List(cty.String),
})

// declareSection declares the steps of an on_failure or a finally block.
func (l *loader) declareSection(b *hcl.Block, sec section) hcl.Diagnostics {
	content, diags := b.Body.Content(sectionSchema)
	for _, sb := range content.Blocks {
		diags = append(diags, l.declareStep(sb, nil, sec)...)
	}
	return diags
}

// decodeStepAction decodes a declared step's action. Every step's action
// is decoded before any locals or condition, which are typed against
// what each step's action makes its output (outputType).
func (l *loader) decodeStepAction(s *Step) hcl.Diagnostics {
	content, diags := l.stepBlocks[s].Body.Content(stepSchema)
	l.stepContents[s] = content
	var action *hcl.Block
	for _, ab := range content.Blocks {
		if !actionBlocks[ab.Type] {
			continue
		}
		if action != nil {
			diags = append(diags, errDiag("More than one action",
				fmt.Sprintf("Step %q already has a %s action at %s; a step has at most one action. Split it into two steps.", s.Name, action.Type, action.DefRange), ab.DefRange))
			continue
		}
		if s.ForEach != nil {
			diags = append(diags, errDiag("Action on a for_each step",
				fmt.Sprintf("for_each step %q runs its nested steps per item; put the %s action in a nested step.", s.Name, ab.Type), ab.DefRange))
			continue
		}
		action = ab
		a, d := l.decodeAction(s, ab)
		diags = append(diags, d...)
		s.Action = a
	}
	return diags
}

// decodeStepBody decodes a declared step's attributes and blocks besides
// its action (decodeStepAction), in the section env of its conditions.
func (l *loader) decodeStepBody(s *Step, env *condEnv) hcl.Diagnostics {
	content := l.stepContents[s]
	var diags hcl.Diagnostics
	var localBlocks []*hcl.Block
	for _, lb := range content.Blocks {
		if lb.Type == "locals" || lb.Type == argsBlock {
			localBlocks = append(localBlocks, lb)
		}
	}
	diags = append(diags, l.declareStepLocals(s, localBlocks)...)
	diags = append(diags, l.checkArgs(s)...)
	// when is evaluated before the step's locals; everything after it
	// sees them.
	whenEnv, env := env, l.condEnv(Scope{Body: s.Parent, Step: s})
	if a := content.Attributes["description"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		s.Description = v
	}
	if a := content.Attributes["progress"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		s.Progress = v
	}
	for _, name := range []string{"progress_start", "progress_done"} {
		a := content.Attributes[name]
		if a == nil {
			continue
		}
		l.deferRefs(a.Expr, refScope{body: s.Parent, step: s, what: "a progress template"})
		if name == "progress_start" {
			s.ProgressStart = a.Expr
		} else {
			s.ProgressDone = a.Expr
		}
		if s.progressTemplate == nil {
			s.progressTemplate = a
		}
	}
	if a := content.Attributes["when"]; a != nil {
		c, d := l.decodeCondition(a, whenEnv)
		diags = append(diags, d...)
		s.When = c
		l.noteConditionRefs(c)
	}
	if a := content.Attributes["skip_reason"]; a != nil {
		s.SkipReason = a.Expr
		l.deferRefs(a.Expr, refScope{body: s.Parent, what: "a skip reason"})
	}
	if a := content.Attributes["timeout"]; a != nil && len(a.Expr.Variables()) > 0 {
		set, f, d := l.decodeSetting(a, s.Name+".timeout", SettingDuration)
		diags = append(diags, d...)
		s.TimeoutFrom, s.Timeout = set, f.D
	} else if a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			dur, err := time.ParseDuration(v)
			if err != nil || dur <= 0 {
				diags = append(diags, errDiag("Invalid timeout",
					fmt.Sprintf("timeout must be a positive duration such as \"90s\" or \"10m\", not %q.", v), a.Expr.Range()))
			}
			s.Timeout = dur
		}
	}
	if a := content.Attributes["continue_on_error"]; a != nil {
		v, d := constBool(a)
		diags = append(diags, d...)
		s.ContinueOnError = v
	}
	for _, f := range []struct {
		name, why string
		dst       *bool
	}{
		{"serial", "serial makes items of a for_each take turns at this step; outside a for_each body steps run one at a time anyway.", &s.Serial},
		{"release_slot", "release_slot gives back a for_each item's concurrency slot; outside a for_each body there is no slot to give back.", &s.ReleaseSlot},
	} {
		a := content.Attributes[f.name]
		if a == nil {
			continue
		}
		v, d := constBool(a)
		diags = append(diags, d...)
		*f.dst = v
		if s.Parent == nil && v {
			diags = append(diags, warnDiag(f.name+" outside for_each", f.why, a.NameRange))
		}
	}
	if a := content.Attributes["max_tokens"]; a != nil {
		v, d := constPositiveInt(a)
		diags = append(diags, d...)
		s.MaxTokens = v
	}
	if a := content.Attributes["max_cost_usd"]; a != nil {
		v, d := constPositiveFloat(a)
		diags = append(diags, d...)
		s.MaxCostUSD = v
	}
	if a := content.Attributes["progress_when"]; a != nil {
		c, d := l.decodeCondition(a, env)
		diags = append(diags, d...)
		s.ProgressWhen = c
		l.noteConditionRefs(c)
	}
	forEachAttrs := []string{"for_each", "key", "depends_on", "priority", "concurrency", "on_item_failure"}
	if s.ForEach != nil {
		diags = append(diags, l.decodeForEach(s, content, env)...)
	} else {
		for _, name := range forEachAttrs[1:] {
			if a := content.Attributes[name]; a != nil {
				diags = append(diags, errDiag("for_each attribute without for_each",
					fmt.Sprintf("%s only applies to a for_each step.", name), a.NameRange))
			}
		}
	}
	if a := content.Attributes["next"]; a != nil {
		v, d := constString(a)
		diags = append(diags, d...)
		if !d.HasErrors() {
			t, d := l.target(s, v, a.Expr.Range())
			diags = append(diags, d...)
			s.Next = t
			l.explicitNext[s] = a.Expr.Range()
		}
	}

	checks := map[string]bool{}
	for _, ab := range content.Blocks {
		switch ab.Type {
		case "step":
			// Declared with the step; decoded on its own.
		case "locals", argsBlock:
			// Declared first (declareStepLocals).
		case "limit":
			if s.ForEach == nil {
				diags = append(diags, errDiag("limit without for_each", "A limit caps items of a for_each step running at once.", ab.DefRange))
			}
		case "retry":
			if s.Retry != nil {
				diags = append(diags, errDiag("Duplicate retry", fmt.Sprintf("Step %q already has a retry block.", s.Name), ab.DefRange))
				continue
			}
			r, d := decodeRetryBlock(ab)
			diags = append(diags, d...)
			s.Retry = r
		case "check":
			if checks[ab.Labels[0]] {
				diags = append(diags, errDiag("Duplicate check", fmt.Sprintf("Step %q already has a check named %q.", s.Name, ab.Labels[0]), ab.LabelRanges[0]))
			}
			checks[ab.Labels[0]] = true
			c, d := l.decodeCheckBlock(s, ab, env)
			diags = append(diags, d...)
			s.Checks = append(s.Checks, c)
		case "gate":
			if s.Gate != nil {
				diags = append(diags, errDiag("Duplicate gate", fmt.Sprintf("Step %q already has a gate; a step has at most one.", s.Name), ab.DefRange))
				continue
			}
			g, d := l.decodeGateBlock(s, ab, env)
			diags = append(diags, d...)
			s.Gate = g
		default:
			// The action, decoded first (decodeStepAction).
		}
	}
	diags = append(diags, l.decodeStepActions(s, content)...)
	if a := content.Attributes["example"]; a != nil {
		diags = append(diags, l.decodeExample(s, a)...)
	} else if td := l.returnsDefs[s]; td != nil && td.Example != cty.NilVal && takesExample(s.Action) {
		// A step that returns exactly a named type takes its example.
		diags = append(diags, l.decodeExample(s, td.example)...)
	}
	return diags
}

// target resolves a step name used by `next` or `goto`; targets stay in
// their section (main steps, on_failure or finally).
func (l *loader) target(from *Step, name string, rng hcl.Range) (*Step, hcl.Diagnostics) {
	t := l.pb.steps[name]
	if t == nil {
		return nil, hcl.Diagnostics{errDiag("Reference to undeclared step",
			fmt.Sprintf("There is no step named %q.%s", name, didYouMean(name, l.stepNames())), rng)}
	}
	if t.OnFailure != from.OnFailure || t.Finally != from.Finally || t.Parent != from.Parent {
		return nil, hcl.Diagnostics{errDiag("Jump across sections",
			fmt.Sprintf("Step %q cannot go to %q: a step only goes to steps of its own section (the main steps, on_failure, finally, or the same for_each body).", from.Name, name), rng)}
	}
	return t, nil
}

func (l *loader) decodeAction(s *Step, b *hcl.Block) (Action, hcl.Diagnostics) {
	switch b.Type {
	case "shell":
		return l.decodeShellBlock(s, b)
	case "agent":
		return l.decodeAgentActionBlock(s, b)
	case "call":
		return l.decodeCallBlock(s, b)
	case "ask":
		return l.decodeAskBlock(s, b)
	case "playbook":
		return l.decodeSubPlaybookBlock(s, b)
	}
	return nil, hcl.Diagnostics{errDiag("Unknown action", fmt.Sprintf("%q is not an action.", b.Type), b.DefRange)}
}

// sortedAttrs returns attributes in source order.
func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Range.Start.Byte < out[j-1].Range.Start.Byte; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// stepActionNames are the gate actions a step may carry itself.
var stepActionNames = []string{"set", "append", "log", "event", "details"}

// decodeStepActions reads a step's own set, append, log, event and details: the
// actions of a gate that only records, without writing the gate. They
// are the gate's otherwise (Gate.Implicit), carried out when the step
// succeeds, before control goes on; a step with a gate writes them in it.
func (l *loader) decodeStepActions(s *Step, content *hcl.BodyContent) hcl.Diagnostics {
	attrs := hcl.Attributes{}
	var first *hcl.Attribute
	for _, name := range stepActionNames {
		if a := content.Attributes[name]; a != nil {
			attrs[name] = a
			if first == nil || a.Range.Start.Byte < first.Range.Start.Byte {
				first = a
			}
		}
	}
	if first == nil {
		return nil
	}
	if s.Gate != nil {
		return hcl.Diagnostics{errDiag("Step actions beside a gate",
			fmt.Sprintf("Step %q has a gate; write %s in the gate's otherwise block (or a rule), where it is carried out, not beside the gate.", s.Name, first.Name), first.NameRange)}
	}
	o, diags := l.decodeOutcome(s, "otherwise", &hcl.BodyContent{Attributes: attrs}, first.Range, false)
	s.Gate = &Gate{Otherwise: &Rule{Name: "otherwise", Outcome: o, DeclRange: first.Range}, DeclRange: first.Range, Implicit: true}
	return diags
}
