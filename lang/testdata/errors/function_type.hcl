playbook "function_type" {
  description = "A function applied to a value of the wrong type."
}

input "focus" {
  type    = list(string)
  default = []
}

step "rate" {
  returns = object({ score = number, notes = list(string) })
  agent "rater" {
    prompt = "Rate as {\"score\": 7.5, \"notes\": []}. Focus: ${join(", ", inputs.focus)}."
  }
}

step "report" {
  shell {
    script = "echo ${join("; ", steps.rate.output.score)}" # ERROR: Invalid function argument
  }
  gate {
    otherwise {
      log = "notes: ${join("; ", steps.rate.output.notes)}, ${upper(steps.rate.output.notes)}" # ERROR: Invalid function argument
    }
  }
}

agent "rater" {
  type = "claude-code"
}
