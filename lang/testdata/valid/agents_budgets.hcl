# The context budget table, agent profiles, drivers and agent steps.
playbook "agents" {
  description = "Agents with budgets."
}

budget "research" {
  max_response_lines = 200
  max_summary_lines  = 10
  enforcement        = "summary"
}

budget "review" {
  max_response_lines = 50
}

driver "local" {
  type    = "command"
  command = ["./agent.sh"]
}

agent "researcher" {
  type        = "gsd-phase-researcher"
  driver      = driver.local
  model       = "sonnet"
  budget      = budget.research
  system      = "You research before anyone plans."
  description = "Reads the code base."
}

agent "reviewer" {
  driver = "claude-code"
}

prompt "research" {
  description = "What to research."
  template    = "Research the code base. End with a SUMMARY."
}

step "research" {
  agent "researcher" {
    prompt = prompt.research
  }
}

step "review" {
  returns = object({ approved = bool })
  agent "reviewer" {
    prompt = "Review this summary: ${steps.research.output}"
    budget = budget.review
    model  = "opus"
  }
}
