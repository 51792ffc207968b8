# One step running an argv list without a shell.
playbook "shell_command" {
  description = "Run a command."
}

step "s" {
  shell {
    command = ["/bin/true"]
  }
}
