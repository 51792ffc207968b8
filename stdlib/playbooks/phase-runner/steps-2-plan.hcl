# STEP 1 to 2.5 and 4.7: research, plan, plan check, scope.

step "research" {
  timeout     = "20m"
  progress    = "RESEARCH"
  when        = "!inputs.existing_plan && !inputs.skip_research && !local.remediation"
  skip_reason = "existing_plan, skip_research or remediation mode"
  returns = object({
    key_findings         = list(string)
    recommended_approach = string
    risks                = list(string)
    open_questions       = list(string)
  })
  example = { key_findings = ["The phase builds on the existing loader."], recommended_approach = "Extend the loader.", risks = [], open_questions = [] }
  agent "researcher" {
    prompt = prompt.research
    vars = {
      previous_score  = try(steps.rate.output.alignment_score, null)
      previous_issues = try(steps.verify.output.failures, [])
      missing         = try(steps.judge.output.missing_requirements == null ? [] : steps.judge.output.missing_requirements, [])
    }
  }
}

# STEP 2: PLAN; again after a failed plan check, with its issues.
step "plan" {
  timeout     = "20m"
  progress    = "PLAN"
  when        = "!local.remediation && (!inputs.existing_plan || steps.plan_check.attempts > 0)"
  skip_reason = "existing_plan or remediation mode"
  returns = object({
    plans_created = number
    waves         = number
    total_tasks   = number
    complexity    = string
    dependencies  = list(string)
    concerns      = list(string)
  })
  example = { plans_created = 1, waves = 1, total_tasks = 1, complexity = "simple", dependencies = [], concerns = [] }
  agent "planner" {
    prompt = prompt.plan
    vars = {
      checker_issues = try(steps.plan_check.output.pass, true) ? [] : steps.plan_check.output.issues
    }
  }
}

# STEP 2.5: PLAN CHECK: pass and confidence >= 7, at most 3 checks.
step "plan_check" {
  timeout       = "10m"
  progress      = "PLAN-CHECK"
  progress_done = "Confidence: ${steps.plan_check.output.confidence}/10"
  returns = object({
    pass = bool
    issues = list(object({
      plan        = optional(string)
      dimension   = optional(string)
      severity    = string
      description = string
      fix_hint    = optional(string)
    }))
    confidence    = number
    blocker_count = optional(number)
    warning_count = optional(number)
  })
  example = { pass = true, issues = [], confidence = 8, blocker_count = 0, warning_count = 0 }
  agent "plan_checker" {
    prompt = prompt.plan_check
  }
  gate {
    rule "pass" {
      when = "steps.plan_check.output.pass && steps.plan_check.output.confidence >= 7"
    }
    otherwise {
      log  = "Plan check failed (confidence ${steps.plan_check.output.confidence}/10). Re-planning with the checker's issues."
      goto = "plan"
      max  = 2
      on_exhausted {
        set    = { issues = [for i in steps.plan_check.output.issues : "plan check: ${i.description}"] }
        fail   = "halt"
        reason = "plan check failed after 3 iterations"
      }
    }
  }
}

# STEP 3 reads the task list from PLAN.md (local.tasks).
step "plan_tasks" {
  call "file.read" {
    path = "${local.phase_dir}/PLAN.md"
  }
}

# STEP 4.7 after planning, and STEP 3's choice of loop. Too large a scope
# is a split request; remediation executes the feedback in one executor;
# more than 8 tasks (or none parsed) falls back to one executor for the
# batch; a plan of checkpoint tasks only (human-verify Case 2) has
# nothing to execute.
step "scope" {
  gate {
    rule "split" {
      when   = "local.split_reason != ''"
      log    = "Phase scope too large: ${local.split_reason}. Recommending split into ${length(local.sub_phases)} sub-phases."
      finish = "split_request"
      reason = "Phase scope too large: ${local.split_reason}."
    }
    rule "remediation" {
      when = "local.remediation"
      log  = "Remediation cycle ${inputs.remediation_cycle}: executing ${length(inputs.remediation_feedback)} feedback items."
      goto = "execute_batch"
    }
    rule "batch" {
      when = "len(local.tasks) == 0 || len(local.tasks) > 8"
      log  = "${length(local.tasks)} tasks parsed from PLAN.md: batch execution."
      goto = "execute_batch"
    }
    rule "checkpoints_only" {
      when = "local.pure_human_verify"
      log  = "Only checkpoint:human-verify tasks: nothing to execute."
      goto = "verify"
    }
    otherwise {}
  }
}
