playbook "foreach" {}
step "work" {
  for_each    = "['a', 'b', 'c', 'd', 'e']"
  key         = "item"
  concurrency = 3
  step "do" {
    shell { command = ["echo", "did ${item}"] }
  }
  step "twice" {
    shell {
      script = "echo ${item}${item}"
    }
  }
}
step "after" {
  shell { command = ["echo", "done"] }
}
output {
  after = trimspace(steps.after.output)
}
