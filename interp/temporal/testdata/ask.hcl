playbook "ask" {}
step "prepare" {
  shell { command = ["echo", "v1.2"] }
}
step "approve" {
  ask {
    question = "Ship ${trimspace(steps.prepare.output)}?"
    options  = ["yes", "no"]
  }
  gate {
    rule "no" {
      when   = "steps.approve.output == 'no'"
      fail   = "halt"
      reason = "not approved"
    }
    otherwise {}
  }
}
step "notes" {
  ask {
    question = "Release notes?"
    text     = true
  }
}
step "ship" {
  shell { command = ["echo", "shipped ${trimspace(steps.prepare.output)}: ${steps.notes.output}"] }
}
output {
  approved = steps.approve.output
  shipped  = trimspace(steps.ship.output)
}
