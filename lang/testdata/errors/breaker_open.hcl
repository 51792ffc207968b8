playbook "breaker_open" {
  description = "What may open the circuit breaker besides its streaks."
}

circuit_breaker {
  open_on = ["budget", "timout"] # ERROR: Unknown error kind
}

step "debug" {
  shell {
    command = ["true"]
  }
}

step "verify" {
  continue_on_error = true
  shell {
    command = ["make", "test"]
  }
  gate {
    rule "pass" {
      when         = "steps.verify.status == 'completed'"
      open_breaker = true # ERROR: open_breaker outside on_exhausted
    }
    otherwise {
      goto = "debug"
      max  = 3
      on_exhausted {
        fail         = "halt"
        open_breaker = true # ERROR: Conflicting gate actions
      }
    }
  }
}
