playbook "timeout" {
  description = "Timeouts must be positive durations."
}

step "a" {
  timeout = "ten minutes" # ERROR: Invalid timeout
  shell {
    command = ["/bin/true"]
  }
}

step "b" {
  timeout = "-5s" # ERROR: Invalid timeout
  shell {
    command = ["/bin/true"]
  }
}

step "c" {
  timeout = 90 # ERROR: Invalid timeout
  shell {
    command = ["/bin/true"]
  }
}
