playbook "requeue" {
  description = "requeue sends a for_each item back to the queue; it is capped and only in a for_each body."
}

step "plan" {
  shell {
    command = ["make", "plan"]
  }
  gate {
    rule "again" {
      when    = "steps.plan.exit_code != 0"
      requeue = true # ERROR: requeue outside a for_each
      max     = 2
      on_exhausted {
        fail = "halt"
      }
    }
    otherwise {}
  }
}

step "tasks" {
  for_each        = "['a', 'b']"
  on_item_failure = "fail_later" # ERROR: Invalid on_item_failure

  step "work" {
    shell {
      command = ["make", item]
    }
  }

  step "review" {
    gate {
      rule "uncapped" {
        when    = "steps.work.exit_code == 1"
        requeue = true # ERROR: requeue without max
      }
      rule "both" {
        when    = "steps.work.exit_code == 2"
        goto    = "work"
        requeue = "work" # ERROR: Conflicting gate actions
        max     = 1
        on_exhausted {
          fail = "halt"
        }
      }
      rule "bad" {
        when    = "steps.work.exit_code == 3"
        requeue = 3 # ERROR: Invalid requeue
        max     = 1
        on_exhausted {
          fail = "halt"
        }
      }
      otherwise {}
    }
  }
}
