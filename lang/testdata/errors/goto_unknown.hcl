playbook "goto_unknown" {
  description = "Jumps to steps that do not exist."
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
    rule "again" {
      when = "steps.check.exit_code != 0"
      goto = "plann" # ERROR: Reference to undeclared step
      max  = 2
      on_exhausted {
        goto = "rollbak" # ERROR: Reference to undeclared step
      }
    }
    otherwise {
      log = "ok"
    }
  }
}

step "report" {
  next = "nowhere" # ERROR: Reference to undeclared step
  shell {
    command = ["make", "report"]
  }
}
