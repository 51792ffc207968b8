playbook "base" {}

step "build" {
  timeout = "10m"
  shell {
    command = ["/bin/true"]
  }
}

step "research" {
  shell {
    command = ["/bin/true"]
  }
}
