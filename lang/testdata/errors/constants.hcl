playbook "constants" {
  description = "Attributes read at load time cannot refer to run state."
  version     = "v${inputs.major}" # ERROR: Constant required
}

input "major" {
  type        = number
  default     = 1
  description = "Major version ${run.id}" # ERROR: Constant required
}

step "s" {
  progress = steps.s.status # ERROR: Constant required
  when     = inputs.major # ERROR: Constant required
  shell {
    command = ["echo", tostring(inputs.major)]
    parse   = steps.s.output # ERROR: Constant required
  }
  gate {
    otherwise {
      goto = "s${inputs.major}" # ERROR: Constant required
    }
  }
}
