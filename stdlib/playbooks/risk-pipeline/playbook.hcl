# stdlib:risk-pipeline -- the risk pipeline (spec/protocols.md#risk-pipeline),
# as apl runs it:
#
#   assess (risk from the task's keywords, or --risk; --stage overrides)
#     HIGH   -> discovery -> planning -> execution -> pre_verify -> verification -> ship
#     MEDIUM ->              planning -> execution -> pre_verify -> verification -> ship
#     LOW    ->                          execution -> pre_verify -> verification -> ship
#   pre_verify: every gate command, fail-closed (a missing tool fails) -> exit 4
#   verification rejected -> execution again, at most 2 verifications -> exit 2
#   a stage fails -> exit 1; its model is unavailable -> exit 3; empty task -> exit 5
#   finally: .factory/reports/<run_id>/report.json and .factory/reports/latest
#
# Step names are the protocol's stage names (APL_STEP for an agent). What the
# language cannot say yet is listed in README.md; tests are in tests/.

playbook "risk-pipeline" {
  description = "Route a task by risk through discovery, planning, execution, mandatory pre-verify gates, verification (max 2) and ship, with a report for every outcome."
  version     = "0.1.0"
  exit_codes = {
    completed              = 0
    failed                 = 1
    stage_failed           = 1
    verification_rejected  = 2
    model_unavailable      = 3
    gate_failed            = 4
    risk_assessment_failed = 5
  }
}

# The CLI contract. TASK is the argument after the playbook
# (or --task); --cwd is apl's --workdir and --json apl's own.

input "task" {
  type        = string
  positional  = true
  description = "The task description (an empty one fails risk assessment: exit 5)."
}

input "risk" {
  type        = string
  default     = "auto"
  description = "Override the assessed risk: low, medium or high (auto: from the task's keywords)."
  validation {
    condition = "lower(value) in ['auto', 'low', 'medium', 'high']"
    message   = "risk is auto, low, medium or high."
  }
}

input "stage" {
  type        = string
  default     = "auto"
  description = "Start stage: discovery, planning, execution, verification or ship (auto: by risk)."
  validation {
    condition = "lower(value) in ['auto', 'discovery', 'planning', 'execution', 'verification', 'ship']"
    message   = "stage is auto, discovery, planning, execution, verification or ship."
  }
}

input "gate_commands" {
  type        = list(string)
  default     = ["ruff check .", "mypy ."]
  description = "The pre-verify gates, each run with bash -c before every verification; any non-zero exit (127 for a missing tool) fails the pipeline with exit 4."
  validation {
    condition = "len(value) > 0"
    message   = "the pre-verify gate is mandatory: give at least one gate command."
  }
}

# The agents of the protocol's stages, one per stage. They
# run Claude Code, whose sessions carry the protocol's session table (planning
# resumes discovery's); apl run --agent-cmd sends them elsewhere. The
# protocol's models (swe-1-5 for execution, gpt-5.3-codex for verification,
# haiku 4.5 for docs) are not set: a model is a constant, and names differ
# per backend. Fork the playbook and set model where you know yours.

agent "discovery" {
  type        = "discovery"
  driver      = "claude-code"
  description = "Stage 1: analyse the code base for a high-risk task."
}

agent "planner" {
  type        = "planner"
  driver      = "claude-code"
  description = "Stage 2: plan the change, in the discovery session."
}

agent "executor" {
  type        = "executor"
  driver      = "claude-code"
  description = "Stage 3: make the change."
}

agent "verifier" {
  type        = "verifier"
  driver      = "claude-code"
  description = "Stage 4: review the change independently."
}

agent "docs" {
  type        = "docs"
  driver      = "claude-code"
  description = "Stage 5: update CHANGELOG.md and docs when the change affects docs, an API or config."
}
