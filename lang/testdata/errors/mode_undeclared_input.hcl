playbook "mode_undeclared_input" {
  description = "A mode may only set declared inputs."
}

input "pass_threshold" {
  type    = number
  default = 9
}

mode "lenient" {
  inputs = {
    pass_treshold = 7 # ERROR: Mode sets an undeclared input
  }
}

mode "broken" {
  inputs = "lenient" # ERROR: Invalid mode inputs
}

step "s" {
  when = "inputs.pass_threshold > 0"
  shell {
    command = ["/bin/true"]
  }
}
