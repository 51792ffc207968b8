playbook "constant_types" {
  description = ["not", "a", "string"] # ERROR: Incorrect attribute value type
  exit_codes  = { completed = 0, blocked = "two" } # ERROR: Invalid exit_codes
}

input "token" {
  type    = string
  default = ""
  flag    = ["t"] # ERROR: Incorrect attribute value type
}

budget "research" {
  max_response_lines = "many" # ERROR: Incorrect attribute value type
  max_summary_lines  = 2.5 # ERROR: Incorrect attribute value type
  enforcement        = "strict" # ERROR: Invalid enforcement
}

agent "researcher" {
  budget = budget.research
  model  = { name = "sonnet" } # ERROR: Incorrect attribute value type
}

step "s" {
  continue_on_error = "sometimes" # ERROR: Incorrect attribute value type
  progress          = ["PLAN"] # ERROR: Incorrect attribute value type
  agent "researcher" {
    prompt = "Research with ${inputs.token}."
  }
  gate {
    rule "again" {
      when = "steps.s.attempts < 3"
      goto = "s"
      max  = "three" # ERROR: Incorrect attribute value type
      on_exhausted {
        fail = "halt"
      }
    }
    otherwise {
      log = "ok"
    }
  }
}
