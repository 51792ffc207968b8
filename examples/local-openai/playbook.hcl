# A commit message written and checked by a local model behind an
# OpenAI-compatible endpoint (Ollama here; vLLM, llama.cpp's server and
# LiteLLM speak the same protocol):
#
#   DRAFT -> CHECK
#
# With Ollama running and the model pulled (see README.md):
#   apl run examples/local-openai --change "Retry HTTP calls on 429 and 5xx"
# Offline, from the recorded cassette:
#   apl run examples/local-openai --replay examples/local-openai/cassette.jsonl

playbook "local-openai-commit" {
  description = "Draft a Conventional Commits message with a local model, then check it."
  version     = "0.1.0"
  exit_codes  = { completed = 0, failed = 1 }
}

input "change" {
  type        = string
  default     = "Agent HTTP drivers now retry 429 and 5xx answers, three attempts with doubling backoff, and honour Retry-After."
  description = "What changed, in a sentence or two (or paste a diff)."
}

driver "ollama" {
  type       = "openai"
  base_url   = "http://localhost:11434/v1"
  model      = "qwen2.5-coder"
  max_tokens = 1024
  timeout    = "2m"
  retries    = 3
  # A local model costs nothing; a zero price records a cost of 0 rather
  # than an unknown (null) one.
  prices = {
    "qwen2.5-coder" = { input = 0, output = 0 }
  }
}

agent "writer" {
  type   = "commit-writer"
  driver = driver.ollama
  system = "You write Conventional Commits messages. Subjects are imperative, lower case, at most 72 characters, with no final period."
}

agent "checker" {
  type   = "commit-checker"
  driver = driver.ollama
}

step "draft" {
  progress = "DRAFT"
  returns = object({
    type    = string
    scope   = string
    subject = string
    body    = string
  })
  agent "writer" {
    prompt = <<-EOT
      Write a commit message for this change:

      ${inputs.change}

      type is one of feat, fix, refactor, docs, test, chore; scope is the
      area touched, in one word; body explains why, wrapped at 72 columns.
    EOT
  }
}

step "check" {
  progress = "CHECK"
  returns = object({
    ok       = bool
    problems = list(string)
  })
  agent "checker" {
    prompt = <<-EOT
      Check this commit subject against the Conventional Commits rules
      (imperative mood, lower case, at most 72 characters, no final period):

      ${steps.draft.output.type}(${steps.draft.output.scope}): ${steps.draft.output.subject}

      Answer ok = true if it follows them all; otherwise list the problems.
    EOT
  }
}

output {
  message  = "${steps.draft.output.type}(${steps.draft.output.scope}): ${steps.draft.output.subject}\n\n${steps.draft.output.body}"
  ok       = steps.check.output.ok
  problems = steps.check.output.problems
}
