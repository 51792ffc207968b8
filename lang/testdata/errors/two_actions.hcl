playbook "two_actions" {
  description = "A step has at most one action."
}

step "s" {
  shell {
    command = ["/bin/true"]
  }
  call "git.status" { # ERROR: More than one action
  }
}

step "t" {
  gate {
    otherwise {
      log = "first"
    }
  }
  gate { # ERROR: Duplicate gate
    otherwise {
      log = "second"
    }
  }
}
