playbook "ask_text" {
  description = "An ask takes options or a typed answer, not both and not neither."
}

step "both" {
  ask {
    question = "Deploy?"
    text     = true
    options  = ["yes", "no"] # ERROR: Options with a free-text answer
  }
}

step "neither" {
  ask { # ERROR: Ask without options
    question = "Deploy?"
  }
}

step "metrics" {
  ask {
    question = "p95 latency?"
    text     = true
  }
}

step "report" {
  shell {
    command = ["echo", steps.metrics.output.p95] # ERROR: Output has no fields
  }
}
