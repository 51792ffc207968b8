playbook "followon_unused" {
  description = "A condition with a typo reads an input; the input is not unused."
}

input "phase" {
  type    = string
  default = "1"
}

step "s" {
  when = "inputs.phase == '1' && steps.s.stauts == 'ok'" # ERROR: Invalid condition
  shell {
    command = ["/bin/true"]
  }
}
