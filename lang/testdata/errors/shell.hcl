playbook "shell" {
  description = "Shell actions that are not well formed."
}

step "both" {
  shell {
    command = ["/bin/true"]
    script  = "true" # ERROR: Conflicting shell attributes
  }
}

step "neither" {
  shell { # ERROR: Missing shell command
    parse = "text"
  }
}

step "string_command" {
  shell {
    command = "git status --short" # ERROR: Command must be a list
  }
}

step "bad_parse" {
  shell {
    command = ["cat", "out.yaml"]
    parse   = "yaml" # ERROR: Invalid parse
  }
}
