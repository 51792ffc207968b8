playbook "unused" {
  description = "Declarations nothing uses."
}

input "phase" { # WARNING: Unused input
  type    = string
  default = "1"
}

budget "research" { # WARNING: Unused budget
  max_response_lines = 100
}

prompt "research" { # WARNING: Unused prompt
  template = "Research."
}

agent "researcher" { # WARNING: Unused agent
  type = "gsd-phase-researcher"
}

step "s" {
  shell {
    command = ["/bin/true"]
  }
}
