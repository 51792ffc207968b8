playbook "cap_without_exhausted" {
  description = "A capped goto must say what happens once the cap is reached."
}

step "plan" {
  shell {
    command = ["make", "plan"]
  }
}

step "check" {
  shell {
    command = ["make", "check"]
  }
  gate {
    rule "retry" { # ERROR: Cap without on_exhausted
      when = "steps.check.exit_code != 0"
      goto = "plan"
      max  = 3
    }
    otherwise {
      log = "ok"
    }
  }
}
