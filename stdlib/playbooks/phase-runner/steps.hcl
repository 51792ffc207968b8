# Section 2: the pipeline, in the seed's order. Each agent step declares
# the JSON its prompt asks for (returns) and the answer a dry run gives it
# (example): the happy path.

# Phase Directory Resolution: Glob('.planning/phases/*{phase_id}*'), never
# a fixed directory name. The vars set here are what every prompt reads.
step "locate" {
  description = "Find the phase directory and set the run's starting vars."
  call "glob" {
    pattern = ".planning/phases/*${inputs.phase_id}*"
  }
  gate {
    otherwise {
      set = {
        phase_dir   = try(steps.locate.output.matches[0], ".planning/phases/${inputs.phase_id}")
        phase_type  = "ui, protocol, data or mixed: classify the phase from its goal and description"
        remediation = inputs.remediation_cycle > 0 && length(inputs.remediation_feedback) > 0
        triage_text = ""
        routing     = "full_pipeline"
        pass_ratio  = 0
        tasks       = []
        replans     = 0
      }
    }
  }
}

# STEP 0: the spec's hash, computed here so that a mismatch can name both.
step "spec_hash" {
  when              = "inputs.spec_path != ''"
  skip_reason       = "no spec_path given"
  continue_on_error = true
  call "file.sha256" {
    path = inputs.spec_path
  }
}

step "preflight" {
  progress = "PREFLIGHT"
  returns = object({
    all_clear          = bool
    spec_hash_match    = bool
    working_tree_clean = bool
    dependencies_met   = bool
    unresolved_debug   = list(string)
    issues             = list(string)
  })
  example = { all_clear = true, spec_hash_match = true, working_tree_clean = true, dependencies_met = true, unresolved_debug = [], issues = [] }
  agent "preflight" {
    prompt = prompt.preflight
  }
  gate {
    # Special case: a spec hash mismatch fails with both hashes.
    rule "spec_hash_mismatch" {
      when = <<-EXPR
        !steps.preflight.output.spec_hash_match
        || (inputs.spec_hash != '' && steps.spec_hash.status == 'completed' && steps.spec_hash.output.sha256 != inputs.spec_hash)
      EXPR
      set = {
        issues = ["spec_hash_mismatch", "expected: ${inputs.spec_hash}", "actual: ${try(steps.spec_hash.output.sha256, "unknown")}"]
      }
      fail   = "halt"
      reason = "Preflight failed: spec_hash_mismatch (expected ${inputs.spec_hash}, actual ${try(steps.spec_hash.output.sha256, "unknown")})"
    }
    rule "all_clear" {
      when = "steps.preflight.output.all_clear"
    }
    otherwise {
      set    = { issues = [for i in steps.preflight.output.issues : "Preflight failed: ${i}"] }
      fail   = "halt"
      reason = "Preflight failed: ${join("; ", steps.preflight.output.issues)}"
    }
  }
}

# STEP 0.5: TRIAGE. The criteria with verification commands come from
# PLAN.md (existing_plan) or the roadmap's entry for this phase: the text
# after "Phase {phase_id}" up to the next heading.
step "triage_source" {
  when        = "inputs.existing_plan || inputs.roadmap_path != ''"
  skip_reason = "no PLAN.md and no roadmap_path: no verifiable criteria"
  call "file.read" {
    path = inputs.existing_plan ? "${vars.phase_dir}/PLAN.md" : inputs.roadmap_path
  }
  gate {
    otherwise {
      set = {
        criteria_source = inputs.existing_plan ? "plan" : "roadmap"
        triage_text = (inputs.existing_plan ? steps.triage_source.output.content
        : try(split("\n#", split("Phase ${inputs.phase_id}", steps.triage_source.output.content)[1])[0], ""))
      }
    }
  }
}

# Each criterion's command runs against the codebase (60 s, the sandbox's
# default); an item that passes completes, one that fails fails.
step "triage" {
  progress = "TRIAGE"
  for_each = "filter(split(vars.triage_text, '\\n'), # matches 'verified by: `[^`]+`')"
  key      = "item"

  step "criterion" {
    continue_on_error = true
    shell {
      command = ["bash", "-c", regex("verified by: `([^`]+)`", item)[0]]
    }
    gate {
      rule "pass" {
        when = "steps.criterion.status == 'completed'"
      }
      otherwise {
        fail   = "fail"
        reason = substr(try(steps.criterion.error, ""), 0, 200)
      }
    }
  }

  gate {
    rule "verify_only" {
      when = <<-EXPR
        steps.triage.output.completed + steps.triage.output.failed > 0
        && steps.triage.output.completed / (steps.triage.output.completed + steps.triage.output.failed) > 0.8
      EXPR
      set = {
        routing            = "verify_only"
        likely_implemented = true
        pass_ratio         = steps.triage.output.completed / (steps.triage.output.completed + steps.triage.output.failed)
        note               = ""
      }
      log = "Routing: verify_only (pass ratio ${steps.triage.output.completed}/${steps.triage.output.completed + steps.triage.output.failed})."
    }
    rule "no_criteria" {
      when = "steps.triage.output.completed + steps.triage.output.failed == 0"
      set = {
        routing            = "full_pipeline"
        likely_implemented = false
        pass_ratio         = 0
        note               = "no verifiable criteria for triage"
      }
      log = "No verifiable criteria for triage -- routing to full pipeline."
    }
    otherwise {
      set = {
        routing            = "full_pipeline"
        likely_implemented = false
        pass_ratio         = steps.triage.output.completed / (steps.triage.output.completed + steps.triage.output.failed)
        note               = ""
      }
      log = "Routing: full_pipeline."
    }
  }
}

# TRIAGE.json, written on both routes.
step "triage_log" {
  call "file.write" {
    path = "${vars.phase_dir}/TRIAGE.json"
    content = jsonencode({
      phase_id        = inputs.phase_id
      timestamp       = null
      criteria_source = vars.triage_text == "" ? "none" : vars.criteria_source
      criteria_checked = [for k, it in steps.triage.output.items : {
        criterion = trimspace(split("-- verified by:", k)[0])
        command   = regex("verified by: `([^`]+)`", k)[0]
        result    = it.status == "completed" ? "pass" : "fail"
        output    = substr(trimspace(try(it.outputs.criterion, "")), 0, 200)
      }]
      total_criteria   = steps.triage.output.completed + steps.triage.output.failed
      passed_criteria  = steps.triage.output.completed
      pass_ratio       = vars.pass_ratio
      routing_decision = vars.routing
      skipped_steps    = vars.routing == "verify_only" ? ["research", "plan", "plan_check", "execute"] : []
      note             = vars.note
    })
  }
  gate {
    rule "verify_only" {
      when = "vars.routing == 'verify_only'"
      goto = "verify"
    }
    otherwise {}
  }
}

# STEP 1: RESEARCH. On a re-plan the prompt gets the previous score.
step "research" {
  progress    = "RESEARCH"
  when        = "!inputs.existing_plan && !inputs.skip_research && !vars.remediation"
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
  progress    = "PLAN"
  when        = "!vars.remediation && (!inputs.existing_plan || steps.plan_check.attempts > 0)"
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

# STEP 3 reads the task list from PLAN.md:
# <task id="XX-YY" type="auto" complexity="simple|medium|complex">.
step "plan_tasks" {
  call "file.read" {
    path = "${vars.phase_dir}/PLAN.md"
  }
  gate {
    otherwise {
      set = {
        tasks = [for c in slice(split("<task ", steps.plan_tasks.output.content), 1, length(split("<task ", steps.plan_tasks.output.content))) : {
          id          = try(regex("^id=\"([^\"]+)\"", c)[0], "")
          type        = try(regex("type=\"([^\"]+)\"", split(">", c)[0])[0], "auto")
          complexity  = try(regex("complexity=\"([^\"]+)\"", split(">", c)[0])[0], "")
          description = try(trimspace(regex("<name>([^<]*)</name>", c)[0]), "")
          files       = try(trimspace(regex("<files>([^<]*)</files>", c)[0]), "")
          criteria    = join("\n", [for l in split("\n", split("</task>", c)[0]) : trimspace(l) if can(regex("verified by:", l))])
        }]
      }
    }
  }
}

# STEP 4.7 after planning, and STEP 3's choice of loop: more than 5
# complex tasks is a split request; more than 8 tasks (or none parsed)
# falls back to one executor for the batch.
step "scope" {
  gate {
    rule "split" {
      when   = "len(filter(vars.tasks, .complexity == 'complex')) > 5"
      log    = "Phase scope too large: ${length([for t in vars.tasks : t if t.complexity == "complex"])} complex tasks. Recommending a split."
      set    = { split_reason = "the plan has more than 5 complex tasks" }
      finish = "split_request"
      reason = "Phase scope too large. Recommending split."
    }
    rule "batch" {
      when = "len(vars.tasks) == 0 || len(vars.tasks) > 8"
      log  = "${length(vars.tasks)} tasks parsed from PLAN.md: batch execution."
      goto = "execute_batch"
    }
    otherwise {}
  }
}

# STEP 3: EXECUTE, one task at a time (PVRF-01): executor, mini-verifier,
# at most 2 debug attempts, then FAILED and on to the next task.
step "execute" {
  progress       = "EXECUTE"
  progress_start = "-- ${length(vars.tasks)} tasks"
  progress_done  = "${steps.execute.output.completed}/${length(vars.tasks)} tasks."
  for_each       = "vars.tasks"
  key            = "item.id"
  next           = "verify"

  step "execution_log" {
    call "file.read" {
      path = "${vars.phase_dir}/EXECUTION-LOG.md"
    }
  }

  step "execute_task" {
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
        prior_tasks      = steps.execution_log.output.exists ? steps.execution_log.output.content : "This is the first task."
      }
    }
  }

  step "mini_verify" {
    returns = object({
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
    agent "mini_verifier" {
      prompt = prompt.mini_verify
      vars = {
        task_id          = item.id
        task_description = item.description
        files            = join(", ", try(steps.execute_task.output.evidence[0].criteria_met, []))
        criteria         = item.criteria
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
    next    = "mini_verify"
    agent "debugger" {
      prompt = prompt.debug
      vars = {
        issues         = [for r in steps.mini_verify.output.criteria_results : "${r.criterion}: ${try(coalesce(r.evidence, ""), "")}" if r.status != "pass"]
        failing_checks = []
      }
    }
  }

  # EXECUTION-LOG.md's mini_verification section (autopilot-schemas.md
  # Section 5, PVRF-01).
  step "task_log" {
    call "file.append" {
      path    = "${vars.phase_dir}/EXECUTION-LOG.md"
      content = <<-EOT
        - **Mini-Verification (task ${item.id}):**
          - **Result:** PASS
          - **Criteria checked:** ${length(steps.mini_verify.output.criteria_results)}
          - **Criteria passed:** ${length([for r in steps.mini_verify.output.criteria_results : r if r.status == "pass"])}
          - **Failures:** None
          - **Debug attempts:** ${steps.task_debug.attempts}
      EOT
    }
    gate {
      otherwise {
        finish = "verified"
      }
    }
  }

  step "task_failed" {
    call "file.append" {
      path    = "${vars.phase_dir}/EXECUTION-LOG.md"
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
        fail   = "task_failed"
        reason = "Task ${item.id} still fails after 2 debug attempts: ${join("; ", [for r in steps.mini_verify.output.criteria_results : r.criterion if r.status != "pass"])}"
      }
    }
  }
}

# STEP 3's batch fallback: one executor for all tasks.
step "execute_batch" {
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

# STEP 4: VERIFY, blind; with the triage evidence on the verify_only path.
step "verify" {
  progress = "VERIFY"
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
      verify_only      = vars.routing == "verify_only"
      criteria_checked = [for k, it in steps.triage.output.items : { criterion = k, result = it.status == "completed" ? "pass" : "fail" }]
    }
  }
}

# STEP 4.5: JUDGE, adversarial; at least one concern.
step "judge" {
  progress = "JUDGE"
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
  progress = "RATE"
  returns = object({
    alignment_score         = number
    scorecard               = list(any)
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
  check "decimal" {
    condition = "steps.rate.output.alignment_score != floor(steps.rate.output.alignment_score)"
    message   = "All scores MUST use decimal precision (x.x/10 format); ${steps.rate.output.alignment_score} is an integer."
  }
  check "evidence" {
    condition = "len(steps.rate.output.commands_run) > 0"
    message   = "An empty commands_run list is rejected: run every verification command and list it."
  }
}

# STEP 5: GATE DECISION. Rules are tried in order; the first match wins.
step "gate" {
  gate {
    rule "rollback" {
      when = "steps.judge.output.recommendation == 'rollback'"
      log  = "Phase ${inputs.phase_id} rollback recommended by judge. Reason: ${try(coalesce(steps.judge.output.notes, ""), "")}"
      set  = { recommendation = "rollback" }
      goto = "rollback"
    }
    rule "halt" {
      when = "steps.judge.output.recommendation == 'halt'"
      log  = "Phase ${inputs.phase_id} HALTED by judge. Reason: ${try(coalesce(steps.judge.output.notes, ""), "")}"
      set  = { recommendation = "halt" }
      goto = "rollback"
    }
    # Human-verify checkpoint, Case 1: checkpoint tasks the verifier could
    # not resolve autonomously.
    rule "human_verify" {
      when   = <<-EXPR
        any(vars.tasks, .type == 'checkpoint:human-verify')
        && (steps.verify.output.autonomous_confidence ?? 10) < 6
        && len(steps.verify.output.deferral_evidence ?? []) > 0
      EXPR
      log    = "Phase ${inputs.phase_id} needs human verification."
      finish = "needs_human_verification"
      reason = "autonomous_confidence ${steps.verify.output.autonomous_confidence} < 6"
    }
    rule "pass" {
      when = <<-EXPR
        (steps.verify.output.automated_checks.compile.status != false && steps.verify.output.automated_checks.lint.status != false && (steps.verify.output.automated_checks.build?.status ?? true) != false)
        && len(steps.verify.output.commands_run) > 0
        && steps.rate.output.alignment_score >= inputs.pass_threshold
        && steps.judge.output.recommendation == 'proceed'
      EXPR
      log  = "Phase ${inputs.phase_id} PASSED. Proceeding."
      goto = "result"
    }
    rule "below_threshold" {
      when = <<-EXPR
        (steps.verify.output.automated_checks.compile.status != false && steps.verify.output.automated_checks.lint.status != false && (steps.verify.output.automated_checks.build?.status ?? true) != false)
        && len(steps.verify.output.commands_run) > 0
        && steps.rate.output.alignment_score >= 7
        && steps.rate.output.alignment_score < inputs.pass_threshold
        && steps.judge.output.recommendation == 'proceed'
      EXPR
      log  = "Phase ${inputs.phase_id} completed at ${steps.rate.output.alignment_score}/10 (threshold: ${inputs.pass_threshold}). Returning to orchestrator for remediation decision."
      goto = "result"
    }
    # An empty commands_run is rubber-stamping: a warning, and the debug
    # loop re-runs verification.
    rule "debug" {
      when = <<-EXPR
        (!(steps.verify.output.automated_checks.compile.status != false && steps.verify.output.automated_checks.lint.status != false && (steps.verify.output.automated_checks.build?.status ?? true) != false)
         || steps.judge.output.recommendation == 'debug'
         || len(steps.verify.output.commands_run) == 0)
        && steps.debug.attempts + steps.debug_fallback.attempts < inputs.max_debug_attempts
        && !(vars.replans >= 1 && steps.debug.attempts + steps.debug_fallback.attempts >= 1)
      EXPR
      log  = "Phase ${inputs.phase_id} has failing checks. Entering debug loop.%{if length(steps.verify.output.commands_run) == 0} (warning: the verifier's commands_run is empty)%{endif}"
      goto = "debug"
      max  = 3
      on_exhausted {
        log  = "Phase ${inputs.phase_id} max retries exceeded. Rolling back."
        set  = { recommendation = "halt" }
        goto = "rollback"
      }
    }
    rule "replan" {
      when = <<-EXPR
        steps.rate.output.alignment_score < 7
        && (steps.verify.output.automated_checks.compile.status != false && steps.verify.output.automated_checks.lint.status != false && (steps.verify.output.automated_checks.build?.status ?? true) != false)
        && vars.replans < inputs.max_replan_attempts
      EXPR
      log  = "Phase ${inputs.phase_id} alignment too low (${steps.rate.output.alignment_score}). Re-planning."
      set  = { replans = vars.replans + 1 }
      goto = "research"
      max  = 1
      on_exhausted {
        log  = "Phase ${inputs.phase_id} max retries exceeded. Rolling back."
        set  = { recommendation = "halt" }
        goto = "rollback"
      }
    }
    otherwise {
      log  = "Phase ${inputs.phase_id} max retries exceeded. Rolling back."
      set  = { recommendation = "halt" }
      goto = "rollback"
    }
  }
}

# STEP 5a: DEBUG, then VERIFY again. Attempt 1 gets the verifier's
# failures, later ones the previous attempt's remaining_issues.
step "debug" {
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
      issues         = length(try(steps.debug.output.remaining_issues, [])) > 0 ? steps.debug.output.remaining_issues : steps.verify.output.failures
      failing_checks = [for k, c in steps.verify.output.automated_checks : "${k}: ${try(coalesce(c.detail, ""), "")}" if try(c.status == false, false)]
    }
  }
  # autopilot-debugger not available (the call failed): gsd-debugger.
  gate {
    rule "fallback" {
      when = "steps.debug.status == 'failed'"
      log  = "autopilot-debugger failed (${steps.debug.error}); falling back to gsd-debugger."
      goto = "debug_fallback"
    }
    otherwise {
      goto = "verify"
    }
  }
}

step "debug_fallback" {
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
  next    = "verify"
  agent "gsd_debugger" {
    prompt = prompt.debug
    vars = {
      issues         = steps.verify.output.failures
      failing_checks = [for k, c in steps.verify.output.automated_checks : "${k}: ${try(coalesce(c.detail, ""), "")}" if try(c.status == false, false)]
    }
  }
}

# ROLLBACK: a diagnostic branch, then revert to the last checkpoint,
# preserving history. Never git reset --hard.
step "rollback" {
  when        = "inputs.last_checkpoint_sha != ''"
  skip_reason = "no last_checkpoint_sha: nothing to revert to"
  call "git.revert" {
    from    = inputs.last_checkpoint_sha
    branch  = "autopilot-diagnostic-phase-${inputs.phase_id}"
    message = "rollback: revert to phase ${inputs.phase_id} checkpoint"
  }
}

step "rolled_back" {
  gate {
    otherwise {
      fail   = vars.recommendation
      reason = "Phase ${inputs.phase_id} failed: ${vars.recommendation}%{if steps.rollback.status == "completed"}; rolled back to ${inputs.last_checkpoint_sha} (diagnostic branch ${steps.rollback.output.branch})%{endif}"
    }
  }
}

# STEP 6: COMPOSE RESULT.
step "result" {
  call "git.head" {}
  gate {
    otherwise {
      log = "Phase ${inputs.phase_id} complete. Alignment: ${try(steps.rate.output.alignment_score, "n/a")}/10."
    }
  }
}

step "diff_stat" {
  when        = "inputs.last_checkpoint_sha != ''"
  skip_reason = "no last_checkpoint_sha"
  call "git.diff_stat" {
    from = inputs.last_checkpoint_sha
  }
}
