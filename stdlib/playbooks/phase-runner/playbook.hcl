# stdlib:phase-runner -- the autopilot phase runner (spec/protocols.md#phase-runner), as apl runs it:
#
#   PREFLIGHT -> TRIAGE -> [RESEARCH -> PLAN <-> PLAN CHECK (3 checks)
#     -> EXECUTE (per task: executor, mini-verify, task debug x2)]
#     -> VERIFY -> JUDGE -> RATE -> GATE -> RESULT
#   GATE (STEP 5): rollback | halt -> ROLLBACK -> failed
#                  pass | completed below threshold -> RESULT
#                  failing checks, "debug" or no evidence -> DEBUG -> VERIFY (max 3)
#                  alignment < 7 -> RESEARCH again (re-plan, max 1)
#                  retries exceeded -> ROLLBACK -> failed (halt)
#   on failure: a post-mortem and a learnings entry.
#
# Steps are named after the protocol's pipeline_steps keys. What the language
# cannot say yet is listed in README.md; tests are in tests/.

playbook "phase-runner" {
  description = "Run one phase through preflight, triage, research, plan, plan check, per-task execute, verify, judge, rate and the STEP 5 gate."
  version     = "0.1.0"
  label       = "Phase ${inputs.phase_id}"
  exit_codes  = { completed = 0, failed = 1, split_request = 0, needs_human_verification = 0 }
}

# The inputs from the orchestrator, in the protocol's order (spec/protocols.md#inputs).

input "phase_id" {
  type        = string
  flag        = "phase"
  positional  = true
  description = "The phase identifier (e.g., \"6.3\"): apl run stdlib:phase-runner 6.3, or --phase 6.3."
}

input "phase_name" {
  type        = string
  default     = ""
  description = "Human-readable phase name."
}

input "phase_goal" {
  type        = string
  default     = ""
  description = "The goal statement from the roadmap."
}

input "phase_description" {
  type        = string
  default     = ""
  description = "Full description from the roadmap."
}

input "spec_path" {
  type        = string
  default     = ""
  description = "Path to the frozen spec document."
}

input "spec_hash" {
  type        = string
  default     = ""
  description = "Expected SHA-256 hash of the frozen spec."
}

input "roadmap_path" {
  type        = string
  default     = ".planning/ROADMAP.md"
  description = "Path to the roadmap file: the phase's \"## Phase N: name\" entry gives the name, goal (a \"Goal:\" line), description and triage criteria that the inputs do not; empty reads none."
}

input "completed_phase_summaries" {
  type        = string
  default     = ""
  description = "Brief summaries from previously completed phases (may be empty)."
}

input "requirements_list" {
  type        = string
  default     = ""
  description = "Requirements mapped to this phase; empty means derive from phase goal and roadmap."
}

input "completed_phase_dirs" {
  type        = list(string)
  default     = []
  description = "The .planning/phases/XX-name/ directories of completed phases."
}

input "last_checkpoint_sha" {
  type        = string
  default     = ""
  description = "Git SHA of the last known-good checkpoint (critical for rollback)."
}

input "max_debug_attempts" {
  type        = number
  default     = 3
  description = "Maximum debug attempts allowed (the debug loop's cap)."
  validation {
    condition = "value >= 0 && value <= 10 && value == floor(value)"
    message   = "max_debug_attempts is a whole number from 0 to 10."
  }
}

input "max_replan_attempts" {
  type        = number
  default     = 1
  description = "Maximum replan attempts allowed (the re-plan loop's cap)."
  validation {
    condition = "value >= 0 && value <= 5 && value == floor(value)"
    message   = "max_replan_attempts is a whole number from 0 to 5."
  }
}

input "existing_plan" {
  type        = bool
  default     = false
  description = "A PLAN.md already exists: skip Research and Plan, go to Plan-Check."
}

input "skip_research" {
  type        = bool
  default     = false
  description = "Skip the Research step (from config.json workflow.research)."
}

input "remediation_feedback" {
  type        = list(string)
  default     = []
  description = "Specific deficiencies from judge/verifier in remediation cycles; present means remediation mode."
}

input "remediation_cycle" {
  type        = number
  default     = 0
  description = "Current remediation cycle (0 = initial run, 1-2 = remediation)."
}

input "pass_threshold" {
  type        = number
  default     = 9
  description = "Alignment score threshold for passing (9; 7 with --mode lenient, 9.5 with --mode quality)."
  validation {
    condition = "value >= 0 && value <= 10"
    message   = "pass_threshold is a score out of 10."
  }
}

input "discuss_context" {
  type        = string
  default     = ""
  description = "Set when --discuss was used: the phase's CONTEXT.md and .autopilot/discuss-context.json hold the user's decisions."
}

mode "lenient" {
  description = "Accept work at 7/10 (--lenient)."
  inputs      = { pass_threshold = 7 }
}

mode "quality" {
  description = "Demand 9.5/10 (--quality)."
  inputs      = { pass_threshold = 9.5 }
}

# The context budget table, row by row. "JSON return only" and
# "Read JSON return only" keep the JSON block; "Read SUMMARY only" keeps
# the last max_summary_lines lines.

# 0 - Pre-flight, general-purpose: 15 / 5, JSON return only. The protocol
# lets the phase runner "perform these checks directly since they are
# quick", and its split-request example reports preflight with
# agent_spawned false: steps spec_hash, dependencies, debug_files and
# preflight do, so there is no response to budget.

# 0.5 - Triage, self (phase-runner): 30 / 5, JSON return only. Triage is
# no agent here either: the phase runner runs the criteria's commands
# itself (step "triage").

# 1 - Research, gsd-phase-researcher: Read SUMMARY only.
budget "research" {
  max_response_lines = 200
  max_summary_lines  = 10
  enforcement        = "summary"
}

# 2 - Plan, gsd-planner: Read SUMMARY only.
budget "plan" {
  max_response_lines = 300
  max_summary_lines  = 10
  enforcement        = "summary"
}

# 2.5 - Plan Check, gsd-plan-checker: JSON return only.
budget "plan_check" {
  max_response_lines = 50
  max_summary_lines  = 5
  enforcement        = "json"
}

# 3 - Execute, gsd-executor: Read JSON return only.
budget "execute" {
  max_response_lines = 500
  max_summary_lines  = 15
  enforcement        = "json"
}

# 4 - Verify, gsd-verifier: JSON return only.
budget "verify" {
  max_response_lines = 200
  max_summary_lines  = 10
  enforcement        = "json"
}

# 4.5 - Judge, general-purpose: JSON return only.
budget "judge" {
  max_response_lines = 100
  max_summary_lines  = 5
  enforcement        = "json"
}

# 4.6 - Rate, general-purpose: JSON return only.
budget "rate" {
  max_response_lines = 150
  max_summary_lines  = 5
  enforcement        = "json"
}

# 5a - Debug, autopilot-debugger (fallback: gsd-debugger): JSON return only.
budget "debug" {
  max_response_lines = 200
  max_summary_lines  = 10
  enforcement        = "json"
}

# STEP 3 mini-verifier: max 30 response lines, 5 summary lines (JSON only).
budget "mini_verify" {
  max_response_lines = 30
  max_summary_lines  = 5
  enforcement        = "json"
}

# The agent types of the protocol's agent spawn table.

agent "researcher" {
  type   = "gsd-phase-researcher"
  budget = budget.research
}

agent "planner" {
  type   = "gsd-planner"
  budget = budget.plan
}

agent "plan_checker" {
  type   = "gsd-plan-checker"
  budget = budget.plan_check
}

agent "executor" {
  type   = "gsd-executor"
  budget = budget.execute
}

agent "mini_verifier" {
  type   = "general-purpose"
  budget = budget.mini_verify
}

agent "verifier" {
  type   = "gsd-verifier"
  budget = budget.verify
}

agent "judge" {
  type   = "general-purpose"
  budget = budget.judge
}

agent "rater" {
  type   = "general-purpose"
  budget = budget.rate
}

agent "debugger" {
  type   = "autopilot-debugger"
  budget = budget.debug
}

agent "gsd_debugger" {
  type        = "gsd-debugger"
  budget      = budget.debug
  description = "The fallback when autopilot-debugger is not available."
}
