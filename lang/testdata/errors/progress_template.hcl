playbook "progress_template" {
  description = "Progress templates read checked names; a step that is never announced cannot show one."
}

step "triage" {
  progress      = "TRIAGE"
  returns       = object({ routing = string })
  progress_done = "Routing: ${steps.triage.output.routnig}" # ERROR: Unknown output field
  shell {
    command = ["triage"]
    parse   = "json"
  }
}

step "plan" {
  progress       = "PLAN"
  progress_start = "for ${inputs.phse}" # ERROR: Reference to undeclared input
  shell {
    command = ["plan"]
  }
}

step "note" {
  progress_done = "noted" # WARNING: Progress template never shown
  shell {
    command = ["note"]
  }
}

input "phase" { # WARNING: Unused input
  type = string
}
