playbook "var_types" {
  description = "Declared vars are typed: defaults, sets and conditions are checked against the type."
}

var "attempts" {
  type    = number
  default = "none" # ERROR: Invalid default value
}

var "routing" {
  default = "full_pipeline"
}

var "attempts" { # ERROR: Duplicate var
  default = 0
}

var "plan" {
  type = object({ tasks = list(string) })
}

step "triage" {
  returns = object({ routing = string, tasks = list(string) })
  shell {
    command = ["triage"]
    parse   = "json"
  }
  gate {
    rule "route" {
      when = "vars.routing == 'verify_only'"
      set  = { routing = steps.triage.output.tasks, plan = { tasks = steps.triage.output.tasks } } # ERROR: Var set to the wrong type
      goto = "triage"
      max  = 1
      on_exhausted {
        fail = "halt"
      }
    }
    otherwise {}
  }
}

step "report" {
  when = "vars.routing + 1 > 0" # ERROR: Invalid condition
  shell {
    command = ["echo", vars.plan.taks] # ERROR: Unknown var field
  }
}

step "misspelt" {
  shell {
    command = ["echo", vars.routnig] # ERROR: Var never set
  }
}
