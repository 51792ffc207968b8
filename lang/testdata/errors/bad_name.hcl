playbook "bad_name" {
  description = "Names must be identifiers: a dash reads as a minus in conditions."
}

input "pass-threshold" { # ERROR: Invalid name
  type    = number
  default = 7
}

step "run-tests" { # ERROR: Invalid name
  when = "inputs['pass-threshold'] > 0"
  shell {
    command = ["make", "test"]
  }
}

step "9lives" { # ERROR: Invalid name
  shell {
    command = ["/bin/true"]
  }
}
