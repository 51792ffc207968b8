playbook "cycle_goto" {
  description = "A gate that loops back without a cap."
}

step "plan" {
  shell {
    command = ["make", "plan"]
  }
}

step "check" {
  returns = object({ pass = bool })
  shell {
    command = ["make", "check"]
    parse   = "json"
  }
  gate {
    rule "pass" {
      when   = "steps.check.output.pass"
      finish = "completed"
    }
    otherwise {
      goto = "plan" # ERROR: Unbounded cycle
    }
  }
}
