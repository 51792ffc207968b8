playbook "gate_without_otherwise" {
  description = "A gate that says nothing when no rule matches."
}

step "check" {
  shell {
    command = ["make", "check"]
  }
  gate { # WARNING: Gate without otherwise
    rule "failed" {
      when = "steps.check.exit_code != 0"
      fail = "debug"
    }
  }
}

step "report" {
  shell {
    command = ["make", "report"]
  }
}
