playbook "setting" {
  description = "Caps, concurrency, limits and timeouts read inputs only, with defaults, and valid values."
}

input "cycles" {
  type    = number
  default = 2
}

input "parallel" {
  type    = number
  default = 0
}

input "required" {
  type = number
}

input "limits" {
  type    = map(number)
  default = { haiku = 5, opus = 0 }
}

mode "broken" {
  inputs = { cycles = 0 }
}

step "list" {
  shell {
    command = ["echo", "[]"]
    parse   = "json"
  }
}

step "each" {
  for_each    = "steps.list.output"
  concurrency = inputs.parallel # ERROR: Invalid concurrency
  limit "model" {
    key     = "item.model"
    max     = inputs.limits # ERROR: Invalid max
    default = inputs.required # ERROR: Cap input without default
  }
  step "work" {
    timeout = item.timeout # ERROR: Cap must be known at run start
    shell {
      command = ["true"]
    }
  }
}

step "check" {
  timeout = "${inputs.cycle}m" # ERROR: Reference to undeclared input
  shell {
    command = ["true"]
  }
  gate {
    rule "again" {
      when = "steps.check.status == 'failed'"
      goto = "check"
      max  = inputs.cycles # ERROR: Invalid max
      on_exhausted {
        fail = "halt"
      }
    }
    rule "later" {
      when = "steps.check.status == 'failed'"
      goto = "check"
      max  = steps.list.output # ERROR: Cap must be known at run start
      on_exhausted {
        fail = "halt"
      }
    }
    otherwise {}
  }
}
