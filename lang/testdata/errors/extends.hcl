# An extending playbook's mistakes are found in the effective playbook and
# reported in the file that makes them.
extends = "extends_base"

step "build" {
  timeout = "ten minutes" # ERROR: Invalid timeout
}

step "ghost" { # ERROR: Nothing to remove
  removed = true
}

step "research" {
  removed = "yes" # ERROR: Invalid removed
}

# A block that overrides nothing is added; one named like an upstream
# block of its type is most likely a misspelt override.
step "reserch" { # WARNING: Added, not overridden
  shell {
    command = ["/bin/true"]
  }
}
