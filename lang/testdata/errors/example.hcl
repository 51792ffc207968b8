playbook "example" {
  description = "Examples that do not fit their steps."
}

agent "rater" {
  type = "general-purpose"
}

step "rate" {
  returns = object({ alignment_score = number })
  example = { alignment_score = "high" } # ERROR: Example does not match returns
  shell {
    command = ["rate"]
    parse   = "json"
  }
  next = "notes"
}

step "notes" {
  example = { text = "x" } # ERROR: Example does not match the step
  agent "rater" {
    prompt = "Notes."
  }
  next = "route"
}

step "route" {
  example = "x" # ERROR: Example on a step without an action
  next    = "read"
}

step "read" {
  example = steps.rate.output # ERROR: Constant required
  shell {
    command = ["true"]
  }
}
