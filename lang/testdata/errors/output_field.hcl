playbook "output_field" {
  description = "Reading a field the step's returns does not declare."
}

step "rate" {
  returns = object({
    alignment_score = number
  })
  shell {
    command = ["rate"]
    parse   = "json"
  }
  gate {
    rule "pass" {
      when = "steps.rate.output.alignmnet_score >= 7" # ERROR: Invalid condition
      log  = "Score: ${steps.rate.output.alignmnet_score}" # ERROR: Unknown output field
    }
    rule "status" {
      when = "steps.rate.stauts == 'ok'" # ERROR: Invalid condition
    }
    otherwise {
      fail = "halt"
    }
  }
}
