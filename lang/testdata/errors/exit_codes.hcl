playbook "exit_codes" {
  description = "With exit_codes declared, every finish and fail value of the run's gates needs a code."
  exit_codes  = { completed = 0, blocked = 2 }
}

step "triage" {
  shell {
    command = ["true"]
  }
  gate {
    rule "blocked" {
      when   = "steps.triage.exit_code == 1"
      finish = "blocked"
    }
    rule "split" {
      when   = "steps.triage.exit_code == 2"
      finish = "split_request" # ERROR: Status not in exit_codes
    }
    rule "broken" {
      when = "steps.triage.exit_code == 3"
      fail = "gate_failed" # WARNING: Fail value without an exit code
    }
    otherwise {}
  }
}

finally {
  step "report" {
    shell {
      command = ["echo", run.status]
    }
    gate {
      otherwise {
        finish = "not_an_ending" # finally steps do not change the run's outcome
      }
    }
  }
}
