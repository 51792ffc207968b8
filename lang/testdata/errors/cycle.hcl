playbook "cycle" {
  description = "A loop back without a cap."
}

step "plan" {
  shell {
    command = ["make", "plan"]
  }
}

step "check" {
  shell {
    command = ["make", "check"]
  }
}

step "fix" {
  next = "plan" # ERROR: Unbounded cycle
  shell {
    command = ["make", "fix"]
  }
}
