# The pipeline, in the protocol's order (spec/protocols.md#the-pipeline). Each agent step declares
# the JSON its prompt asks for (returns) and the answer a dry run gives it
# (example): the happy path. What the steps read out of files is in
# locals.hcl.

# A mini-verifier's answer for one task: the same shape after each task
# (STEP 3) and for each task of a batch (STEP 3-BATCH).
type "task_verdict" {
  type = object({
    task_id = string
    pass    = bool
    criteria_results = list(object({
      criterion      = string
      status         = string
      evidence       = optional(string)
      command        = optional(string)
      command_output = optional(string)
    }))
    concerns     = list(string)
    commands_run = list(string)
  })
  example = { task_id = "01-01", pass = true, criteria_results = [{ criterion = "tests pass", status = "pass" }], concerns = [], commands_run = ["go test ./... -> ok"] }
}

# Phase Directory Resolution: Glob('.planning/phases/*{phase_id}*'), never
# a fixed directory name (local.phase_dir).
step "locate" {
  description = "Find the phase directory."
  call "glob" {
    pattern = ".planning/phases/*${inputs.phase_id}*"
  }
}

# The commit the phase starts from, when no checkpoint is given: what the
# agents compare the phase's changes with (local.diff_base).
step "base" {
  when              = "inputs.last_checkpoint_sha == ''"
  skip_reason       = "last_checkpoint_sha given"
  continue_on_error = true
  call "git.head" {}
}

# STEP 0: PRE-FLIGHT, by the phase runner itself: the spec's hash, the
# dependencies' EXECUTION-LOG.md, unresolved debug files and git status.
step "spec_hash" {
  when              = "inputs.spec_path != ''"
  skip_reason       = "no spec_path given"
  continue_on_error = true
  call "file.sha256" {
    path = inputs.spec_path
  }
}

step "dependencies" {
  when        = "len(inputs.completed_phase_dirs) > 0"
  skip_reason = "no completed phases"
  call "glob" {
    pattern = ".planning/phases/*/EXECUTION-LOG.md"
  }
}

step "debug_files" {
  call "glob" {
    pattern = ".planning/debug/*.md"
  }
}

step "preflight" {
  progress          = "PREFLIGHT"
  continue_on_error = true
  call "git.status" {}
  gate {
    # Special case: a spec hash mismatch fails at once, with both hashes.
    rule "spec_hash_mismatch" {
      when = "inputs.spec_hash != '' && steps.spec_hash.status == 'completed' && steps.spec_hash.output?.sha256 != inputs.spec_hash"
      set = {
        issues = ["spec_hash_mismatch", "expected: ${inputs.spec_hash}", "actual: ${steps.spec_hash.output.sha256}"]
      }
      fail   = "halt"
      reason = "Preflight failed: spec_hash_mismatch (expected ${inputs.spec_hash}, actual ${steps.spec_hash.output.sha256})"
    }
    rule "all_clear" {
      when = "len(local.preflight_issues) == 0 && len(local.unresolved_debug) == 0"
    }
    rule "unresolved_debug" {
      when = "len(local.preflight_issues) == 0"
      log  = "Unresolved debug files: ${join(", ", local.unresolved_debug)}."
    }
    otherwise {
      set    = { issues = [for i in local.preflight_issues : "Preflight failed: ${i}"] }
      fail   = "halt"
      reason = "Preflight failed: ${join("; ", local.preflight_issues)}"
    }
  }
}

# The roadmap, for the phase's name, goal and description when the
# inputs do not give them (with an existing plan or in remediation, for
# those alone: triage_source reads PLAN.md then).
step "roadmap" {
  when        = "local.use_plan && inputs.roadmap_path != ''"
  skip_reason = "triage_source reads the roadmap, or there is none"
  call "file.read" {
    path = inputs.roadmap_path
  }
}

# STEP 0.5: TRIAGE, by the phase runner itself. The criteria come from
# PLAN.md (existing_plan, remediation) or the roadmap's entry for this
# phase (local.criteria).
step "triage_source" {
  when        = "local.use_plan || inputs.roadmap_path != ''"
  skip_reason = "no PLAN.md and no roadmap_path: no verifiable criteria"
  call "file.read" {
    path = local.use_plan ? "${local.phase_dir}/PLAN.md" : inputs.roadmap_path
  }
}

# Each criterion's command runs against the codebase (60 s, the sandbox's
# default); an item that passes completes, one that fails fails.
step "triage" {
  progress = "TRIAGE"
  # The routing is local.routing, which triage_log's gate reads too: the
  # template is evaluated before any gate.
  progress_done = "Routing: ${local.routing}"
  for_each      = "local.criteria"
  # A failing criterion is a finding, not a failure of the run: the gate
  # routes on the counts.
  on_item_failure = "continue"

  step "criterion" {
    continue_on_error = true
    shell {
      command = ["bash", "-c", item.command]
    }
    gate {
      rule "pass" {
        when = "steps.criterion.status == 'completed'"
      }
      otherwise {
        fail   = "fail"
        reason = substr(steps.criterion.error, 0, 200)
      }
    }
  }

  gate {
    rule "no_criteria" {
      when = "local.triage_total == 0"
      log  = "No verifiable criteria for triage -- routing to full pipeline."
    }
    otherwise {
      log = "Triage: ${steps.triage.output.completed}/${local.triage_total} criteria pass (pass ratio ${local.pass_ratio})."
    }
  }
}

# TRIAGE.json, written on both routes.
step "triage_log" {
  call "file.write" {
    path = "${local.phase_dir}/TRIAGE.json"
    content = jsonencode({
      phase_id         = inputs.phase_id
      timestamp        = timestamp()
      criteria_source  = local.triage_source
      criteria_checked = local.criteria_checked
      total_criteria   = local.triage_total
      passed_criteria  = steps.triage.output.completed
      pass_ratio       = local.pass_ratio
      routing_decision = local.routing
      skipped_steps    = local.routing == "verify_only" ? ["research", "plan", "plan_check", "execute"] : []
      note             = local.triage_total == 0 ? "no verifiable criteria for triage" : local.routing == "verify_only" ? "likely_implemented" : ""
    })
  }
  gate {
    rule "verify_only" {
      when = "local.routing == 'verify_only'"
      goto = "verify"
    }
    otherwise {}
  }
}

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

# STEP 3: EXECUTE, one task at a time: executor, mini-verifier,
# at most 2 debug attempts (autopilot-debugger, gsd-debugger when it is
# unavailable), then FAILED and on to the next task. APL_ITEM_KEY is the
# task id.
step "execute" {
  progress       = "EXECUTE"
  progress_start = "-- ${length(local.auto_tasks)} tasks"
  progress_done  = "${steps.execute.output.completed}/${length(local.auto_tasks)} tasks."
  for_each       = "local.auto_tasks"
  key            = "item.id"
  next           = "verify"
  # A task FAILED after its debug attempts is logged and left to verify:
  # the next task still runs and the run goes on.
  on_item_failure = "continue"

  step "execution_log" {
    call "file.read" {
      path = "${local.phase_dir}/EXECUTION-LOG.md"
    }
    log = "Task ${item.id} (${item.position}/${length(local.auto_tasks)}): ${item.description}"
  }

  step "execute_task" {
    timeout = "30m"
    returns = object({
      tasks_completed = string
      tasks_failed    = string
      commit_shas     = list(string)
      evidence = list(object({
        task_id      = string
        criteria_met = list(string)
        commands_run = list(string)
      }))
      deviations = list(string)
    })
    example = { tasks_completed = "1/1", tasks_failed = "0/1", commit_shas = ["a1b2c3d"], evidence = [{ task_id = "01-01", criteria_met = ["criterion -- file:1 -- found"], commands_run = ["go test ./... -> ok"] }], deviations = [] }
    agent "executor" {
      prompt = prompt.execute
      vars = {
        task_id          = item.id
        task_description = item.description
        prior_tasks      = steps.execution_log.output.exists && trimspace(steps.execution_log.output.content) != "" ? steps.execution_log.output.content : "This is the first task."
      }
    }
  }

  step "mini_verify" {
    timeout = "10m"
    returns = type.task_verdict
    agent "mini_verifier" {
      prompt = prompt.mini_verify
      vars = {
        task_id          = item.id
        task_description = item.description
        files            = length(item.files) > 0 ? join(", ", item.files) : "see the task's commit: git show --stat HEAD"
        criteria         = length(item.criteria) > 0 ? join("\n", item.criteria) : "(PLAN.md lists no \"-- verified by:\" criterion for this task: check its <verify> and <done> elements)"
      }
    }
    check "evidence" {
      condition = "len(steps.mini_verify.output.commands_run) > 0"
      message   = "commands_run is empty: run every verification command yourself and list it with its result."
    }
    gate {
      rule "verified" {
        when = "steps.mini_verify.output.pass"
        log  = "Task ${item.id}: VERIFIED"
        goto = "task_log"
      }
      otherwise {
        log  = "Task ${item.id}: FAILED -- ${join("; ", [for r in steps.mini_verify.output.criteria_results : r.criterion if r.status != "pass"])}"
        goto = "task_debug"
        max  = 2
        on_exhausted {
          goto = "task_failed"
        }
      }
    }
  }

  step "task_debug" {
    timeout           = "30m"
    continue_on_error = true
    returns = object({
      fixed            = bool
      changes          = list(string)
      commits          = list(string)
      remaining_issues = list(string)
      failure_categories = list(object({
        failure  = string
        category = string
      }))
    })
    example = { fixed = true, changes = ["fixed the criterion"], commits = ["b2c3d4e"], remaining_issues = [], failure_categories = [] }
    agent "debugger" {
      prompt = prompt.debug
      # What the mini-verifier found: the criteria that failed, with their
      # evidence, and its concerns; the commands that failed.
      vars = {
        task_id          = item.id
        task_description = item.description
        issues = concat(
          [for r in steps.mini_verify.output.criteria_results : "${r.criterion}: ${try(coalesce(r.evidence, ""), "") != "" ? r.evidence : "failed"}" if r.status != "pass"],
          [for c in steps.mini_verify.output.concerns : "concern: ${c}"],
        )
        failing_checks = [for r in steps.mini_verify.output.criteria_results : "`${r.command}` -> ${try(coalesce(r.command_output, ""), "") != "" ? r.command_output : "failed"}" if r.status != "pass" && try(r.command != null && r.command != "", false)]
      }
      # When autopilot-debugger is not available (its call could not
      # run), gsd-debugger makes the same attempt.
      fallback    = ["gsd_debugger"]
      fallback_on = ["unavailable", "exit_status", "other"]
    }
    next = "mini_verify"
  }

  # The mini_verification section of the task's EXECUTION-LOG.md entry
  # (the entry's mini_verification section), after the executor's own.
  step "task_log" {
    call "file.append" {
      path    = "${local.phase_dir}/EXECUTION-LOG.md"
      content = <<-EOT
        - **Mini-Verification:**
          - **Result:** PASS
          - **Criteria checked:** ${length(steps.mini_verify.output.criteria_results)}
          - **Criteria passed:** ${length([for r in steps.mini_verify.output.criteria_results : r if r.status == "pass"])}
          - **Failures:** None
          - **Debug attempts:** ${steps.task_debug.attempts}
      EOT
    }
    # The orchestrator's task_completed {task, commit}: the executor's commit, and
    # the debuggers' after it.
    gate {
      otherwise {
        event = "task_completed"
        details = {
          task           = item.id
          commit         = try(steps.execute_task.output.commit_shas[0], null)
          commits        = concat(steps.execute_task.output.commit_shas, try(steps.task_debug.output.commits, []))
          debug_attempts = steps.task_debug.attempts
        }
        finish = "verified"
      }
    }
  }

  step "task_failed" {
    call "file.append" {
      path    = "${local.phase_dir}/EXECUTION-LOG.md"
      content = <<-EOT
        ### Task ${item.id}: ${item.description}
        - **Status:** FAILED
        - **Mini-Verification:**
          - **Result:** FAIL
          - **Criteria checked:** ${length(steps.mini_verify.output.criteria_results)}
          - **Criteria passed:** ${length([for r in steps.mini_verify.output.criteria_results : r if r.status == "pass"])}
          - **Failures:** ${join("; ", [for r in steps.mini_verify.output.criteria_results : r.criterion if r.status != "pass"])}
          - **Debug attempts:** ${steps.task_debug.attempts}
      EOT
    }
    gate {
      otherwise {
        event = "task_failed"
        details = {
          task           = item.id
          failures       = [for r in steps.mini_verify.output.criteria_results : r.criterion if r.status != "pass"]
          debug_attempts = steps.task_debug.attempts
        }
        fail   = "task_failed"
        reason = "Task ${item.id} still fails after 2 debug attempts: ${join("; ", [for r in steps.mini_verify.output.criteria_results : r.criterion if r.status != "pass"])}"
      }
    }
  }
}

# STEP 3's batch fallback (and remediation): one executor for all tasks,
# then a mini-verifier per task of PLAN.md.
step "execute_batch" {
  timeout = "60m"
  returns = object({
    tasks_completed = string
    tasks_failed    = string
    commit_shas     = list(string)
    evidence = list(object({
      task_id      = string
      criteria_met = list(string)
      commands_run = list(string)
    }))
    deviations = list(string)
  })
  example = { tasks_completed = "1/1", tasks_failed = "0/1", commit_shas = ["a1b2c3d"], evidence = [], deviations = [] }
  agent "executor" {
    prompt = prompt.execute
    vars = {
      task_id          = ""
      task_description = ""
      prior_tasks      = ""
    }
  }
}

step "batch_verify" {
  when     = "!local.remediation"
  for_each = "local.auto_tasks"
  key      = "item.id"
  # A task failing its mini-verification is a finding for verify, not a
  # failure of the run.
  on_item_failure = "continue"

  step "batch_mini_verify" {
    timeout = "10m"
    returns = type.task_verdict
    agent "mini_verifier" {
      prompt = prompt.mini_verify
      vars = {
        task_id          = item.id
        task_description = item.description
        files            = length(item.files) > 0 ? join(", ", item.files) : "see the task's entry in EXECUTION-LOG.md"
        criteria         = length(item.criteria) > 0 ? join("\n", item.criteria) : "(PLAN.md lists no \"-- verified by:\" criterion for this task: check its <verify> and <done> elements)"
      }
    }
    check "evidence" {
      condition = "len(steps.batch_mini_verify.output.commands_run) > 0"
      message   = "commands_run is empty: run every verification command yourself and list it with its result."
    }
  }

  step "batch_task_log" {
    call "file.append" {
      path    = "${local.phase_dir}/EXECUTION-LOG.md"
      content = <<-EOT
        - **Mini-Verification (task ${item.id}):**
          - **Result:** ${steps.batch_mini_verify.output.pass ? "PASS" : "FAIL"}
          - **Criteria checked:** ${length(steps.batch_mini_verify.output.criteria_results)}
          - **Criteria passed:** ${length([for r in steps.batch_mini_verify.output.criteria_results : r if r.status == "pass"])}
          - **Failures:** ${steps.batch_mini_verify.output.pass ? "None" : join("; ", [for r in steps.batch_mini_verify.output.criteria_results : r.criterion if r.status != "pass"])}
          - **Debug attempts:** 0
      EOT
    }
    gate {
      rule "verified" {
        when    = "steps.batch_mini_verify.output.pass"
        log     = "Task ${item.id}: VERIFIED"
        event   = "task_completed"
        details = { task = item.id, commit = null, batch = true }
      }
      otherwise {
        log     = "Task ${item.id}: FAILED -- ${join("; ", [for r in steps.batch_mini_verify.output.criteria_results : r.criterion if r.status != "pass"])}"
        event   = "task_failed"
        details = { task = item.id, failures = [for r in steps.batch_mini_verify.output.criteria_results : r.criterion if r.status != "pass"], batch = true }
        fail    = "task_failed"
        reason  = "Task ${item.id} fails its mini-verification: ${join("; ", [for r in steps.batch_mini_verify.output.criteria_results : r.criterion if r.status != "pass"])}"
      }
    }
  }
}

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
    rule "rollback" {
      when    = "steps.judge.output.recommendation == 'rollback'"
      log     = "Phase ${inputs.phase_id} rollback recommended by judge. Reason: ${try(coalesce(steps.judge.output.notes, ""), join("; ", steps.judge.output.concerns))}"
      set     = { recommendation = "rollback" }
      event   = "rollback_initiated"
      details = { phase_id = inputs.phase_id, recommendation = "rollback", reason = try(coalesce(steps.judge.output.notes, ""), join("; ", steps.judge.output.concerns)) }
      goto    = "bookkeeping"
    }
    rule "halt" {
      when    = "steps.judge.output.recommendation == 'halt'"
      log     = "Phase ${inputs.phase_id} HALTED by judge. Reason: ${try(coalesce(steps.judge.output.notes, ""), join("; ", steps.judge.output.concerns))}"
      set     = { recommendation = "halt" }
      event   = "rollback_initiated"
      details = { phase_id = inputs.phase_id, recommendation = "halt", reason = try(coalesce(steps.judge.output.notes, ""), join("; ", steps.judge.output.concerns)) }
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
        log     = "Phase ${inputs.phase_id} max retries exceeded. Rolling back."
        set     = { recommendation = "halt" }
        event   = "rollback_initiated"
        details = { phase_id = inputs.phase_id, recommendation = "halt", reason = "max retries exceeded" }
        goto    = "bookkeeping"
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
        log     = "Phase ${inputs.phase_id} max retries exceeded. Rolling back."
        set     = { recommendation = "halt" }
        event   = "rollback_initiated"
        details = { phase_id = inputs.phase_id, recommendation = "halt", reason = "max retries exceeded" }
        goto    = "bookkeeping"
      }
    }
    otherwise {
      log     = "Phase ${inputs.phase_id} max retries exceeded. Rolling back."
      set     = { recommendation = "halt" }
      event   = "rollback_initiated"
      details = { phase_id = inputs.phase_id, recommendation = "halt", reason = "max retries exceeded" }
      goto    = "bookkeeping"
    }
  }
}

# STEP 5a: DEBUG, then VERIFY again. Attempt 1 gets the verifier's
# failures, later ones the previous attempt's remaining_issues. When
# autopilot-debugger is not available (its call could not run: the kinds
# unavailable, exit_status or other), gsd-debugger makes the same attempt;
# a debugger that ran and failed (timeout, budget, schema, ...) spends it.
step "debug" {
  timeout           = "30m"
  continue_on_error = true
  returns = object({
    fixed            = bool
    changes          = list(string)
    commits          = list(string)
    remaining_issues = list(string)
    failure_categories = list(object({
      failure  = string
      category = string
    }))
  })
  example = { fixed = true, changes = ["fixed the failing check"], commits = ["c3d4e5f"], remaining_issues = [], failure_categories = [] }
  agent "debugger" {
    prompt = prompt.debug
    vars = {
      task_id          = ""
      task_description = ""
      issues           = local.debug_issues
      failing_checks   = local.failing_checks
    }
    fallback    = ["gsd_debugger"]
    fallback_on = ["unavailable", "exit_status", "other"]
  }
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

# ROLLBACK: a diagnostic branch, then revert to the last checkpoint,
# preserving history. Never git reset --hard.
#
# The protocol's own bookkeeping is committed before the phase ends,
# either way. Once the executor has committed EXECUTION-LOG.md, the
# mini-verification sections the phase runner appends to it are
# uncommitted changes to a tracked file: git.revert refuses to roll back
# over them, and the next phase's pre-flight finds the tree unclean. So
# the tracked files of the phase directory are committed here: on a pass
# the checkpoint (STEP 6) includes them; on a rollback the commit is part
# of the work the revert undoes, and the diagnostic branch keeps it.
# Changes elsewhere in the tree are not the protocol's and still stop a
# rollback. Outside a git repository the step fails and the run goes on.
step "bookkeeping" {
  continue_on_error = true
  shell {
    command = ["bash", "-c", "git add -u -- \"$1\" && { git diff --cached --quiet || git commit -q -m \"$2\"; }", "bookkeeping",
    local.phase_dir, "chore(${inputs.phase_id}): phase runner bookkeeping"]
  }
  gate {
    rule "rollback" {
      when = "(vars.recommendation ?? '') != ''"
      goto = "rollback"
    }
    otherwise {
      goto = "result"
    }
  }
}

step "rollback" {
  when              = "inputs.last_checkpoint_sha != ''"
  skip_reason       = "no last_checkpoint_sha: nothing to revert to"
  continue_on_error = true
  call "git.revert" {
    from    = inputs.last_checkpoint_sha
    branch  = "autopilot-diagnostic-phase-${inputs.phase_id}"
    message = "rollback: revert to phase ${inputs.phase_id} checkpoint"
  }
  gate {
    rule "failed" {
      when = "steps.rollback.status == 'failed'"
      log  = "Phase ${inputs.phase_id} rollback failed: ${steps.rollback.error}"
    }
    otherwise {
      event   = "rollback_completed"
      details = { phase_id = inputs.phase_id, rollback_from = inputs.last_checkpoint_sha, rollback_to = steps.rollback.output.commit, diagnostic_branch = steps.rollback.output.branch }
    }
  }
}

step "rolled_back" {
  gate {
    otherwise {
      fail   = vars.recommendation
      reason = "Phase ${inputs.phase_id} failed: ${vars.recommendation}%{if steps.rollback.status == "completed"}; rolled back to ${inputs.last_checkpoint_sha} (diagnostic branch ${steps.rollback.output.branch})%{endif}%{if steps.rollback.status == "failed"}; the rollback failed, nothing was reverted: ${steps.rollback.error}%{endif}"
    }
  }
}

# STEP 6: COMPOSE RESULT.
step "result" {
  call "git.head" {}
  log = "Phase ${inputs.phase_id} complete. Alignment: ${local.score_text}/10."
}

step "diff_stat" {
  when        = "inputs.last_checkpoint_sha != ''"
  skip_reason = "no last_checkpoint_sha"
  call "git.diff_stat" {
    from = inputs.last_checkpoint_sha
  }
}
