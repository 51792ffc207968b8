playbook "undeclared" {
  description = "References to names nobody declared, each one a typo."
}

input "phase_id" {
  type = string
}

budget "research" {
  max_response_lines = 100
}

prompt "research" {
  template = "Research phase ${inputs.phase_id}."
}

agent "researcher" {
  budget = budget.research
}

agent "reviewer" {
  budget = budget.reserch # ERROR: Reference to undeclared budget
}

step "research" {
  agent "researcher" {
    prompt = prompt.reserch # ERROR: Reference to undeclared prompt
  }
}

step "review" {
  agent "reviewr" { # ERROR: Reference to undeclared agent
    prompt = prompt.research
  }
}

step "report" {
  agent "reviewer" {
    prompt = "Summarise ${steps.reserch.output} for ${inputs.phase}" # ERROR: Reference to undeclared step # ERROR: Reference to undeclared input
    budget = budget.reserch # ERROR: Reference to undeclared budget
  }
}
