playbook "single_blocks" {
  description = "Blocks a playbook has at most one of."
}

step "build" {
  shell {
    command = ["make"]
  }
}

limits {
  max_retries = 3
}

limits { # ERROR: Duplicate limits block
  max_retries = 4
}

circuit_breaker {
  no_progress = 2
}

circuit_breaker { # ERROR: Duplicate circuit_breaker block
  no_progress = 3
}

state {
  path = "a.json"
}

state { # ERROR: Duplicate state block
  path = "b.json"
}

finally {
  step "tidy" {
    shell {
      command = ["true"]
    }
  }
}

finally { # ERROR: Duplicate finally block
}
