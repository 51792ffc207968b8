playbook "template" {
  description = "Templates: uses, arguments and params that do not fit."
}

agent "fixer" {}

template "fix" {
  param "issues" {
    type = list(string)
  }
  param "note" {
    default = "none"
  }
  param "note" { # ERROR: Duplicate param
  }
  agent "fixer" {
    prompt = "Fix ${join(", ", param.issues)} (${param.note})."
  }
  gate {
    rule "done" {
      when = "self.status == 'completed' && len(param.issues) > 0"
    }
    otherwise {
      fail   = "fail"
      reason = "not fixed"
    }
  }
}

template "nested" {
  use = template.fix # ERROR: Template uses a template
  step "inner" { # ERROR: Nested step in a template
    shell {
      script = "true"
    }
  }
}

template "idle" {
  shell {
    script = "true"
  }
}

step "ok" {
  use  = template.fix
  with = { issues = ["a"] }
  next = "unknown_template"
}

step "unknown_template" {
  use  = template.fxi # ERROR: Reference to undeclared template
  next = "not_a_template"
}

step "not_a_template" {
  use  = prompt.fix # ERROR: Invalid use
  next = "missing"
}

step "missing" {
  use  = template.fix # ERROR: Missing argument
  next = "unknown_arg"
}

step "unknown_arg" {
  use  = template.fix
  with = { issues = ["a"], isues = [] } # ERROR: Unknown argument
  next = "wrong_type"
}

step "wrong_type" {
  use  = template.fix
  with = { issues = { a = 1 } } # ERROR: Argument of the wrong type
  next = "stray_with"
}

step "stray_with" {
  with = { issues = [] } # ERROR: with without use
  shell {
    script = "true"
  }
  next = "outside"
}

step "outside" {
  shell {
    script = "echo ${param.note}" # ERROR: Unknown variable
  }
  next = "args_block"
}

step "args_block" {
  use = template.fix # ERROR: Missing argument
  next = "by_index"
  with { # ERROR: with is an attribute
    issues = []
  }
}

step "by_index" {
  use = template["fix"] # ERROR: Invalid use
}
