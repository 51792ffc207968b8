# Typed inputs with defaults, flags, validation and the modes that preset
# them.
playbook "modes" {
  description = "Inputs and modes."
}

input "phase_id" {
  type        = string
  flag        = "phase"
  description = "The phase to run."
}

input "pass_threshold" {
  type    = number
  default = 9
  validation {
    condition = "value >= 0 && value <= 10"
    message   = "pass_threshold is a score out of 10."
  }
}

input "strict" {
  default = false
}

input "checks" {
  type    = list(string)
  default = ["make lint", "make test"]
}

input "token" {
  type    = string
  default = ""
}

mode "lenient" {
  description = "Accept work at 7/10."
  inputs      = { pass_threshold = 7, strict = false }
}

mode "quality" {
  inputs = {
    pass_threshold = 9.5
    strict         = true
    checks         = ["make lint", "make test", "make race"]
  }
}

step "check" {
  when        = "inputs.strict || inputs.pass_threshold > 8"
  skip_reason = "phase ${inputs.phase_id} is not strict"
  shell {
    command = concat(["run-checks", "--token", inputs.token], inputs.checks)
  }
}
