# Conditions over every root: steps' fields, run fields, inputs; builtin
# calls as actions.
playbook "conditions" {
  description = "when conditions."
}

input "retries" {
  type    = number
  default = 2
}

input "labels" {
  type    = map(string)
  default = {}
}

step "fetch" {
  returns = object({
    items = list(object({ name = string, size = number }))
  })
  call "json.read" {
    path = "items.json"
  }
}

step "big" {
  when = "any(steps.fetch.output.items, .size > 100) && steps.fetch.status == 'ok'"
  call "file.write" {
    path    = "big.txt"
    content = join("\n", [for i in steps.fetch.output.items : i.name])
  }
}

step "report" {
  when = <<-EXPR
    steps.big.attempts <= inputs.retries
    && run.elapsed_s < 3600
    && run.mode != 'dry'
    && len(inputs.labels) >= 0
  EXPR
  shell {
    command = ["echo", steps.big.status]
  }
}
