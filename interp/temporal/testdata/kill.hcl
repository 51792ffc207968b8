playbook "kill" {}
step "first" {
  shell { command = ["echo", "one"] }
}
step "slow" {
  shell { command = ["echo", "slow"] }
}
step "last" {
  shell { command = ["echo", "last"] }
}
output {
  slow = trimspace(steps.slow.output)
}
