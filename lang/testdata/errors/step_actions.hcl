playbook "step_actions" {
  description = "A step's own set, append and log: not beside a gate, and not setting and appending one var."
}

step "record" {
  shell {
    command = ["true"]
  }
  set    = { notes = [] }
  append = { notes = ["x"] } # ERROR: Var both set and appended
}

step "both" {
  shell {
    command = ["true"]
  }
  log = "done" # ERROR: Step actions beside a gate
  gate {
    otherwise {}
  }
}

step "bad" {
  shell {
    command = ["true"]
  }
  append = ["x"] # ERROR: Invalid append
}
