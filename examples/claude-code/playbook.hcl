# A two-step code review run by Claude Code (`claude -p`), headless:
#
#   REVIEW -> TRIAGE
#
# The reviewer reads the code with Claude Code's Read and Grep tools and
# answers with JSON that matches `returns` (claude's --json-schema); the
# triage step turns the issues into a short must-fix list.
#
# With the claude CLI installed and logged in (see README.md):
#   apl run examples/claude-code --path internal/parser
# Offline, from the recorded cassette:
#   apl run examples/claude-code --replay examples/claude-code/cassette.jsonl

playbook "claude-code-review" {
  description = "Review a path with Claude Code, then triage the issues."
  version     = "0.1.0"
  exit_codes  = { completed = 0, failed = 1 }
}

input "path" {
  type        = string
  default     = "."
  description = "The file or directory to review, relative to the project root."
}

input "focus" {
  type        = string
  default     = "correctness and error handling"
  description = "What the review should look at first."
}

driver "claude" {
  type    = "claude-code"
  model   = "sonnet"
  timeout = "5m"
  options = {
    permission_mode = "acceptEdits"
    max_turns       = 8
    allowed_tools   = ["Read", "Grep"]
  }
  # claude reports its own cost; prices are used only when a backend does
  # not (USD per million tokens).
  prices = {
    "sonnet" = { input = 3, output = 15 }
  }
}

agent "reviewer" {
  type   = "code-reviewer"
  driver = "claude"
  system = "You review code. You read files; you never change them."
}

step "review" {
  progress = "REVIEW"
  returns = object({
    verdict = string
    issues = list(object({
      file     = string
      line     = number
      severity = string
      problem  = string
    }))
  })
  agent "reviewer" {
    prompt = <<-EOT
      Review the code under ${inputs.path}, looking first at ${inputs.focus}.
      Read the files you need with the Read and Grep tools.

      Answer with a verdict ("approve" or "changes_requested") and every
      issue you found: its file, line, severity ("high", "medium" or "low")
      and the problem in one sentence.
    EOT
  }
}

step "triage" {
  progress = "TRIAGE"
  returns = object({
    must_fix = list(string)
    summary  = string
  })
  agent "reviewer" {
    prompt = <<-EOT
      A review of ${inputs.path} found these issues (JSON):
      ${jsonencode(steps.review.output.issues)}

      List, as short imperative sentences, the issues that must be fixed
      before merging (high severity, or medium ones that risk data loss),
      and summarize the review in one sentence.
    EOT
  }
}

output {
  verdict  = steps.review.output.verdict
  issues   = length(steps.review.output.issues)
  must_fix = steps.triage.output.must_fix
  summary  = steps.triage.output.summary
}
