playbook "trace" {
  description = "Trace attributes that would hide apl's own span fields or read what does not exist."
}

input "phase" {
  type = string
}

trace {
  attributes = {
    phase_id = inputs.phase
    step     = "x" # ERROR: Reserved trace attribute
    stage    = inputs.stage # ERROR: Reference to undeclared input
  }
}

trace { # ERROR: Duplicate trace block
  attributes = {}
}

step "s" {
  shell {
    command = ["true"]
  }
}
