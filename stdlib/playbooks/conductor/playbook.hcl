# stdlib:conductor -- the parallel conductor of the implementation phase
# (spec/protocols.md#conductor), as apl runs it:
#
#   preflight (a clean git tree) -> load_tasks (tasks_file)
#   tasks: one item per task (a parent's subtasks instead of the parent),
#     ready when every task it is blocked_by completed, at most 3 at a time
#     and at most 5 haiku, 3 sonnet and 1 opus implementers at once:
#       spawn_implementer -> implement -> implemented -> review (one at a time)
#       approved, traceability holds   -> complete
#       approved, traceability fails   -> retry (VALIDATION_ERROR feedback)
#       rejected low/medium            -> retry
#       rejected high, or BLOCKED      -> escalate: no new task starts, a person decides
#       retry: same implementer, then a fresh one on sonnet, then escalated;
#         the task goes back to the queue behind fresh tasks
#   finish: every task done -> completed; otherwise needs_intervention
#
# Step names are what a command agent sees as APL_STEP (implement, review);
# APL_ITEM_KEY is the task's id. What the language cannot say yet is listed
# in README.md; tests are in tests/.

playbook "conductor" {
  description = "Run a task DAG from tasks.json with parallel implementers under per-model limits, serial reviews, a retry queue behind fresh tasks, model escalation, and a person for high-severity failures."
  version     = "0.1.0"
}

input "tasks_file" {
  type        = string
  default     = "docs/tasks.json"
  description = "The tasks planning wrote: {\"tasks\": [{id, title, status, blocked_by, model, acceptance_criteria, subtasks, test_file}]}."
}

input "state_file" {
  type        = string
  default     = "state.json"
  description = "The conductor's state.json, rewritten at every checkpoint (document.hcl); keep it out of git (.gitignore)."
}

input "technical_design" {
  type        = string
  default     = "docs/specs/TECHNICAL_DESIGN.md"
  description = "spec_paths.technical_design, passed to implementers and reviewers."
}

input "adr" {
  type        = string
  default     = "docs/specs/ADR.md"
  description = "spec_paths.adr, passed to implementers and reviewers."
}

input "max_total_attempts" {
  type        = number
  default     = 5
  description = "config.max_total_attempts: implementations of one task before it is escalated, whatever a person chose."
  validation {
    condition = "value >= 1 && value <= 10 && value == floor(value)"
    message   = "max_total_attempts is a whole number from 1 to 10."
  }
}

input "max_parallel_tasks" {
  type        = number
  default     = 3
  description = "config.max_parallel_tasks: tasks whose implementer or review runs at once."
  validation {
    condition = "value >= 1 && value == floor(value)"
    message   = "max_parallel_tasks is a whole number of at least 1."
  }
}

input "max_parallel_by_model" {
  type        = map(number)
  default     = { haiku = 5, sonnet = 3, opus = 1 }
  description = "config.max_parallel_by_model: tasks running at once per model (the escalated one once a task is escalated); a model not named has no cap of its own."
}

input "timeout_minutes" {
  type        = number
  default     = 30
  description = "config.timeout_minutes: how long an implementer may run before the attempt counts as a timeout."
  validation {
    condition = "value >= 1 && value == floor(value)"
    message   = "timeout_minutes is a whole number of at least 1."
  }
}

# The protocol's agents. Implementers run the task's model (escalated_model ||
# model || sonnet, computed per call in steps.hcl); reviews always sonnet.
# They run Claude Code; apl run --agent-cmd sends them elsewhere.

agent "implementer" {
  type        = "homerun-implement"
  driver      = "claude-code"
  description = "Implements one task (the homerun:implement skill)."
}

agent "reviewer" {
  type        = "homerun-review"
  driver      = "claude-code"
  model       = "sonnet"
  description = "Reviews one implementation (the homerun:review skill); always sonnet."
}
