playbook "positional" {
  description = "apl run takes one argument after the playbook."
}

input "task" {
  positional = true
}

input "level" {
  positional = true # ERROR: Several positional inputs
}

step "s" {
  shell {
    command = ["echo", inputs.task, inputs.level]
  }
}
