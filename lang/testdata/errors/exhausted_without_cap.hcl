playbook "exhausted_without_cap" {
  description = "on_exhausted needs a max; max needs a goto."
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
    rule "done" {
      when   = "steps.check.exit_code == 0"
      finish = "completed"
      on_exhausted { # ERROR: on_exhausted without max
        fail = "halt"
      }
    }
    rule "capped" { # ERROR: Cap without on_exhausted
      when = "steps.check.exit_code == 2"
      max  = 2 # ERROR: max without goto
      fail = "halt"
    }
    otherwise {
      goto = "plan"
      max  = 0 # ERROR: Invalid max
      on_exhausted {
        fail = "halt"
      }
    }
  }
}
