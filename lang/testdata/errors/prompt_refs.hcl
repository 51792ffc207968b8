playbook "prompt_refs" {
  description = "Prompt templates that read names nobody declared."
}

input "phase_id" {
  type = string
}

agent "planner" {
  type = "gsd-planner"
}

prompt "plan" {
  template = <<-EOT
    Plan phase ${inputs.phase_id}.
    Goal: ${inputs.phase_goal} # ERROR: Reference to undeclared input
    Score: ${steps.rate.output.score} # ERROR: Reference to undeclared step
    Item: ${item} # ERROR: Unknown variable
    Run: ${run.mood} # ERROR: Unknown run attribute
    Env: ${env.HOME} # ERROR: Unknown variable
  EOT
}

prompt "review" {
  template = file("prompts/review.md")
}

prompt "review_again" {
  description = "The same file as review's, which each block reads and parses on its own."
  template    = file("prompts/review.md")
}

prompt "missing" {
  template = file("prompts/missing.md") # ERROR: Cannot read prompt file
}

prompt "escape" {
  template = file("../valid/prompts/review.md") # ERROR: Path not allowed
}

step "plan" {
  agent "planner" {
    prompt = prompt.plan
  }
}

step "review" {
  agent "planner" {
    prompt = prompt.review
  }
}

step "other" {
  agent "planner" {
    prompt = prompt.missing
  }
}

step "escape" {
  agent "planner" {
    prompt = prompt.escape
  }
}

step "again" {
  agent "planner" {
    prompt = prompt.review_again
  }
}
