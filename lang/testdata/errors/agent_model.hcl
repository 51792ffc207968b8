playbook "agent_model" {
  description = "A computed model must give a string, the model's name."
}

input "tasks" {
  type = list(object({ id = string, model = string, tier = number, escalated = bool }))
}

agent "implementer" {
  driver = "claude-code"
}

step "tasks" {
  for_each = "inputs.tasks"
  key      = "item.id"

  step "implement" {
    agent "implementer" {
      prompt = "Implement ${item.id}."
      model  = item.escalated ? "opus" : item.model
    }
  }

  step "tiered" {
    agent "implementer" {
      prompt = "Implement ${item.id}."
      model  = { name = item.model } # ERROR: Invalid model
    }
  }

  step "listed" {
    agent "implementer" {
      prompt = "Implement ${item.id}."
      model  = [item.model] # ERROR: Invalid model
    }
  }
}
