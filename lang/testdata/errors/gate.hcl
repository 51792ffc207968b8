playbook "gate" {
  description = "Gates whose rules are not well formed."
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
    rule "pass" {
      when = "steps.check.exit_code == 0"
      log  = "passed"
    }
    rule "pass" { # ERROR: Duplicate rule
      when = "steps.check.exit_code == 1"
      log  = "passed again"
    }
    rule "both" {
      when   = "steps.check.exit_code == 2"
      finish = "completed"
      fail   = "halt" # ERROR: Conflicting gate actions
    }
    rule "bad_set" {
      when = "steps.check.exit_code == 3"
      set  = "halt" # ERROR: Invalid set
    }
    rule "no_when" { # ERROR: Missing required argument
      log = "no condition"
    }
    otherwise {
      log = "otherwise"
    }
    rule "late" { # WARNING: Rule after otherwise
      when = "steps.check.exit_code == 4"
      goto = "plan"
      max  = 1
      on_exhausted {
        fail = "halt"
      }
    }
    otherwise { # ERROR: Duplicate otherwise
      log = "again"
    }
  }
}
