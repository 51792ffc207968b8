# stdlib:orchestrator -- the autopilot orchestrator that the phase runner
# reports to (its inputs, remediation, modes), keeping the orchestrator's
# schemas (spec/protocols.md#orchestrator): .autopilot/state.json, the circuit breaker, events, traces,
# learnings, metrics and the completion report.
#
#   learnings reset -> roadmap -> spec lock
#     -> per phase, in dependency order (for_each, depends_on):
#        start -> checkpoint -> stdlib:phase-runner -> score -> assess
#        assess: failed or capped -> the phase fails (the run halts)
#                below pass_threshold -> remediation (feedback) -> run (max 2)
#                still below -> force_incomplete
#        -> confidence diagnostic (score < 9.0) -> done
#   finally: the completion report and the metrics entry.
#
# What the language cannot say yet is listed in README.md; tests are in
# tests/.

playbook "orchestrator" {
  description = "Run a roadmap's phases through stdlib:phase-runner in dependency order, with remediation cycles, .autopilot/state.json, the circuit breaker, metrics and a completion report."
  version     = "0.1.0"
  label       = "Autopilot"
  exit_codes  = { completed = 0, failed = 1 }
}

input "roadmap_path" {
  type        = string
  default     = ".planning/ROADMAP.md"
  description = "The roadmap: one heading per phase (\"## Phase 6.3: name\"), with optional \"Goal:\" and \"Depends on: Phase 6.2\" lines."
}

input "spec_path" {
  type        = string
  default     = ""
  description = "The frozen spec locked at run start (its SHA-256 goes to every phase); empty means the roadmap."
}

input "phases" {
  type        = list(string)
  default     = []
  description = "The phase ids to run, e.g. [\"6.2\", \"6.3\"]; empty runs every phase of the roadmap. Dependencies on phases not run count as met."
}

input "complete" {
  type        = bool
  default     = false
  description = "Keep running the phases that do not depend on a failed one, instead of halting at the first failure."
}

input "pass_threshold" {
  type        = number
  default     = 9
  description = "Alignment score a phase must reach (9; 7 with --mode lenient, 9.5 with --mode quality), passed down to every phase."
  validation {
    condition = "value >= 0 && value <= 10"
    message   = "pass_threshold is a score out of 10."
  }
}

input "skip_research" {
  type        = bool
  default     = false
  description = "Skip every phase's Research step (config.json workflow.research)."
}

input "max_debug_attempts" {
  type        = number
  default     = 3
  description = "Per phase (max_debug_attempts_per_phase), at most 3."
  validation {
    condition = "value >= 0 && value <= 3"
    message   = "max_debug_attempts is between 0 and 3: the phase runner's debug cap is 3."
  }
}

input "max_replan_attempts" {
  type        = number
  default     = 1
  description = "Per phase (max_replan_attempts_per_phase), 0 or 1."
  validation {
    condition = "value >= 0 && value <= 1"
    message   = "max_replan_attempts is 0 or 1: the phase runner's re-plan cap is 1."
  }
}

input "max_remediation_cycles" {
  type        = number
  default     = 2
  description = "Remediation cycles of a phase completed below pass_threshold before it passes force_incomplete (2; 3 with --mode quality)."
  validation {
    condition = "value >= 1 && value <= 5 && value == floor(value)"
    message   = "max_remediation_cycles is a whole number from 1 to 5."
  }
}

mode "lenient" {
  description = "Accept phases at 7/10 (--lenient); every phase gets pass_threshold 7."
  inputs      = { pass_threshold = 7 }
}

mode "quality" {
  description = "Demand 9.5/10 (--quality); every phase gets pass_threshold 9.5 and up to 3 remediation cycles."
  inputs      = { pass_threshold = 9.5, max_remediation_cycles = 3 }
}

# The orchestrator's run-wide caps. The per-phase caps are on the playbook
# step (steps.hcl): max_tokens 500K and a 120 minute timeout.
limits {
  timeout     = "24h"
  max_retries = 10
  max_tokens  = 5000000
}

circuit_breaker {
  no_progress = 3
  same_error  = 5
  cooldown    = "5m"
}

# phase_id on every span. The orchestrator's own spans carry
# the run's phase selection; each phase runner's sub-run has its own trace.
trace {
  attributes = {
    protocol = "autopilot"
    phase_id = join(",", inputs.phases)
  }
}
