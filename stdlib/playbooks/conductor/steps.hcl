# The implementation loop ("Loop Flow (Reactive Scheduler)"). apl's
# for_each is the scheduler: it polls, finds ready tasks and spawns within
# the limits; the steps below say what happens to one task.
#
# Run-wide vars, each a map from task id (set by the gates below, kept in
# the state, read by the output):
#   models      escalated_model (haiku -> sonnet on high severity, sonnet
#               for the fresh attempt)
#   feedback    the accumulated feedback of rejected or failed attempts
#   attempts    implementation attempts started
#   status      the task's final status when it is not plain completed
#   started_at, completed_at, trace (traceability errors and warnings),
#   stage       implementing or pending_review (for parallel_state)
# and skill_log, blocked_by_failure, failure_severity and created_at as in
# the protocol's state.json (document.hcl).

step "preflight" {
  description = "Pre-Spawn Verification: the working tree is clean before any agent is spawned."
  # The state file this run writes does not count.
  locals {
    dirty = [for f in steps.preflight.output.files : f.path if !contains([inputs.state_file, "${inputs.state_file}.bak"], f.path)]
  }
  call "git.status" {}
  gate {
    rule "dirty" {
      when   = "len(local.dirty) > 0"
      fail   = "dirty_worktree"
      reason = "the working tree has uncommitted changes (${join(", ", local.dirty)}); commit or stash them first"
    }
    otherwise {
      set = {
        models             = {}
        feedback           = {}
        attempts           = {}
        started_at         = {}
        completed_at       = {}
        trace              = {}
        stage              = {}
        skill_log          = []
        blocked_by_failure = false
        failure_severity   = null
        created_at         = timestamp()
      }
    }
  }
}

step "load_tasks" {
  description = "Read tasks_file."
  call "json.read" {
    path = inputs.tasks_file
  }
  gate {
    rule "invalid" {
      when   = "type(local.file_tasks) != 'array' || !all(local.file_tasks, {type(#) == 'map' && #.id != nil})"
      fail   = "invalid_tasks_file"
      reason = "${inputs.tasks_file} holds no task list: want {\"tasks\": [{\"id\": ..., ...}]}"
    }
    otherwise {
      log = "${length(local.items)} task(s) to run, ${length(local.done)} already done."
    }
  }
}

step "tasks" {
  description     = "Run every task: implement in parallel, review one at a time."
  for_each        = "local.items"
  key             = "item.id"
  depends_on      = "item.blocked_by"
  concurrency     = inputs.max_parallel_tasks
  on_item_failure = "continue"
  # A deadlock fails this step; finish says what it means.
  continue_on_error = true

  # config.max_parallel_by_model, counted by the model the task runs on
  # now: an escalated task counts against its new model.
  limit "model" {
    key = "vars.models[item.id] ?? item.model"
    max = inputs.max_parallel_by_model
  }

  # validateBeforeSpawn and logSkillInvocation("homerun:implement").
  step "spawn_implementer" {
    gate {
      rule "invalid" {
        when   = "item.title == '' || length(item.acceptance_criteria) == 0"
        fail   = "validation_error"
        reason = "task ${item.id}: ${join("; ", compact([item.title == "" ? "Task missing 'title' field" : "", length(item.acceptance_criteria) == 0 ? "Task missing acceptance criteria" : ""]))}"
      }
      otherwise {
        append = {
          skill_log  = [{ skill = "homerun:implement", timestamp = timestamp(), phase = "implementation", task = item.id }]
          started_at = { (item.id) = timestamp() }
          attempts   = { (item.id) = item_attempt }
          stage      = { (item.id) = "implementing" }
        }
      }
    }
  }

  # The implementer: escalated_model || model || sonnet. Attempts 1 and 2
  # are the same implementer (its session continues with the feedback);
  # after a failed call or from attempt 3 a fresh one.
  step "implement" {
    timeout           = "${inputs.timeout_minutes}m"
    continue_on_error = true
    # What a dry run answers. It addresses no acceptance criteria, so a
    # dry run's tasks go round the retry table; --mocks walks other paths.
    example = { signal = "IMPLEMENTATION_COMPLETE", files_changed = [], acceptance_criteria_met = [] }
    returns = object({
      signal        = string
      files_changed = optional(list(string))
      test_file     = optional(string)
      commit_hash   = optional(string)
      acceptance_criteria_met = optional(list(object({
        criterion     = string
        test_location = optional(string)
      })))
      reason  = optional(string)
      errors  = optional(any)
      summary = optional(string)
    })
    agent "implementer" {
      prompt  = prompt.implement
      model   = try(vars.models[item.id], item.model)
      session = item_attempt == 2 && steps.implement.error == "" ? steps.implement.session_id : ""
      vars = {
        input = {
          task = {
            id                  = item.id
            title               = item.title
            objective           = item.objective
            acceptance_criteria = [for ac in item.acceptance_criteria : { id = try(ac.id, null), criterion = try(ac.criterion, ac.text, null) }]
            test_file           = item.test_file
            task_type           = item.task_type
          }
          methodology       = item.methodology
          spec_paths        = { technical_design = inputs.technical_design, adr = inputs.adr }
          previous_feedback = try(vars.feedback[item.id], [])
          worktree_path     = run.workdir
          model             = try(vars.models[item.id], item.model)
        }
      }
    }
    check "signal" {
      condition = "steps.implement.output.signal in ['IMPLEMENTATION_COMPLETE', 'IMPLEMENTATION_BLOCKED', 'VALIDATION_ERROR']"
      message   = "signal must be IMPLEMENTATION_COMPLETE, IMPLEMENTATION_BLOCKED or VALIDATION_ERROR"
    }
  }

  # processCompletions: a failed call (timeout, no JSON, a bad signal) is a
  # failed attempt; BLOCKED goes to a person; COMPLETE is checked for
  # traceability (kept for the review's verdict) and queued for review.
  step "implemented" {
    gate {
      rule "failed" {
        when = "steps.implement.error != ''"
        log  = "Task ${item.id}: attempt ${item_attempt} failed (${steps.implement.error_kind}): ${steps.implement.error}"
        append = {
          feedback = { (item.id) = [{
            attempt        = item_attempt
            kind           = steps.implement.error_kind == "timeout" ? "timeout" : "implementer_error"
            severity       = "medium"
            summary        = steps.implement.error
            issues         = []
            required_fixes = []
          }] }
        }
        goto = "retry"
      }
      rule "blocked" {
        when = "steps.implement.output.signal == 'IMPLEMENTATION_BLOCKED'"
        log  = "Task ${item.id} is blocked: ${coalesce(steps.implement.output.reason, steps.implement.output.summary, "no reason given")}"
        set = {
          blocked_by_failure = true
          failure_severity   = "blocked"
        }
        goto = "escalate"
      }
      rule "validation_error" {
        when   = "steps.implement.output.signal == 'VALIDATION_ERROR'"
        fail   = "validation_error"
        reason = "task ${item.id}: the implementer could not process its input: ${jsonencode(steps.implement.output.errors)}"
      }
      otherwise {
        set = {
          trace = merge(vars.trace, { (item.id) = {
            errors = concat(
              [for ac in item.acceptance_criteria : {
                type      = "ac_not_addressed"
                criterion = try(ac.id, null)
                message   = "Acceptance criterion \"${try(ac.id, ac.criterion, "")}\" not in implementation output"
              } if length([for m in coalesce(steps.implement.output.acceptance_criteria_met, []) : m if m.criterion == try(ac.id, "") || m.criterion == try(ac.criterion, "") || m.criterion == try(ac.text, "")]) == 0],
              [for f in [item.test_file] : {
                type      = "test_file_missing"
                criterion = null
                message   = "Task specifies test_file but none in output"
              } if f != null && steps.implement.output.test_file == null],
            )
            warnings = [for ac in item.acceptance_criteria : {
              type      = "ac_no_test"
              criterion = try(ac.id, null)
              message   = "Acceptance criterion \"${try(ac.id, ac.criterion, "")}\" has no test reference"
            } if length([for m in coalesce(steps.implement.output.acceptance_criteria_met, []) : m if(m.criterion == try(ac.id, "") || m.criterion == try(ac.criterion, "") || m.criterion == try(ac.text, "")) && m.test_location == null]) > 0]
          } })
        }
      }
    }
  }

  # logSkillInvocation("homerun:review"), as the task joins the review
  # queue. The task leaves running_tasks for pending_review: its slot and
  # its model's place go to the next ready task.
  step "spawn_reviewer" {
    release_slot = true
    append = {
      skill_log = [{ skill = "homerun:review", timestamp = timestamp(), phase = "implementation", task = item.id }]
      stage     = { (item.id) = "pending_review" }
    }
  }

  # The sequential review queue: one review at a time, always sonnet.
  step "review" {
    serial  = true
    timeout = "30m"
    # A rejection, as the implementer's next attempt reads it (read by the
    # gate, once the reviewer has answered).
    locals {
      rejection = {
        attempt        = item_attempt
        kind           = "review"
        severity       = coalesce(steps.review.output.severity, "medium")
        summary        = steps.review.output.summary
        issues         = steps.review.output.issues
        required_fixes = steps.review.output.required_fixes
      }
    }
    example = { signal = "APPROVED", summary = "example" }
    # Reviewer timeout: retry the review.
    retry {
      max = 1
    }
    returns = object({
      signal         = string
      severity       = optional(string)
      summary        = optional(string)
      issues         = optional(any)
      required_fixes = optional(any)
      verified       = optional(any)
      errors         = optional(any)
    })
    agent "reviewer" {
      prompt = prompt.review
      vars = {
        input = {
          task = {
            id                  = item.id
            title               = item.title
            acceptance_criteria = [for ac in item.acceptance_criteria : { id = try(ac.id, null), criterion = try(ac.criterion, ac.text, null) }]
          }
          implementation = {
            commit_hash   = steps.implement.output.commit_hash
            files_changed = steps.implement.output.files_changed
            test_file     = steps.implement.output.test_file
          }
          spec_paths    = { technical_design = inputs.technical_design, adr = inputs.adr }
          worktree_path = run.workdir
        }
      }
    }
    check "signal" {
      condition = "steps.review.output.signal in ['APPROVED', 'REJECTED', 'VALIDATION_ERROR']"
      message   = "signal must be APPROVED, REJECTED or VALIDATION_ERROR"
    }
    # handleReviewResult, by severity (a rejection without one is medium).
    gate {
      rule "approved" {
        when = "steps.review.output.signal == 'APPROVED' && length(vars.trace[item.id].errors) == 0"
        log  = "Task ${item.id} approved."
        append = {
          skill_log = [for w in [vars.trace[item.id].warnings] : { event = "traceability_warnings", task = item.id, warnings = w } if length(w) > 0]
        }
        goto = "complete"
      }
      rule "traceability" {
        when = "steps.review.output.signal == 'APPROVED'"
        log  = "Task ${item.id} approved, but traceability validation failed: ${join("; ", [for e in vars.trace[item.id].errors : e.message])}."
        append = {
          feedback = { (item.id) = [{
            attempt        = item_attempt
            kind           = "VALIDATION_ERROR"
            severity       = "medium"
            summary        = "Implementation approved but traceability validation failed"
            issues         = vars.trace[item.id].errors
            required_fixes = []
          }] }
        }
        goto = "retry"
      }
      rule "high" {
        when = <<-EXPR
          steps.review.output.signal == 'REJECTED' && (
            (steps.review.output.severity ?? 'medium') == 'high' ||
            any(steps.review.output.issues ?? [], {type(#) == 'map' && #.severity == 'high'}))
        EXPR
        log  = "Task ${item.id} rejected with high severity: ${try(steps.review.output.summary, "")}. No new tasks start; asking a person."
        set = {
          # Escalation on High-Severity Rejection: haiku -> sonnet.
          models             = merge(vars.models, { for k in [item.id] : k => "sonnet" if try(vars.models[k], item.model) == "haiku" })
          blocked_by_failure = true
          failure_severity   = "high"
        }
        append = { feedback = { (item.id) = [merge(local.rejection, { severity = "high" })] } }
        goto   = "escalate"
      }
      rule "rejected" {
        when   = "steps.review.output.signal == 'REJECTED'"
        log    = "Task ${item.id} rejected (${coalesce(steps.review.output.severity, "medium")}): ${try(steps.review.output.summary, "")}"
        append = { feedback = { (item.id) = [local.rejection] } }
        goto   = "retry"
      }
      # The reviewer's VALIDATION_ERROR: review again once, then give up.
      otherwise {
        log  = "Task ${item.id}: the reviewer could not process its input: ${jsonencode(steps.review.output.errors)}; reviewing again."
        goto = "review"
        max  = 1
        on_exhausted {
          fail   = "validation_error"
          reason = "task ${item.id}: the reviewer could not process its input twice: ${jsonencode(steps.review.output.errors)}"
        }
      }
    }
  }

  # High-Severity Escalation, and an implementer that is blocked: no new
  # task starts, running ones finish, and a person decides.
  step "escalate" {
    ask {
      question = (steps.implement.output.signal == "IMPLEMENTATION_BLOCKED"
        ? "Task ${item.id} is blocked: \"${coalesce(steps.implement.output.reason, steps.implement.output.summary, "no reason given")}\". How would you like to proceed?"
      : "Task ${item.id} failed with high severity: \"${coalesce(try(steps.review.output.summary, null), "no summary")}\". How would you like to proceed?")
      options = ["retry_with_guidance", "mark_fixed", "skip", "return_to_planning"]
      default = "retry_with_guidance"
    }
    gate {
      rule "max_total_attempts" {
        when = "steps.escalate.output == 'retry_with_guidance' && item_attempt >= inputs.max_total_attempts"
        set = {
          blocked_by_failure = false
        }
        fail   = "escalated"
        reason = "task ${item.id}: ${item_attempt} attempts (max_total_attempts ${inputs.max_total_attempts})"
      }
      rule "retry" {
        when = "steps.escalate.output == 'retry_with_guidance'"
        goto = "guidance"
      }
      rule "fixed" {
        when = "steps.escalate.output == 'mark_fixed'"
        log  = "Task ${item.id} marked as fixed by a person."
        set = {
          blocked_by_failure = false
          failure_severity   = null
        }
        goto = "complete"
      }
      rule "skip" {
        when = "steps.escalate.output == 'skip'"
        set = {
          blocked_by_failure = false
          failure_severity   = null
        }
        finish = "skipped"
        reason = "skipped by a person; its dependents go on"
      }
      otherwise {
        set = {
          blocked_by_failure = false
        }
        fail   = "return_to_planning"
        reason = "task ${item.id}: a person chose to return to planning"
      }
    }
  }

  # "Retry with guidance": the person's words go to the implementer as
  # feedback, and the task goes back to the queue.
  step "guidance" {
    ask {
      question = "Guidance for the implementer of task ${item.id} (${item.title}):"
      text     = true
    }
    gate {
      otherwise {
        log = "Task ${item.id}: retrying with guidance."
        set = {
          blocked_by_failure = false
          failure_severity   = null
        }
        append = {
          feedback = { (item.id) = [{
            attempt        = item_attempt
            kind           = "guidance"
            severity       = null
            summary        = steps.guidance.output
            issues         = []
            required_fixes = []
          }] }
        }
        requeue = "spawn_implementer"
        max     = 9
        on_exhausted {
          fail   = "escalated"
          reason = "task ${item.id}: retried too often"
        }
      }
    }
  }

  # Retry Logic: attempts 1-2 the same implementer with the feedback,
  # attempt 3 a fresh implementer on sonnet, then escalated; never more
  # than max_total_attempts. The task goes to the back of the queue, behind
  # every fresh task.
  step "retry" {
    gate {
      rule "max_total_attempts" {
        when   = "item_attempt >= inputs.max_total_attempts"
        fail   = "escalated"
        reason = "task ${item.id}: ${item_attempt} attempts (max_total_attempts ${inputs.max_total_attempts})"
      }
      rule "escalate" {
        when   = "item_attempt >= 3"
        fail   = "escalated"
        reason = "task ${item.id}: max retries exceeded (${item_attempt} attempts); needs a person"
      }
      rule "fresh" {
        when    = "item_attempt == 2"
        log     = "Task ${item.id}: back to the retry queue for a fresh implementer."
        set     = { models = merge(vars.models, { for k in [item.id] : k => "sonnet" if try(vars.models[k], item.model) != "opus" }) }
        requeue = "spawn_implementer"
        max     = 9
        on_exhausted {
          fail   = "escalated"
          reason = "task ${item.id}: retried too often"
        }
      }
      otherwise {
        log     = "Task ${item.id}: back to the retry queue for the same implementer."
        requeue = "spawn_implementer"
        max     = 9
        on_exhausted {
          fail   = "escalated"
          reason = "task ${item.id}: retried too often"
        }
      }
    }
  }

  # markTaskComplete (a parent completes with its last subtask: see
  # locals.hcl).
  step "complete" {
    log    = "Task ${item.id} completed."
    append = { completed_at = { (item.id) = timestamp() } }
  }
}

# Transition: every task completed -> completed; a deadlock, or tasks that
# failed, were escalated or are blocked -> needs_intervention; a person's
# "return to planning" -> return_to_planning.
step "finish" {
  gate {
    rule "return_to_planning" {
      when   = "any(values(steps.tasks.output?.items ?? {}), {.recommendation == 'return_to_planning'})"
      finish = "return_to_planning"
      reason = "a person chose to return to planning for ${join(", ", [for k, it in steps.tasks.output.items : k if it.recommendation == "return_to_planning"])}"
    }
    rule "deadlock" {
      when   = "length(steps.tasks.output?.deadlocked ?? []) > 0"
      fail   = "needs_intervention"
      reason = steps.tasks.error
    }
    rule "incomplete" {
      when   = "steps.tasks.error != '' || (steps.tasks.output?.failed ?? 0) + (steps.tasks.output?.blocked ?? 0) > 0"
      fail   = "needs_intervention"
      reason = steps.tasks.error != "" ? steps.tasks.error : "not every task completed: ${join(", ", [for k, s in local.task_status : "${k} ${s}" if !contains(["completed", "skipped"], s)])}"
    }
    otherwise {
      log = "Implementation complete: ${length(local.items)} task(s)."
    }
  }
}
