playbook "unreachable" {
  description = "Steps no path reaches."
}

step "first" {
  shell {
    command = ["make"]
  }
  gate {
    otherwise {
      finish = "completed"
    }
  }
}

step "orphan" { # WARNING: Unreachable step
  shell {
    command = ["make", "orphan"]
  }
}

step "after_orphan" { # WARNING: Unreachable step
  shell {
    command = ["make", "after"]
  }
}
