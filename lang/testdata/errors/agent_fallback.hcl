playbook "agent_fallback" {
  description = "Fallback agents must be declared, other than the step's own, and fall back on error kinds."
}

agent "primary" {}
agent "backup" {}

step "fix" {
  agent "primary" {
    prompt      = "Fix it."
    fallback    = ["backup", "bakup"] # ERROR: Reference to undeclared agent
    fallback_on = ["unavailable", "timout"] # ERROR: Unknown error kind
  }
}

step "again" {
  agent "primary" {
    prompt   = "Fix it."
    fallback = ["primary"] # ERROR: Repeated fallback agent
  }
}

step "stop" {
  agent "primary" {
    prompt      = "Fix it."
    fallback    = ["backup"]
    fallback_on = ["interrupted"] # ERROR: Invalid fallback_on
  }
}

step "alone" {
  agent "primary" {
    prompt      = "Fix it."
    fallback_on = ["timeout"] # ERROR: fallback_on without fallback
  }
}
