# A short phase runner (the gates of stdlib:phase-runner without its git
# steps), for the tests that run it on both engines:
#
#   PREFLIGHT -> RESEARCH -> PLAN <-> PLAN CHECK (max 3) -> EXECUTE
#     -> VERIFY -> JUDGE -> RATE -> GATE
#   GATE: pass | completed below threshold -> RESULT
#         failing checks / "debug"          -> DEBUG -> VERIFY (max 3)
#         alignment < 7                     -> RESEARCH again (re-plan, max 1)
#         judge says rollback or halt       -> ROLLBACK -> failed
#
# agent.sh answers each step from scenarios/NAME/ (SCENARIO=NAME):
#   apl run . --phase 6.3 --agent-cmd ./agent.sh

playbook "phase-gates" {
  description = "Phase runner: plan-check loop, verify/judge/rate, the STEP 5 decision tree."
  version     = "0.1.0"
  label       = "Phase ${inputs.phase_id}"
  exit_codes  = { completed = 0, failed = 1 }
}

input "phase_id" {
  type        = string
  flag        = "phase"
  description = "The phase identifier, e.g. 6.3."
}

input "phase_name" {
  type    = string
  default = "unnamed phase"
}

input "phase_goal" {
  type    = string
  default = "Implement the phase as the roadmap describes it."
}

input "pass_threshold" {
  type        = number
  default     = 9
  description = "Alignment score needed to pass (7 lenient, 9.5 quality)."
  validation {
    condition = "value >= 0 && value <= 10"
    message   = "pass_threshold is a score out of 10."
  }
}

input "skip_research" {
  type    = bool
  default = false
}

input "existing_plan" {
  type        = bool
  default     = false
  description = "A PLAN.md exists: skip research and planning, go to plan check."
}

input "last_checkpoint_sha" {
  type        = string
  default     = ""
  description = "Last known-good commit; ROLLBACK reverts to it."
}

mode "lenient" {
  description = "Accept work at 7/10."
  inputs      = { pass_threshold = 7 }
}

mode "quality" {
  description = "Demand 9.5/10."
  inputs      = { pass_threshold = 9.5 }
}

# The phase runner's context budget table.
budget "research" {
  max_response_lines = 200
  max_summary_lines  = 10
  enforcement        = "summary"
}
budget "plan" {
  max_response_lines = 300
  max_summary_lines  = 10
  enforcement        = "summary"
}
budget "plan_check" {
  max_response_lines = 50
  max_summary_lines  = 5
}
budget "execute" {
  max_response_lines = 500
  max_summary_lines  = 15
}
budget "verify" {
  max_response_lines = 200
  max_summary_lines  = 10
}
budget "judge" {
  max_response_lines = 100
  max_summary_lines  = 5
}
budget "rate" {
  max_response_lines = 150
  max_summary_lines  = 5
}
budget "debug" {
  max_response_lines = 200
  max_summary_lines  = 10
}

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

step "preflight" {
  progress = "PREFLIGHT"
  shell {
    script = "test -d . && echo all_clear"
  }
}

step "research" {
  progress    = "RESEARCH"
  when        = "!inputs.skip_research && !inputs.existing_plan"
  skip_reason = "skip_research or existing_plan is set"
  agent "researcher" {
    prompt = prompt.research
    vars = {
      previous_score  = try(steps.rate.output.alignment_score, null)
      previous_issues = try(steps.verify.output.issues, [])
    }
  }
}

step "plan" {
  progress    = "PLAN"
  when        = "!inputs.existing_plan || steps.plan_check.attempts > 0"
  skip_reason = "existing_plan is set"
  agent "planner" {
    prompt = prompt.plan
    vars = {
      checker_issues = try(steps.plan_check.output.issues, [])
    }
  }
}

step "plan_check" {
  progress = "PLAN-CHECK"
  returns = object({
    pass       = bool
    confidence = number
    issues     = list(string)
  })
  # What apl run --dry-run answers for this step: a plan that passes.
  example = { pass = true, confidence = 8, issues = [] }
  agent "plan_checker" {
    prompt = prompt.plan_check
  }
  gate {
    rule "pass" {
      when = "steps.plan_check.output.pass && steps.plan_check.output.confidence >= 7"
      log  = "Plan check passed. Confidence: ${steps.plan_check.output.confidence}/10"
    }
    otherwise {
      log  = "Plan check failed: ${join("; ", steps.plan_check.output.issues)}. Re-planning."
      goto = "plan"
      max  = 3
      on_exhausted {
        log    = "Plan check failed 3 times."
        fail   = "halt"
        reason = "plan check failed after 3 iterations"
      }
    }
  }
}

step "execute" {
  progress = "EXECUTE"
  returns = object({
    tasks_completed = number
    commits         = list(string)
    commands_run    = list(string)
  })
  example = { tasks_completed = 1, commits = ["a1b2c3d"], commands_run = ["go test ./..."] }
  agent "executor" {
    prompt = prompt.execute
  }
  # An executor that ran nothing has no evidence; ask again once.
  check "evidence" {
    condition = "len(steps.execute.output.commands_run) > 0"
    message   = "commands_run is empty: list the compile, lint and test commands you ran, with their results."
  }
}

step "verify" {
  progress = "VERIFY"
  returns = object({
    pass             = bool
    automated_checks = list(object({ name = string, pass = bool }))
    issues           = list(string)
  })
  example = { pass = true, automated_checks = [{ name = "test", pass = true }], issues = [] }
  agent "verifier" {
    prompt = prompt.verify
  }
}

step "judge" {
  progress = "JUDGE"
  returns = object({
    recommendation = string
    concerns       = list(string)
    reasoning      = string
  })
  example = { recommendation = "proceed", concerns = ["none"], reasoning = "The criteria are met." }
  agent "judge" {
    prompt = prompt.judge
  }
}

step "rate" {
  progress = "RATE"
  returns = object({
    alignment_score = number
  })
  example = { alignment_score = 9.2 }
  agent "rater" {
    prompt = prompt.rate
  }
  # STEP 4.6: scores use decimal precision; an integer is rejected.
  check "decimal" {
    condition = "steps.rate.output.alignment_score != floor(steps.rate.output.alignment_score)"
    message   = "Scores use decimal precision (x.x/10); ${steps.rate.output.alignment_score} is an integer."
  }
}

# STEP 5: the decision tree. Rules are tried in order; the first match wins.
step "gate" {
  gate {
    rule "rollback" {
      when = "steps.judge.output.recommendation == 'rollback'"
      log  = "Phase ${inputs.phase_id} rollback recommended by judge. Reason: ${steps.judge.output.reasoning}"
      set  = { recommendation = "rollback" }
      goto = "rollback"
    }
    rule "halt" {
      when = "steps.judge.output.recommendation == 'halt'"
      log  = "Phase ${inputs.phase_id} HALTED by judge. Reason: ${steps.judge.output.reasoning}"
      set  = { recommendation = "halt" }
      goto = "rollback"
    }
    rule "pass" {
      when = <<-EXPR
        all(steps.verify.output.automated_checks, .pass)
        && steps.rate.output.alignment_score >= inputs.pass_threshold
        && steps.judge.output.recommendation == 'proceed'
      EXPR
      log  = "Phase ${inputs.phase_id} PASSED. Proceeding."
      goto = "result"
    }
    rule "below_threshold" {
      when = <<-EXPR
        all(steps.verify.output.automated_checks, .pass)
        && steps.rate.output.alignment_score >= 7
        && steps.rate.output.alignment_score < inputs.pass_threshold
        && steps.judge.output.recommendation == 'proceed'
      EXPR
      log  = "Phase ${inputs.phase_id} completed at ${steps.rate.output.alignment_score}/10 (threshold: ${inputs.pass_threshold}). Returning to orchestrator for remediation decision."
      goto = "result"
    }
    rule "debug" {
      when = "!all(steps.verify.output.automated_checks, .pass) || steps.judge.output.recommendation == 'debug'"
      log  = "Phase ${inputs.phase_id} has failing checks. Entering debug loop."
      goto = "debug"
      max  = 3
      on_exhausted {
        log  = "Phase ${inputs.phase_id} max retries exceeded. Rolling back."
        set  = { recommendation = "halt" }
        goto = "rollback"
      }
    }
    rule "replan" {
      when = "steps.rate.output.alignment_score < 7"
      log  = "Phase ${inputs.phase_id} alignment too low (${steps.rate.output.alignment_score}). Re-planning."
      goto = "research"
      max  = 1
      on_exhausted {
        log  = "Phase ${inputs.phase_id} alignment still too low after a re-plan. Rolling back."
        set  = { recommendation = "halt" }
        goto = "rollback"
      }
    }
    otherwise {
      set  = { recommendation = "halt" }
      goto = "rollback"
    }
  }
}

# STEP 5a: fix failing checks, then verify again.
step "debug" {
  returns = object({
    fixed            = bool
    remaining_issues = list(string)
  })
  example = { fixed = true, remaining_issues = [] }
  next    = "verify"
  agent "debugger" {
    prompt = prompt.debug
  }
}

# Revert to the last checkpoint on a diagnostic branch; never reset --hard.
step "rollback" {
  shell {
    script = <<-EOT
      if [ -z ${inputs.last_checkpoint_sha} ]; then
        echo "no checkpoint given: nothing to revert"
        exit 0
      fi
      git branch autopilot-diagnostic-phase-${inputs.phase_id}
      git revert --no-commit ${inputs.last_checkpoint_sha}..HEAD
      git commit -m "rollback: revert to phase ${inputs.phase_id} checkpoint"
    EOT
  }
  gate {
    otherwise {
      fail   = vars.recommendation
      reason = "rolled back: ${vars.recommendation}"
    }
  }
}

# STEP 6: compose the result.
step "result" {
  shell {
    script = "git rev-parse HEAD 2>/dev/null || echo none"
  }
}

output {
  phase_id        = inputs.phase_id
  status          = run.status
  recommendation  = run.recommendation
  alignment_score = try(steps.rate.output.alignment_score, null)
  debug_attempts  = steps.debug.attempts
  replan_attempts = max(steps.research.attempts - 1, 0)
  plan_checks     = steps.plan_check.attempts
  checkpoint_sha  = try(trimspace(steps.result.output), null)
}

# Post-mortem generation: every failed phase leaves a
# post-mortem and a prevention rule for later phases.
on_failure {
  step "postmortem" {
    call "file.write" {
      path = ".autopilot/diagnostics/phase-${inputs.phase_id}-postmortem.json"
      content = jsonencode({
        phase_id         = inputs.phase_id
        run_id           = run.id
        status           = run.status
        recommendation   = run.recommendation
        reason           = run.reason
        debug_attempts   = steps.debug.attempts
        remaining_issues = try(steps.debug.output.remaining_issues, [])
        judge_concerns   = try(steps.judge.output.concerns, [])
        alignment_score  = try(steps.rate.output.alignment_score, null)
      })
    }
  }
  step "learnings" {
    call "file.append" {
      path    = ".autopilot/learnings.md"
      content = <<-EOT
        ### Phase ${inputs.phase_id} failure -- ${run.recommendation}
        **Prevention rule:** Before re-running, resolve: ${join("; ", concat(try(steps.debug.output.remaining_issues, []), try(steps.judge.output.concerns, [])))}
        **Context:** Phase ${inputs.phase_id} (${inputs.phase_name}) failed: ${run.reason}. Run ${run.id}.

      EOT
    }
  }
}
