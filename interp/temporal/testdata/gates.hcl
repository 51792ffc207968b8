playbook "gates" {}
step "flaky" {
  retry {
    max     = 3
    backoff = "1s"
  }
  shell { script = "echo x >> flaky.count; test $(wc -l < flaky.count) -ge 3" }
}
step "try" {
  shell { script = "echo x >> tries; wc -l < tries" }
}
step "check" {
  gate {
    rule "again" {
      when = "steps.try.attempts < 10"
      goto = "try"
      max  = 3
      on_exhausted {
        fail = "halt"
      }
    }
    otherwise {}
  }
}
output {
  tries  = steps.try.attempts
  flaky  = steps.flaky.attempts
}
