playbook "duplicate" {
  description = "Names declared twice."
}

input "phase" {
  type = string
}

input "phase" { # ERROR: Duplicate input
  type = number
}

prompt "plan" {
  template = "Plan phase ${inputs.phase}."
}

prompt "plan" { # ERROR: Duplicate prompt
  template = "Plan again."
}

agent "planner" {
  type = "gsd-planner"
}

step "plan" {
  agent "planner" {
    prompt = prompt.plan
  }
}

step "plan" { # ERROR: Duplicate step
  shell {
    command = ["/bin/true"]
  }
}

playbook "again" { # ERROR: Duplicate playbook block
}
