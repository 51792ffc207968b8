package lang

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
)

var fileSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "playbook", LabelNames: []string{"name"}},
		{Type: "input", LabelNames: []string{"name"}},
		{Type: "mode", LabelNames: []string{"name"}},
		{Type: "budget", LabelNames: []string{"name"}},
		{Type: "prompt", LabelNames: []string{"name"}},
		{Type: "agent", LabelNames: []string{"name"}},
		{Type: "driver", LabelNames: []string{"name"}},
		{Type: "step", LabelNames: []string{"name"}},
		{Type: "output"},
		{Type: "on_failure"},
		{Type: "finally"},
		{Type: "locals"},
		{Type: "var", LabelNames: []string{"name"}},
		{Type: "type", LabelNames: []string{"name"}},
		{Type: "limits"},
		{Type: "circuit_breaker"},
		{Type: "state"},
		{Type: "document", LabelNames: []string{"name"}},
		{Type: "trace"},
		{Type: "template", LabelNames: []string{"name"}},
	},
}

// decode turns the top-level blocks of every file into the playbook. It
// runs in passes: declarations first, then steps (whose conditions need
// every step's returns type), then the graph, then cross-checks.
func (l *loader) decode(bodies []*hcl.BodyContent) hcl.Diagnostics {
	var diags hcl.Diagnostics
	l.used = map[string]bool{}
	l.stepBlocks = map[*Step]*hcl.Block{}
	l.returnsDefs = map[*Step]*TypeDef{}
	l.explicitNext = map[*Step]hcl.Range{}
	l.gotoRanges = map[*Outcome]hcl.Range{}
	l.badMax = map[*Outcome]bool{}
	l.usedInputs = map[string]bool{}
	l.stepContents = map[*Step]*hcl.BodyContent{}
	l.condEnvs = map[Scope]*condEnv{}
	l.sections = map[*Step]*sectionTypes{}
	byType := map[string][]*hcl.Block{}
	for _, c := range bodies {
		for _, b := range c.Blocks {
			byType[b.Type] = append(byType[b.Type], b)
		}
		for name, attr := range c.Attributes {
			diags = append(diags, errDiag("Unexpected attribute",
				fmt.Sprintf("Attributes are not allowed at the top level of a playbook; %q must be inside a block.", name), attr.NameRange))
		}
	}

	diags = append(diags, l.decodePlaybookBlocks(byType["playbook"])...)
	for _, b := range byType["type"] {
		diags = append(diags, l.declareTypeBlock(b)...)
	}
	diags = append(diags, l.resolveTypes()...)
	diags = append(diags, l.decodeTemplates()...)
	for _, b := range byType["input"] {
		diags = append(diags, l.decodeInputBlock(b)...)
	}
	for _, b := range byType["budget"] {
		diags = append(diags, l.decodeBudgetBlock(b)...)
	}
	for _, b := range byType["prompt"] {
		diags = append(diags, l.decodePromptBlock(b)...)
	}
	for _, b := range byType["driver"] {
		diags = append(diags, l.decodeDriverBlock(b)...)
	}
	for _, b := range byType["agent"] {
		diags = append(diags, l.decodeAgentBlock(b)...)
	}
	for _, b := range byType["mode"] {
		diags = append(diags, l.decodeModeBlock(b)...)
	}
	diags = append(diags, l.decodeLimitsBlocks(byType["limits"])...)
	diags = append(diags, l.decodeCircuitBreakerBlocks(byType["circuit_breaker"])...)
	diags = append(diags, l.decodeStateBlocks(byType["state"])...)
	diags = append(diags, l.decodeTraceBlocks(byType["trace"])...)
	for _, b := range byType["document"] {
		diags = append(diags, l.decodeDocumentBlock(b)...)
	}
	for _, b := range byType["var"] {
		diags = append(diags, l.decodeVarBlock(b)...)
	}

	// Steps: declare all (names, returns), then decode bodies.
	for _, b := range byType["step"] {
		diags = append(diags, l.declareStep(b, nil, secMain)...)
	}
	for _, sec := range []struct {
		block string
		sec   section
	}{{"on_failure", secOnFailure}, {"finally", secFinally}} {
		b, d := singleBlock(sec.block, byType[sec.block], "Put all its steps in the first.")
		diags = append(diags, d...)
		if b != nil {
			diags = append(diags, l.declareSection(b, sec.sec)...)
		}
	}
	for _, s := range l.pb.AllSteps() {
		diags = append(diags, l.decodeStepAction(s)...)
	}
	diags = append(diags, l.declareLocals(byType["locals"])...)
	// Bodies of for_each steps come after their for_each step in
	// AllSteps, whose list expression fixes the item type their
	// environment needs.
	for _, s := range l.pb.AllSteps() {
		diags = append(diags, l.decodeStepBody(s, l.condEnv(Scope{Body: s.Parent}))...)
	}
	for _, in := range l.pb.Inputs {
		diags = append(diags, l.compileValidations(in)...)
	}

	if b, d := singleBlock("output", byType["output"], ""); b != nil {
		diags = append(diags, d...)
		diags = append(diags, l.decodeOutputBlock(b)...)
	}

	diags = append(diags, l.runRefChecks()...)
	diags = append(diags, l.checkSessions()...)
	diags = append(diags, l.checkAfterDecode()...)
	diags = append(diags, l.buildGraph()...)
	if !diags.HasErrors() {
		diags = append(diags, l.checkUseBeforeRun()...)
	}
	diags = append(diags, l.checkUnused()...)
	diags = append(diags, l.checkContracts()...)
	return diags
}

func (l *loader) stepByName(name string) *Step { return l.pb.steps[name] }

func (l *loader) stepNames() []string { return slices.Sorted(maps.Keys(l.pb.steps)) }

func (l *loader) inputNames() []string { return slices.Sorted(maps.Keys(l.pb.inputs)) }

// duplicate reports a second declaration of kind "name".
func duplicate(kind, name string, first hcl.Range, b *hcl.Block) *hcl.Diagnostic {
	article := "A"
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		article = "An"
	}
	return errDiag(fmt.Sprintf("Duplicate %s", kind),
		fmt.Sprintf("%s %s named %q was already declared at %s. Names must be unique.", article, kind, name, first), b.LabelRanges[0])
}

// validName checks a block label is usable in references (steps.NAME).
func validName(kind string, b *hcl.Block) hcl.Diagnostics {
	name := b.Labels[0]
	if !hclIdent(name) {
		return hcl.Diagnostics{errDiag("Invalid name",
			fmt.Sprintf("The %s name %q must start with a letter or an underscore and contain only letters, digits and underscores (a dash would read as a minus in conditions).", kind, name), b.LabelRanges[0])}
	}
	return nil
}

func hclIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}

// singleBlock is the one block of a kind a playbook may have at most one
// of: the first of blocks, nil when there is none, and an error on each
// other, saying where the first is. hint, when not empty, is a sentence
// on what to do instead.
func singleBlock(kind string, blocks []*hcl.Block, hint string) (*hcl.Block, hcl.Diagnostics) {
	if len(blocks) == 0 {
		return nil, nil
	}
	var diags hcl.Diagnostics
	for _, b := range blocks[1:] {
		detail := fmt.Sprintf("A playbook has at most one %s block; the first is at %s.", kind, blocks[0].DefRange)
		if hint != "" {
			detail += " " + hint
		}
		diags = append(diags, errDiag("Duplicate "+kind+" block", detail, b.DefRange))
	}
	return blocks[0], diags
}
