playbook "drivers" {
  description = "Drivers and agents that do not fit together."
}

driver "local" {
  type    = "comand" # ERROR: Unknown driver type
  command = ["./agent.sh"]
}

driver "remote" { # ERROR: Missing driver type
  url = "https://example.com" # ERROR: Unsupported argument
}

driver "numbered" {
  type = 3 # ERROR: Invalid driver type
}

agent "coder" {
  driver = "claude_code" # ERROR: Unknown driver
}

agent "other" {
  driver = local # ERROR: Invalid reference
}

budget "tight" { # ERROR: Invalid budget
  max_response_lines = 10
  max_summary_lines  = 20
}

budget "negative" {
  max_response_lines = -1 # ERROR: Invalid budget
}

step "code" {
  agent "coder" {
    prompt = prompt # ERROR: Invalid prompt reference
    budget = budget.tight
  }
}

step "other" {
  agent "other" {
    prompt = file("a.md", "b.md") # ERROR: Invalid file call
    budget = budget.negative
  }
}
