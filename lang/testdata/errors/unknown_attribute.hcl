playbook "unknown_attribute" {
  description = "Attributes the blocks do not have."
  author      = "someone" # ERROR: Unsupported argument
}

name = "top level" # ERROR: Unsupported argument

input "n" {
  type     = string
  required = true # ERROR: Unsupported argument
}

step "s" {
  retries = 3 # ERROR: Unsupported argument
  shell {
    command = ["echo", inputs.n]
    shell   = "zsh" # ERROR: Unsupported argument
  }
}
