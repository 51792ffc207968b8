playbook "shell" {}
input "name" {
  type    = string
  default = "world"
}
step "hello" {
  shell {
    command = ["echo", "hello ${inputs.name}"]
  }
}
step "json" {
  shell {
    script = "echo '{\"n\": 3, \"list\": [1, 2]}'"
    parse  = "json"
  }
}
output {
  greeting = trimspace(steps.hello.output)
  n        = steps.json.output.n
  list     = steps.json.output.list
}
