playbook "exit_codes_unmapped" {
  description = "A finish status that exit_codes does not map."
  exit_codes  = { completed = 0, failed = 1, blocked = 2 }
}

step "check" {
  shell {
    command = ["check"]
  }
  continue_on_error = true
  gate {
    rule "exists" {
      when   = "steps.check.exit_code == 0"
      finish = "blokced" # ERROR: Status not in exit_codes
    }
    rule "known" {
      when   = "steps.check.exit_code == 1"
      finish = "blocked"
    }
    otherwise {
      log = "no tag yet"
    }
  }
}

step "work" {
  for_each = "['a', 'b']"

  step "item" {
    shell {
      command = ["work"]
    }
    gate {
      otherwise {
        finish = "skipped"
      }
    }
  }
}
