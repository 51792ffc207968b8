package lang

import (
	"slices"

	"github.com/hashicorp/hcl/v2"
)

// nestedSchemas says, for each body schema, the schemas of the bodies of
// the blocks it holds, as the decoders read them. A block type missing
// here takes any attribute (driver, output, locals, call).
var nestedSchemas = map[*hcl.BodySchema]map[string]*hcl.BodySchema{
	fileSchema: {
		"playbook": playbookSchema, "input": inputSchema, "mode": modeSchema, "budget": budgetSchema,
		"prompt": promptSchema, "agent": agentSchema, "step": stepSchema, "on_failure": sectionSchema,
		"finally": sectionSchema, "var": varSchema, "type": typeDefSchema, "limits": limitsSchema,
		"circuit_breaker": circuitBreakerSchema, "state": stateSchema, "document": documentSchema,
		"trace": traceSchema, "template": templateSchema,
	},
	inputSchema: {"validation": validationSchema},
	stepSchema: {
		"shell": shellSchema, "agent": agentActionSchema, "ask": askSchema, "playbook": subPlaybookSchema,
		"gate": gateSchema, "retry": retrySchema, "check": checkSchema, "limit": limitSchema, "step": stepSchema,
	},
	sectionSchema: {"step": stepSchema},
	templateSchema: {
		"shell": shellSchema, "agent": agentActionSchema, "ask": askSchema, "playbook": subPlaybookSchema,
		"gate": gateSchema, "retry": retrySchema, "check": checkSchema, "limit": limitSchema, "step": stepSchema,
		"param": templateParamSchema,
	},
	gateSchema:      {"rule": ruleSchema, "otherwise": otherwiseSchema},
	ruleSchema:      {"on_exhausted": exhaustedSchema},
	otherwiseSchema: {"on_exhausted": exhaustedSchema},
	testFileSchema:  {"test": testSchema, "mock": mockSchema, "unreachable": unreachableSchema},
	testSchema:      {"mock": mockSchema, "expect": expectSchema},
	mockSchema:      {"agent": agentMockSchema},
}

// freeBodies are the block types whose bodies take any attribute.
var freeBodies = map[string]bool{"driver": true, "output": true, "locals": true, "call": true, argsBlock: true}

// templateSchema is a template's body: a step's, and its params.
var templateSchema = &hcl.BodySchema{
	Attributes: stepSchema.Attributes,
	Blocks:     append(slices.Clone(stepSchema.Blocks), hcl.BlockHeaderSchema{Type: "param", LabelNames: []string{"name"}}),
}

// stepBody is what a step's body takes: its schema's, and use and with,
// which expanding templates reads (and takes out) before the schema does.
var stepBody = &hcl.BodySchema{
	Attributes: append(slices.Clone(stepSchema.Attributes), hcl.AttributeSchema{Name: "use"}, hcl.AttributeSchema{Name: "with"}),
	Blocks:     stepSchema.Blocks,
}

// BodySchema is the schema of the body that a path of block types leads
// to from the top of a playbook file (step, gate, rule: a gate rule's
// body), or of a test file when test is set: the attributes and blocks it
// takes, for an editor to offer. It is nil for a body that takes any
// attribute (locals, output, a call's arguments, a driver's settings) or
// that no path of blocks reaches.
func BodySchema(test bool, path ...string) *hcl.BodySchema {
	s := bodySchema(test, path)
	if s == stepSchema {
		return stepBody
	}
	return s
}

// bodySchema is BodySchema, with a step's body as its schema has it.
func bodySchema(test bool, path []string) *hcl.BodySchema {
	s := fileSchema
	if test {
		s = testFileSchema
	}
	for _, t := range path {
		s = nestedSchemas[s][t]
		if s == nil {
			return nil
		}
	}
	return s
}
