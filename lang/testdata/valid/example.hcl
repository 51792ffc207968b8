# Examples: the outputs a dry run gives steps instead of running them.
playbook "example" {
  description = "Steps with examples."
}

agent "rater" {
  type = "general-purpose"
}

step "rate" {
  returns = object({ alignment_score = number, issues = list(string) })
  example = { alignment_score = 9.2, issues = [] }
  agent "rater" {
    prompt = "Rate, as {\"alignment_score\": 9.2, \"issues\": []}."
  }
  next = "notes"
}

step "notes" {
  example = "All good."
  agent "rater" {
    prompt = "Notes."
  }
  next = "head"
}

step "head" {
  example = "0123abc\n"
  shell {
    command = ["git", "rev-parse", "HEAD"]
  }
}
