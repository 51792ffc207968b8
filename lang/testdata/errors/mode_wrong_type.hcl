playbook "mode_wrong_type" {
  description = "A mode must give inputs values of their types."
}

input "pass_threshold" {
  type    = number
  default = 9
}

input "checks" {
  type    = list(string)
  default = []
}

mode "lenient" {
  inputs = {
    pass_threshold = "seven" # ERROR: Wrong type for a mode input
    checks         = "make lint" # ERROR: Wrong type for a mode input
  }
}

step "s" {
  when = "inputs.pass_threshold > 0"
  shell {
    command = concat(["run"], inputs.checks)
  }
}
