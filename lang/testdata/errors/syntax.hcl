playbook "syntax" {
  description = "A missing closing quote and an argument without a value."
}

step "s" {
  shell {
    command = ["/bin/true"]
  }
  description = # ERROR: Invalid expression # ERROR: Incorrect attribute value type
}
