package temporal

import (
	"github.com/apl-lang/apl/builtins/agent"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"
)

type agentDriver = agent.Driver

var (
	workflowOptions = workflow.RegisterOptions{Name: WorkflowName}
	activityOptions = activity.RegisterOptions{Name: activityPrefix}
)
