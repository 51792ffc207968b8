playbook "open_breaker_without_breaker" {
  description = "open_breaker needs a circuit_breaker block to open."
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
      when = "steps.verify.status == 'completed'"
    }
    otherwise {
      goto = "debug"
      max  = 3
      on_exhausted {
        open_breaker = true # ERROR: open_breaker without circuit_breaker
      }
    }
  }
}
