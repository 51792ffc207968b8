playbook "release_slot" {
  description = "An item past its release_slot step holds no slot: it goes back before it only through the queue."
}

input "tasks" {
  type = list(string)
}

step "work" {
  for_each = "inputs.tasks"
  key      = "item"

  step "implement" {
    shell {
      command = ["implement", item]
    }
  }

  step "review" {
    serial       = true
    release_slot = true
    shell {
      command = ["review", item]
    }
    gate {
      rule "again" {
        when = "steps.review.exit_code == 1"
        goto = "implement" # ERROR: Route back past the slot's release
        max  = 2
        on_exhausted {
          fail = "rejected"
        }
      }
      rule "retry" {
        when    = "steps.review.exit_code == 2"
        requeue = "implement"
        max     = 2
        on_exhausted {
          fail = "rejected"
        }
      }
      otherwise {}
    }
  }

  step "complete" { # ERROR: Slot released twice
    release_slot = true
    shell {
      command = ["complete", item]
    }
  }
}

step "report" {
  release_slot = true # WARNING: release_slot outside for_each
  shell {
    command = ["report"]
  }
}
