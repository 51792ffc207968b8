playbook "gate_event" {
  description = "Gate events that could not be told from apl's own."
}

step "check" {
  shell {
    command = ["make", "check"]
  }
  gate {
    rule "done" {
      when   = "steps.check.exit_code == 0"
      event  = "run_completed" # ERROR: Reserved event name
      finish = "completed"
    }
    rule "odd" {
      when  = "steps.check.exit_code == 1"
      event = "not a word" # ERROR: Invalid event name
      fail  = "halt"
    }
    otherwise {
      event = "rollback_initiated"
      fail  = "halt"
    }
  }
}
