playbook "unknown_block" {
  description = "Blocks the language does not have."
}

stage "build" { # ERROR: Unsupported block type
}

step "s" {
  repeat { # ERROR: Unsupported block type
    times = 3
  }
  shell {
    command = ["/bin/true"]
  }
}
