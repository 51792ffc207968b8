# STEP 4: VERIFY, blind; with the triage evidence on the verify_only path.
step "verify" {
  timeout       = "20m"
  progress      = "VERIFY"
  progress_done = "Result: ${steps.verify.output.pass ? "pass" : "fail"}"
  returns = object({
    pass = bool
    # status is true, false or "n/a" (a command that is not configured).
    automated_checks = object({
      compile = object({ status = any, detail = optional(string) })
      lint    = object({ status = any, detail = optional(string) })
      build   = optional(object({ status = any, detail = optional(string) }))
    })
    criteria_results = list(object({
      criterion = string
      status    = string
      evidence  = optional(string)
    }))
    verification_duration_seconds = optional(number)
    commands_run                  = list(string)
    failures                      = list(string)
    failure_categories = list(object({
      failure  = string
      category = string
    }))
    scope_creep                     = optional(list(string))
    execution_results               = optional(list(any))
    visual_test_results             = optional(any)
    autonomous_resolution_attempted = optional(bool)
    autonomous_confidence           = optional(number)
    deferral_evidence               = optional(list(any))
  })
  example = {
    pass                            = true
    automated_checks                = { compile = { status = true, detail = "ok" }, lint = { status = true, detail = "ok" }, build = { status = "n/a", detail = "no build command" } }
    criteria_results                = [{ criterion = "tests pass", status = "verified", evidence = "go test ./... -> ok" }]
    verification_duration_seconds   = 180
    commands_run                    = ["go test ./... -> ok"]
    failures                        = []
    failure_categories              = []
    scope_creep                     = []
    execution_results               = []
    autonomous_resolution_attempted = true
    autonomous_confidence           = 8
    deferral_evidence               = []
  }
  agent "verifier" {
    prompt = prompt.verify
    vars = {
      verify_only      = local.routing == "verify_only"
      criteria_checked = local.criteria_checked
    }
  }
}

# STEP 4.5: JUDGE, adversarial; at least one concern.
step "judge" {
  timeout       = "15m"
  progress      = "JUDGE"
  progress_done = "Recommendation: ${steps.judge.output.recommendation}"
  returns = object({
    recommendation       = string
    concerns             = list(string)
    independent_evidence = optional(list(string))
    verifier_agreement   = optional(bool)
    verifier_missed      = optional(list(string))
    scope_creep          = optional(list(string))
    missing_requirements = optional(list(string))
    notes                = optional(string)
  })
  example = { recommendation = "proceed", concerns = ["naming could be clearer"], independent_evidence = ["main.go:1 -- found"], verifier_agreement = true, verifier_missed = [], scope_creep = [], missing_requirements = [], notes = "The criteria are met." }
  agent "judge" {
    prompt = prompt.judge
  }
  check "concern" {
    condition = "len(steps.judge.output.concerns) > 0"
    message   = "Identify at least one concern (even if minor) to prove independent examination."
  }
  check "recommendation" {
    condition = "steps.judge.output.recommendation in ['proceed', 'debug', 'rollback', 'halt']"
    message   = "recommendation is one of proceed, debug, rollback or halt."
  }
}

# STEP 4.6: RATE, context-isolated: the authoritative alignment score, in
# decimal precision, with evidence.
step "rate" {
  timeout  = "15m"
  progress = "RATE"
  # x.x/10: 9.0 decodes to 9, so a whole score is given its decimal.
  progress_done = "Score: ${local.score_text}/10"
  returns = object({
    alignment_score = number
    # Every criterion is scored: a null score is rejected here (and
    # re-asked), not passed to the orchestrator's remediation feedback.
    scorecard = list(object({
      criterion            = string
      score                = number
      max_score            = optional(number)
      verification_command = optional(string)
      command_output       = optional(string)
      evidence             = optional(string)
      justification        = optional(string)
      execution_result     = optional(any)
    }))
    aggregate_justification = optional(string)
    side_effects            = optional(list(string))
    commands_run            = list(string)
    test_coverage           = optional(any)
    score_band              = optional(string)
  })
  example = { alignment_score = 9.2, scorecard = [], aggregate_justification = "All criteria met.", side_effects = [], commands_run = ["go test ./... -> ok"], score_band = "good" }
  agent "rater" {
    prompt = prompt.rate
  }
  # "If it is an integer (no decimal point), reject the rating": 9.0 and 9
  # decode to the same number, so the answer's text is read.
  check "decimal" {
    condition = "steps.rate.raw matches '\"alignment_score\"[[:space:]]*:[[:space:]]*-?[0-9]+[.][0-9]'"
    message   = "All scores MUST use decimal precision (x.x/10 format): write alignment_score as ${steps.rate.output.alignment_score}.0 or with its decimal, not as an integer."
    max       = 2
  }
  check "evidence" {
    condition = "len(steps.rate.output.commands_run) > 0"
    message   = "An empty commands_run list is rejected as rubber-stamping: run every verification command and list it."
  }
  # The round's record, for the issues and the post-mortem.
  set = {
    history = concat(local.history, [{
      timestamp = steps.verify.started_at
      step      = "verify"
      attempt   = steps.verify.attempts
      event     = "Verify round ${steps.verify.attempts}: checks ${local.checks_pass ? "pass" : "fail"}, alignment ${steps.rate.output.alignment_score}/10, judge: ${steps.judge.output.recommendation}"
      status    = local.checks_pass && length(steps.verify.output.failures) == 0 && steps.judge.output.recommendation == "proceed" ? "success" : "failure"
      issues = concat(
        local.failing_checks,
        steps.verify.output.failures,
        steps.judge.output.recommendation == "proceed" ? [] : ["judge recommends ${steps.judge.output.recommendation}: ${join("; ", steps.judge.output.concerns)}"],
      )
      category  = try(steps.verify.output.failure_categories[0].category, "")
      given     = []
      changes   = []
      commits   = []
      remaining = []
    }])
  }
}

# STEP 5: GATE DECISION. Rules are tried in order; the first match wins.
step "gate" {
  gate {
    # The judge's rollback or halt: the phase stops and rolls back.
    rule "judge_stops" {
      when    = "steps.judge.output.recommendation in ['rollback', 'halt']"
      log     = "Phase ${inputs.phase_id} ${steps.judge.output.recommendation == "rollback" ? "rollback recommended" : "HALTED"} by judge. Reason: ${local.judge_reason}"
      set     = { recommendation = steps.judge.output.recommendation }
      event   = "rollback_initiated"
      details = { phase_id = inputs.phase_id, recommendation = steps.judge.output.recommendation, reason = local.judge_reason }
      goto    = "bookkeeping"
    }
    # Human-verify checkpoint, Cases 1 and 2: checkpoint tasks the
    # verifier could not resolve autonomously (autonomous_confidence < 6).
    rule "human_verify" {
      when   = <<-EXPR
        len(local.checkpoint_tasks) > 0
        && (steps.verify.output.autonomous_confidence ?? 10) < 6
        && len(steps.verify.output.deferral_evidence ?? []) > 0
      EXPR
      log    = "Phase ${inputs.phase_id} needs human verification."
      finish = "needs_human_verification"
      reason = "autonomous_confidence ${steps.verify.output.autonomous_confidence} < 6 for ${join(", ", [for t in local.checkpoint_tasks : t.id])}"
    }
    rule "pass" {
      when = <<-EXPR
        local.checks_pass
        && len(steps.verify.output.commands_run) > 0
        && steps.rate.output.alignment_score >= inputs.pass_threshold
        && steps.judge.output.recommendation == 'proceed'
      EXPR
      log  = "Phase ${inputs.phase_id} PASSED. Proceeding."
      goto = "bookkeeping"
    }
    rule "below_threshold" {
      when = <<-EXPR
        local.checks_pass
        && len(steps.verify.output.commands_run) > 0
        && steps.rate.output.alignment_score >= 7
        && steps.rate.output.alignment_score < inputs.pass_threshold
        && steps.judge.output.recommendation == 'proceed'
      EXPR
      log  = "Phase ${inputs.phase_id} completed at ${steps.rate.output.alignment_score}/10 (threshold: ${inputs.pass_threshold}). Returning to orchestrator for remediation decision."
      goto = "bookkeeping"
    }
    # An empty commands_run is rubber-stamping: a warning, and the debug
    # loop re-runs verification. "1 re-plan + 1 debug" is a cap too.
    rule "debug" {
      when    = <<-EXPR
        (!local.checks_pass || steps.judge.output.recommendation == 'debug' || len(steps.verify.output.commands_run) == 0)
        && steps.debug.attempts < inputs.max_debug_attempts
        && !((vars.replans ?? 0) >= 1 && steps.debug.attempts >= 1)
      EXPR
      log     = "Phase ${inputs.phase_id} has failing checks. Entering debug loop.%{if length(steps.verify.output.commands_run) == 0} (warning: the verifier's commands_run is empty)%{endif}"
      event   = "debug_attempt"
      details = { phase_id = inputs.phase_id, attempt = steps.debug.attempts + 1, failing_checks = local.failing_checks, failures = steps.verify.output.failures }
      goto    = "debug"
      # The condition stops at max_debug_attempts; the cap bounds the loop
      # for apl graph and plan (a cap is at least 1).
      max = max(inputs.max_debug_attempts, 1)
      on_exhausted {
        goto = "give_up"
      }
    }
    rule "replan" {
      when    = <<-EXPR
        steps.rate.output.alignment_score < 7
        && local.checks_pass
        && (vars.replans ?? 0) < inputs.max_replan_attempts
      EXPR
      log     = "Phase ${inputs.phase_id} alignment too low (${steps.rate.output.alignment_score}). Re-planning."
      set     = { replans = try(vars.replans, 0) + 1 }
      event   = "replan_attempt"
      details = { phase_id = inputs.phase_id, attempt = vars.replans, alignment_score = steps.rate.output.alignment_score }
      goto    = "research"
      max     = max(inputs.max_replan_attempts, 1)
      on_exhausted {
        goto = "give_up"
      }
    }
    otherwise {
      goto = "give_up"
    }
  }
}

# Out of debug and re-plan attempts: halt, and roll back.
step "give_up" {
  log     = "Phase ${inputs.phase_id} max retries exceeded. Rolling back."
  set     = { recommendation = "halt" }
  event   = "rollback_initiated"
  details = { phase_id = inputs.phase_id, recommendation = "halt", reason = "max retries exceeded" }
  next    = "bookkeeping"
}

# STEP 5a: DEBUG, then VERIFY again. Attempt 1 gets the verifier's
# failures, later ones the previous attempt's remaining_issues. When
# autopilot-debugger is not available (its call could not run: the kinds
# unavailable, exit_status or other), gsd-debugger makes the same attempt;
# a debugger that ran and failed (timeout, budget, schema, ...) spends it.
step "debug" {
  use  = template.debugger
  with = { issues = local.debug_issues, failing_checks = local.failing_checks }
  gate {
    # Context exhaustion ends the phase: HANDOFF.md (failure.hcl).
    rule "context_exhausted" {
      when   = "steps.debug.error_kind == 'budget'"
      set    = { recommendation = "halt" }
      fail   = "halt"
      reason = "context_exhaustion during debug: ${steps.debug.error}"
    }
    otherwise {
      set = {
        history = concat(local.history, [{
          timestamp = steps.debug.started_at
          step      = "debug"
          attempt   = steps.debug.attempts
          event     = "Debug attempt ${steps.debug.attempts} (${steps.debug.agent == "gsd_debugger" ? "gsd-debugger" : "autopilot-debugger"}): %{if steps.debug.status == "failed"}failed: ${steps.debug.error}%{else}fixed=${try(steps.debug.output.fixed, false)}, ${length(try(steps.debug.output.remaining_issues, []))} remaining%{endif}"
          status    = steps.debug.status == "failed" ? "failure" : try(steps.debug.output.fixed && length(steps.debug.output.remaining_issues) == 0, false) ? "success" : "partial"
          issues    = steps.debug.status == "failed" ? ["Debug attempt ${steps.debug.attempts} failed: ${steps.debug.error}"] : [for i in try(steps.debug.output.remaining_issues, []) : "Debug attempt ${steps.debug.attempts} left: ${i}"]
          category  = try(steps.debug.output.failure_categories[0].category, "")
          given     = local.debug_issues
          changes   = try(steps.debug.output.changes, [])
          commits   = try(steps.debug.output.commits, [])
          remaining = try(steps.debug.output.remaining_issues, local.debug_issues)
        }])
      }
      goto = "verify"
    }
  }
}
