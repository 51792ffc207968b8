playbook "impure" {
  description = "Time and randomness belong to values, not to routing or constants."
}

input "id" {
  default = uuid() # ERROR: Error in function call
}

step "late" {
  when = "now().Hour() > 17" # ERROR: Invalid condition
  shell {
    command = ["echo", inputs.id, timestamp(), uuid()]
  }
}
