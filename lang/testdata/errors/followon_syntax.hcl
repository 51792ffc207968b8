playbook "followon_syntax" {
  description = "A syntax error, and a declaration it would leave looking unused."
}

input "phase" {
  default = "1"
}

step "s" {
  shell {
    command = ["/bin/true"]
  }
  description = # ERROR: Invalid expression # ERROR: Incorrect attribute value type
}
