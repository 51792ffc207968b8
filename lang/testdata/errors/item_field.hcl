playbook "item_field" {
  description = "A misspelt field of a for_each item or of a for expression's variable."
}

step "plan" {
  returns = object({
    tasks = list(object({ id = string, title = string }))
  })
  agent "planner" {
    prompt = "Plan, as {\"tasks\": [{\"id\": \"t1\", \"title\": \"...\"}]}."
  }
}

step "work" {
  for_each = "steps.plan.output.tasks"
  key      = "item.id"

  step "do" {
    shell {
      script = "echo ${item.titel}" # ERROR: Unsupported attribute
    }
  }
}

step "report" {
  agent "planner" {
    prompt = "Tasks: ${join(", ", [for t in steps.plan.output.tasks : t.idd])}" # ERROR: Unsupported attribute
  }
}

agent "planner" {
  type = "claude-code"
}
