# The run: learnings reset, the roadmap, the spec lock, then every phase
# through stdlib:phase-runner. Each gate outcome that is one of the
# orchestrator's domain events names it (`event` with `details`): apl's event log records it, and
# the event_log of .autopilot/state.json reads it back as run.events. The
# per-phase record it changes is vars.records[PHASE].

var "records" {
  type        = any
  default     = {}
  description = "Per phase id: started_at, status, score_history, remediation feedback and cycles, force_incomplete, diagnostic_path, ..."
}

var "spec" {
  type        = map(string)
  default     = {}
  description = "The spec lock: path, hash, locked_at."
}

var "halted" {
  type        = string
  default     = ""
  description = "The phase whose failure halts the run (unless --complete)."
}

# The learnings file is scoped to one run.
step "learnings_reset" {
  shell {
    command = ["rm", "-f", ".autopilot/learnings.md"]
  }
}

step "roadmap" {
  call "file.read" {
    path = inputs.roadmap_path
  }
  gate {
    rule "missing" {
      when   = "!steps.roadmap.output.exists"
      fail   = "halt"
      reason = "no roadmap at ${inputs.roadmap_path}"
    }
    rule "no_phases" {
      when   = "len(local.phases) == 0"
      fail   = "halt"
      reason = "the roadmap ${inputs.roadmap_path} has no phase heading (\"## Phase 1: name\")${length(inputs.phases) > 0 ? " among ${join(", ", inputs.phases)}" : ""}"
    }
    rule "unknown" {
      when   = "len(local.unknown_phases) > 0"
      fail   = "halt"
      reason = "no phase ${join(", ", local.unknown_phases)} in ${inputs.roadmap_path}"
    }
    otherwise {}
  }
}

# The spec lock (the state file's "spec"): hashed once; every phase runner
# checks the spec against it in its pre-flight.
step "spec_lock" {
  call "file.sha256" {
    path = local.spec_path
  }
  gate {
    otherwise {
      set = {
        spec = { path = local.spec_path, hash = "sha256:${steps.spec_lock.output.sha256}", locked_at = timestamp() }
      }
      log = "${length(local.phases)} phases: ${join(", ", [for p in local.phases : p.id])}; spec ${local.spec_path} locked at sha256:${substr(steps.spec_lock.output.sha256, 0, 12)}."
    }
  }
}

step "phases" {
  for_each   = "local.phases"
  key        = "item.id"
  depends_on = "item.depends_on"
  # A failed phase fails the step once the others have ended: without
  # --complete they are skipped (phase_start), with it only its dependents
  # are (blocked).
  on_item_failure = "at_end"

  step "phase_start" {
    gate {
      rule "halted" {
        when   = "vars.halted != '' && !inputs.complete"
        event  = "phase_skipped"
        log    = "Phase ${item.id} skipped: phase ${vars.halted} failed."
        finish = "skipped"
        reason = "phase ${vars.halted} failed"
        set = {
          records = merge(vars.records, { (item.id) = { status = "skipped", skip_reason = "halted_after_phase_${vars.halted}" } })
        }
        details = { phase_id = item.id, reason = "halted_after_phase_${vars.halted}" }
      }
      otherwise {
        event   = "phase_started"
        details = { phase_id = item.id, phase_name = item.name }
        set = {
          records = merge(vars.records, { (item.id) = { status = "in_progress", started_at = timestamp(), name = item.name, score_history = [], remediation_cycles = 0, force_incomplete = false, diagnostic_path = null } })
        }
      }
    }
  }

  # The last known-good checkpoint the phase runner rolls back to.
  step "checkpoint" {
    continue_on_error = true
    call "git.head" {}
  }

  # The phase runner, one phase. Its pass_threshold carries the mode down; a
  # remediation cycle passes the scorecard's deficiencies.
  step "run" {
    description       = "The phase runner for this phase."
    continue_on_error = true
    timeout           = "120m"
    max_tokens        = 500000
    playbook {
      source = "stdlib:phase-runner"
      inputs = {
        phase_id                  = item.id
        phase_name                = item.name
        phase_goal                = item.goal
        phase_description         = item.description
        spec_path                 = local.spec_path
        spec_hash                 = trimprefix(vars.spec.hash, "sha256:")
        roadmap_path              = inputs.roadmap_path
        completed_phase_summaries = join("\n", [for k, r in vars.records : "Phase ${k} (${r.name}): ${r.summary}" if try(r.status, "") == "completed"])
        # The directories of the phases completed in this run whose
        # executor ran (each has its EXECUTION-LOG.md, which the phase
        # runner's pre-flight checks).
        completed_phase_dirs = [for k, r in vars.records : r.phase_dir if try(r.status, "") == "completed" && try(r.phase_dir, null) != null && try(r.steps.execute.status, "") == "completed"]
        last_checkpoint_sha  = try(steps.checkpoint.output.sha, "")
        skip_research        = inputs.skip_research
        max_debug_attempts   = inputs.max_debug_attempts
        max_replan_attempts  = inputs.max_replan_attempts
        pass_threshold       = inputs.pass_threshold
        remediation_cycle    = vars.records[item.id].remediation_cycles
        remediation_feedback = try(vars.records[item.id].feedback, [])
      }
    }
  }

  # A remediation cycle's run closes the cycle (remediation_completed):
  # old and new score, read before score records the new one (an
  # outcome's set runs before its log and details).
  step "remediated" {
    when        = "steps.run.output?.alignment_score != nil && vars.records[item.id].remediation_cycles > 0"
    skip_reason = "not a remediation cycle"
    gate {
      otherwise {
        event   = "remediation_completed"
        log     = "Phase ${item.id} remediation cycle ${vars.records[item.id].remediation_cycles}: ${vars.records[item.id].alignment_score} -> ${steps.run.output.alignment_score}/10."
        details = { phase_id = item.id, cycle = vars.records[item.id].remediation_cycles, old_score = vars.records[item.id].alignment_score, new_score = steps.run.output.alignment_score, improved = steps.run.output.alignment_score > vars.records[item.id].alignment_score, reached_threshold = steps.run.output.alignment_score >= inputs.pass_threshold }
      }
    }
  }

  # Each run's score goes to the score history.
  step "score" {
    when = "steps.run.output?.alignment_score != nil"
    gate {
      rule "remediated" {
        when = "vars.records[item.id].remediation_cycles > 0"
        set = {
          records = merge(vars.records, { (item.id) = merge(vars.records[item.id], {
            alignment_score = steps.run.output.alignment_score
            run_seconds     = try(vars.records[item.id].run_seconds, 0) + steps.run.duration_s
            score_history   = concat(vars.records[item.id].score_history, [{ score = steps.run.output.alignment_score, timestamp = timestamp(), flag = run.mode == "quality" ? "quality" : "initial", cycle = vars.records[item.id].remediation_cycles }])
          }) })
        }
      }
      otherwise {
        set = {
          records = merge(vars.records, { (item.id) = merge(vars.records[item.id], {
            alignment_score = steps.run.output.alignment_score
            run_seconds     = try(vars.records[item.id].run_seconds, 0) + steps.run.duration_s
            score_history   = concat(vars.records[item.id].score_history, [{ score = steps.run.output.alignment_score, timestamp = timestamp(), flag = run.mode == "quality" ? "quality" : "initial", cycle = 0 }])
          }) })
        }
      }
    }
  }

  # Remediation: a phase the runner completed below the
  # threshold gets up to max_remediation_cycles remediation cycles (2; 3
  # in quality mode), fed the scorecard's
  # deductions and the judge's concerns; then it passes force_incomplete.
  #
  # The circuit breaker counts the phases' work here: a phase run that
  # ended completed, needs_human_verification or split_request made
  # progress, a failed one did not. This is the only step with
  # progress_when, so the orchestrator's own bookkeeping steps around it
  # do not count: three failed phases in a row open the breaker, which
  # stops the run even where this gate fails only the phase.
  step "assess" {
    progress_when = "steps.run.status == 'completed' && (steps.run.output?.status ?? '') in ['completed', 'needs_human_verification', 'split_request']"
    # Why a phase failed: the phase runner's error, else its summary.
    locals {
      run_error = steps.run.error != "" ? steps.run.error : try(steps.run.output.summary, "the phase runner failed")
    }
    gate {
      rule "capped" {
        when    = "steps.run.error_kind in ['budget', 'timeout']"
        event   = "phase_failed"
        details = { phase_id = item.id, reason = steps.run.error }
        set = {
          halted  = item.id
          records = merge(vars.records, { (item.id) = merge(vars.records[item.id], { status = "failed", completed_at = timestamp(), reason = steps.run.error }) })
        }
        fail   = "halt"
        reason = "phase ${item.id} hit a per-phase cap: ${steps.run.error}"
      }
      rule "failed" {
        when    = "steps.run.status == 'failed' || (steps.run.output?.status ?? 'failed') == 'failed'"
        event   = "phase_failed"
        details = { phase_id = item.id, reason = local.run_error, recommendation = try(steps.run.output.recommendation, "halt") }
        set = {
          halted  = item.id
          records = merge(vars.records, { (item.id) = merge(vars.records[item.id], { status = "failed", completed_at = timestamp(), reason = local.run_error, summary = try(steps.run.output.summary, steps.run.error) }) })
        }
        fail   = try(steps.run.output.recommendation, "halt")
        reason = "phase ${item.id} failed: ${local.run_error}"
      }
      rule "remediate" {
        when  = "steps.run.output.status == 'completed' && steps.run.output.alignment_score < inputs.pass_threshold && vars.records[item.id].remediation_cycles < inputs.max_remediation_cycles"
        event = "remediation_started"
        # set runs before log and details: they read the cycle just counted.
        log     = "Phase ${item.id} completed at ${steps.run.output.alignment_score}/10 (threshold: ${inputs.pass_threshold}): remediation cycle ${vars.records[item.id].remediation_cycles} with ${length(vars.records[item.id].feedback)} feedback items."
        details = { phase_id = item.id, cycle = vars.records[item.id].remediation_cycles, current_score = steps.run.output.alignment_score, pass_threshold = inputs.pass_threshold, feedback_items = length(vars.records[item.id].feedback) }
        set = {
          records = merge(vars.records, { (item.id) = merge(vars.records[item.id], {
            remediation_cycles = vars.records[item.id].remediation_cycles + 1
            feedback = concat(
              [for c in steps.run.output.scorecard : "${try(coalesce(c.criterion, "criterion"), "criterion")} scored ${try(coalesce(c.score, "?"), "?")}/${try(coalesce(c.max_score, 10), 10)}: ${try(coalesce(c.justification, ""), "")}${try(coalesce(c.evidence, ""), "") != "" ? " (evidence: ${c.evidence})" : ""}" if try(c.score < c.max_score, c.score < 10, true)],
              [for j in steps.run.output.judge_concerns : "Judge concern: ${j}"],
            )
            history = concat(try(vars.records[item.id].history, []), [{ cycle = vars.records[item.id].remediation_cycles, score = steps.run.output.alignment_score, changes = try(join("; ", steps.run.output.commit_shas), ""), remaining = concat([for c in steps.run.output.scorecard : try(coalesce(c.criterion, ""), "") if try(c.score < c.max_score, c.score < 10, true)], steps.run.output.judge_concerns) }])
          }) })
        }
        goto = "run"
        max  = inputs.max_remediation_cycles
        on_exhausted {
          goto = "force_incomplete"
        }
      }
      rule "exhausted" {
        when = "steps.run.output.status == 'completed' && steps.run.output.alignment_score < inputs.pass_threshold"
        goto = "force_incomplete"
      }
      otherwise {
        goto = "diagnostic"
      }
    }
  }

  # Remediation ran out below the threshold; the phase passes,
  # marked.
  step "force_incomplete" {
    gate {
      otherwise {
        event   = "force_incomplete_marked"
        log     = "Phase ${item.id} passes force_incomplete at ${steps.run.output.alignment_score}/10 after ${vars.records[item.id].remediation_cycles} remediation cycles."
        details = { phase_id = item.id, final_score = steps.run.output.alignment_score, pass_threshold = inputs.pass_threshold, remediation_cycles = vars.records[item.id].remediation_cycles, diagnostic_path = ".autopilot/diagnostics/phase-${item.id}-confidence.md" }
        set = {
          records = merge(vars.records, { (item.id) = merge(vars.records[item.id], { force_incomplete = true }) })
        }
      }
    }
  }

  # Every phase completed below 9.0 gets a confidence
  # diagnostic.
  step "diagnostic" {
    when              = "(steps.run.output?.alignment_score ?? 10) < 9.0"
    continue_on_error = true
    call "file.write" {
      path    = ".autopilot/diagnostics/phase-${item.id}-confidence.md"
      content = <<-EOT
        # Phase ${item.id} Confidence Diagnostic

        **Score:** ${steps.run.output.alignment_score}/10 (decimal, from rating agent)
        **Threshold:** ${inputs.pass_threshold}/10 (default 9.0, lenient 7.0)
        **Status:** ${vars.records[item.id].force_incomplete ? "force_incomplete" : vars.records[item.id].remediation_cycles > 0 ? "remediated_to_${steps.run.output.alignment_score}" : "passed"}

        ## Judge Concerns
        ${join("\n", [for c in steps.run.output.judge_concerns : "- ${c}"])}

        ## Acceptance Criteria Status
        | Criterion | Status | Evidence | Gap |
        |-----------|--------|----------|-----|
        ${join("\n", [for r in steps.run.output.criteria_results : "| ${try(r.criterion, "")} | ${try(r.status, "")} | ${try(coalesce(r.evidence, "-"), "-")} | ${try(r.status, "") == "verified" ? "-" : "not verified"} |"])}

        ## Automated Check Results
        | Check | Result | Details |
        |-------|--------|---------|
        ${join("\n", [for k, v in steps.run.output.automated_checks : "| ${k} | ${v == null ? "n/a" : v == true ? "pass" : v == false ? "fail" : v} | - |"])}

        ## Path to 9/10
        ${join("\n", [for i, c in [for c in steps.run.output.scorecard : c if try(c.score < c.max_score, c.score < 10, true)] : "${i + 1}. **${try(regex("[^ :]+[.][A-Za-z0-9]+", c.evidence), "(no file named)")}**: ${try(coalesce(c.justification, ""), "")} -- fixing this addresses \"${try(coalesce(c.criterion, ""), "")}\" (${try(coalesce(c.score, "?"), "?")}/${try(coalesce(c.max_score, 10), 10)})"])}

        ## Remediation History
        | Cycle | Score | Changes Made | Remaining Issues |
        |-------|-------|-------------|-----------------|
        ${join("\n", concat([for h in try(vars.records[item.id].history, []) : "| ${h.cycle == 0 ? "0 (initial)" : h.cycle} | ${h.score} | ${h.changes == "" ? "-" : h.changes} | ${join("; ", h.remaining)} |"], ["| ${vars.records[item.id].remediation_cycles} (final) | ${steps.run.output.alignment_score} | ${length(steps.run.output.commit_shas) > 0 ? join(", ", steps.run.output.commit_shas) : "-"} | - |"]))}
      EOT
    }
    gate {
      rule "written" {
        when    = "steps.diagnostic.status == 'completed'"
        event   = "confidence_diagnostic_written"
        details = { phase_id = item.id, alignment_score = steps.run.output.alignment_score, pass_threshold = inputs.pass_threshold, diagnostic_path = steps.diagnostic.output.path }
        set = {
          records = merge(vars.records, { (item.id) = merge(vars.records[item.id], { diagnostic_path = steps.diagnostic.output.path }) })
        }
      }
      otherwise {
        log = "Phase ${item.id}: the confidence diagnostic was not written: ${steps.diagnostic.error}"
      }
    }
  }

  # The phase's record, and how the item ends: a phase that needs human
  # verification or a split ends with that status (its dependents run).
  step "phase_done" {
    # The phase's record, as every ending writes it.
    locals {
      phase_records = merge(vars.records, { (item.id) = merge(vars.records[item.id], {
        status                     = steps.run.output.status
        completed_at               = timestamp()
        summary                    = steps.run.output.summary
        steps                      = steps.run.output.pipeline_steps
        debug_attempts             = steps.run.output.debug_attempts
        replan_attempts            = steps.run.output.replan_attempts
        tokens_used                = steps.run.tokens
        duration_minutes           = floor(try(vars.records[item.id].run_seconds, steps.run.duration_s) / 60)
        human_verify_justification = steps.run.output.human_verify_justification
        phase_dir                  = try(steps.run.output.phase_dir, null)
      }) })
    }
    gate {
      rule "deferred" {
        when   = "steps.run.output.status == 'needs_human_verification'"
        set    = { records = local.phase_records }
        finish = "needs_human_verification"
        reason = steps.run.output.summary
      }
      rule "split" {
        when   = "steps.run.output.status == 'split_request'"
        set    = { records = local.phase_records }
        finish = "split_request"
        reason = steps.run.output.summary
      }
      otherwise {
        event   = "phase_completed"
        log     = "Phase ${item.id} ${vars.records[item.id].force_incomplete ? "passed force_incomplete" : "PASSED"} at ${steps.run.output.alignment_score}/10."
        details = { phase_id = item.id, alignment_score = steps.run.output.alignment_score, remediation_cycles = vars.records[item.id].remediation_cycles, force_incomplete = vars.records[item.id].force_incomplete }
        set     = { records = local.phase_records }
      }
    }
  }
}
