playbook "sections" {
  description = "on_failure and output blocks."
}

step "build" {
  next = "postmortem" # ERROR: Jump across sections
  shell {
    command = ["make"]
  }
}

on_failure {
  step "postmortem" {
    shell {
      command = ["echo", "failed"]
    }
  }
  step "notify" {
    next = "postmortem" # ERROR: Unbounded cycle
    shell {
      command = ["notify"]
    }
  }
  step "back" {
    gate {
      otherwise {
        goto = "build" # ERROR: Jump across sections
      }
    }
  }
  step "notify" { # ERROR: Duplicate step
    shell {
      command = ["notify", "again"]
    }
  }
}

on_failure { # ERROR: Duplicate on_failure block
}

output {
  status = run.status
}

output { # ERROR: Duplicate output block
  status = run.status
}
