playbook "contract" {
  description = "Agent steps whose prompts never name a field their returns requires."
}

agent "rater" {
  type = "gsd-rater"
}

agent "judge" {
  type   = "gsd-judge"
  system = "You judge work. End with {\"concerns\": [\"...\"]}."
}

driver "claude" {
  type = "claude-code"
}

agent "native" {
  type   = "reviewer"
  driver = "claude"
}

prompt "judge" {
  template = file("prompts/contract_judge.md")
}

# Named in the prompt, or optional: nothing to say.
step "named" {
  returns = object({ score = number, notes = optional(list(string)) })
  agent "rater" {
    prompt = "Rate the work as {\"score\": 7.5}."
  }
}

# commands_run is read back in an interpolation, which the agent never
# sees as a name, and each criterion's fields are required too.
step "rate" {
  returns = object({
    alignment_score = number
    commands_run    = list(string)
    scorecard       = list(object({ criterion = string, score = number, note = optional(string) }))
  })
  agent "rater" {
    prompt = "Score the alignment_score of the work. Last time: ${jsonencode(steps.named.output)}. Give a scorecard." # WARNING: Prompt does not name a returned field # WARNING: Prompt does not name a returned field # WARNING: Prompt does not name a returned field
  }
}

# The agent's system prompt names concerns; the prompt file never names
# recommendation.
step "judge" {
  returns = object({ recommendation = string, concerns = list(string) })
  agent "judge" {
    prompt = prompt.judge
  }
}

# A driver that hands the model the returns schema needs no names.
step "native" {
  returns = object({ verdict = string })
  agent "native" {
    prompt = "Review the change."
  }
}
