playbook "locals" {
  description = "References into locals are checked against their inferred types."
}

locals {
  plan  = { phase = "6.3", tasks = ["a", "b"] }
  loop  = local.again
  again = local.loop # ERROR: Cycle in locals
}

step "work" {
  when = "local.plan.phase != '' && len(local.plan.taks) > 0" # ERROR: Invalid condition
  shell {
    command = ["echo", local.plan.phase, local.plan.phas, local.plans] # ERROR: Unknown local field # ERROR: Reference to undeclared local
  }
}
