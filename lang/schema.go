package lang

import "github.com/hashicorp/hcl/v2"

// Block schemas, one per block type. Attributes that hold runtime values
// are decoded as hcl.Expression and checked, never evaluated, here.

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
		{Type: "limits"},
		{Type: "circuit_breaker"},
		{Type: "state"},
	},
}

var playbookSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "version"},
		{Name: "label"},
		{Name: "exit_codes"},
	},
}

var inputSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "default"},
		{Name: "description"},
		{Name: "flag"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "message", Required: true},
	},
}

var modeSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "inputs", Required: true},
	},
}

var budgetSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "max_response_lines"},
		{Name: "max_summary_lines"},
		{Name: "enforcement"},
	},
}

var promptSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "template", Required: true},
	},
}

var agentSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "type"},
		{Name: "driver"},
		{Name: "model"},
		{Name: "budget"},
		{Name: "system"},
		{Name: "description"},
	},
}

var stepSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "progress"},
		{Name: "when"},
		{Name: "skip_reason"},
		{Name: "returns"},
		{Name: "timeout"},
		{Name: "next"},
		{Name: "continue_on_error"},
		{Name: "serial"},
		{Name: "max_tokens"},
		{Name: "max_cost_usd"},
		{Name: "progress_when"},
		// for_each steps
		{Name: "for_each"},
		{Name: "key"},
		{Name: "depends_on"},
		{Name: "priority"},
		{Name: "concurrency"},
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
	},
}

var retrySchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "max", Required: true},
		{Name: "backoff"},
	},
}

var checkSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "message"},
		{Name: "on_fail"},
		{Name: "max"},
	},
}

var limitSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "key", Required: true},
		{Name: "max", Required: true},
		{Name: "default"},
	},
}

var askSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "question", Required: true},
		{Name: "options", Required: true},
		{Name: "default"},
	},
}

var subPlaybookSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "source", Required: true},
		{Name: "inputs"},
		{Name: "mode"},
	},
}

var limitsSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "timeout"},
		{Name: "max_retries"},
		{Name: "max_tokens"},
		{Name: "max_cost_usd"},
	},
}

var circuitBreakerSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "no_progress"},
		{Name: "same_error"},
		{Name: "cooldown"},
	},
}

var stateSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "path", Required: true},
	},
}

var shellSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "command"},
		{Name: "script"},
		{Name: "parse"},
		{Name: "dir"},
		{Name: "env"},
		{Name: "stdin"},
	},
}

var agentActionSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "prompt", Required: true},
		{Name: "vars"},
		{Name: "budget"},
		{Name: "model"},
		{Name: "session"},
	},
}

var gateSchema = &hcl.BodySchema{
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "rule", LabelNames: []string{"name"}},
		{Type: "otherwise"},
	},
}

// outcomeAttributes are the actions a gate rule, an otherwise block and an
// on_exhausted block share.
var outcomeAttributes = []hcl.AttributeSchema{
	{Name: "log"},
	{Name: "event"},
	{Name: "set"},
	{Name: "goto"},
	{Name: "max"},
	{Name: "finish"},
	{Name: "fail"},
	{Name: "reason"},
}

var ruleSchema = &hcl.BodySchema{
	Attributes: append([]hcl.AttributeSchema{{Name: "when", Required: true}}, outcomeAttributes...),
	Blocks:     []hcl.BlockHeaderSchema{{Type: "on_exhausted"}},
}

var otherwiseSchema = &hcl.BodySchema{
	Attributes: outcomeAttributes,
	Blocks:     []hcl.BlockHeaderSchema{{Type: "on_exhausted"}},
}

var exhaustedSchema = &hcl.BodySchema{
	Attributes: outcomeAttributes,
}
