# The post-mortem and the learnings file (spec/protocols.md#failure-outcomes):
# every failed phase leaves both. A write that fails is in the return issues, and the
# run still fails with its own reason.

locals {
  # The steps in the protocol's order, and the failures recorded in them.
  pipeline = ["preflight", "triage", "research", "plan", "plan_check", "execute", "execute_batch", "verify", "judge", "rate", "debug"]
  failures = [for e in local.history : e if e.status != "success"]

  # Root cause: preflight and plan-check failures by their context, else
  # the first category recorded (debugger or verifier, chronologically),
  # else the judge's verdict.
  failed_step = (
    length(try(vars.issues, [])) > 0 && steps.plan_check.status != "completed" ? "preflight"
    : steps.plan_check.status == "completed" && !try(steps.plan_check.output.pass && steps.plan_check.output.confidence >= 7, true) && steps.execute.attempts + steps.execute_batch.attempts == 0 ? "plan_check"
    : length(local.failures) > 0 ? local.failures[0].step
    : "gate"
  )
  failure_category = (
    local.failed_step == "preflight" ? (contains(try(vars.issues, []), "spec_hash_mismatch") ? "coordination_failure" : "tool_failure")
    : local.failed_step == "plan_check" ? "coordination_failure"
    : length([for e in local.history : e if e.category != ""]) > 0 ? [for e in local.history : e.category if e.category != ""][0]
    : try(vars.recommendation == "rollback" || vars.recommendation == "halt", false) ? "executor_wrong_approach"
    : "coordination_failure"
  )
  first_observed_at = (
    length(local.failures) > 0 ? local.failures[0].timestamp
    : coalesce(try(steps[local.failed_step].ended_at, null), timestamp())
  )

  # At most 20 events: the steps before the first verify, each verify
  # round and debug attempt, and the ending.
  timeline_all = concat(
    [for s in local.pipeline : {
      timestamp = steps[s].started_at
      step      = s
      event     = "${s}: ${steps[s].status}${steps[s].attempts > 1 ? " (${steps[s].attempts} runs)" : ""}"
      status    = steps[s].status == "completed" ? "success" : "failure"
    } if steps[s].attempts > 0 && !contains(["verify", "judge", "rate", "debug"], s)],
    [for e in local.history : { timestamp = e.timestamp, step = e.step, event = e.event, status = e.status }],
    [{ timestamp = timestamp(), step = local.failed_step, event = run.reason, status = "failure" }],
  )
  timeline = slice(local.timeline_all, max(0, length(local.timeline_all) - 20), length(local.timeline_all))

  remaining_issues = flatten([for e in local.failures : e.issues])
  prevention_rule = (
    local.failed_step == "preflight" ? "Before running phase ${inputs.phase_id}, make the pre-flight pass: ${join("; ", try(vars.issues, []))}."
    : "Before re-running phase ${inputs.phase_id}, resolve: ${join("; ", distinct(concat(local.remaining_issues, try(vars.issues, []))))}."
  )
}

# Context exhaustion handoff: an agent step of the phase that
# failed as kind "budget" (its budget block could not cut the answer
# down, or a token or cost cap was reached) leaves HANDOFF.md in the phase
# directory, so that the orchestrator resumes from the tasks remaining.
locals {
  handoff_steps   = ["research", "plan", "plan_check", "execute_batch", "verify", "judge", "rate", "debug"]
  exhausted_step  = try([for s in local.handoff_steps : s if steps[s].error_kind == "budget"][0], "")
  handoff_done    = [for t in local.auto_tasks : t if contains(["completed", "verified"], try(steps.execute.output.items[t.id].status, ""))]
  handoff_left    = [for t in local.auto_tasks : t if !contains([for d in local.handoff_done : d.id], t.id)]
  handoff_last_ok = try([for s in reverse(local.pipeline) : s if steps[s].status == "completed"][0], "none")
}

on_failure {
  step "handoff" {
    when              = "local.exhausted_step != ''"
    skip_reason       = "no context exhaustion"
    continue_on_error = true
    call "file.write" {
      path    = "${local.phase_dir}/HANDOFF.md"
      content = <<-EOT
        # Phase ${inputs.phase_id} Partial Progress Handoff

        **Phase ID:** ${inputs.phase_id}
        **Reason:** Context exhaustion detected during ${local.exhausted_step}
        **Timestamp:** ${timestamp()}
        **Last Checkpoint SHA:** ${inputs.last_checkpoint_sha}

        ## Tasks Completed
        | Task ID | Status | Commit SHA | Files Modified |
        |---------|--------|------------|----------------|
        ${length(local.handoff_done) == 0 ? "| - | none | - | - |" : join("\n", [for t in local.handoff_done : "| ${t.id} | COMPLETED | ${join(", ", try(steps.execute.output.items[t.id].outputs.execute_task.commit_shas, []))} | ${length(t.files) > 0 ? join(", ", t.files) : "-"} |"])}

        ## Tasks Remaining
        | Task ID | Description | Estimated Complexity |
        |---------|-------------|---------------------|
        ${length(local.handoff_left) == 0 ? "| - | none | - |" : join("\n", [for t in local.handoff_left : "| ${t.id} | ${t.description} | ${t.complexity} |"])}

        ## Files Modified (partial list)
        ${join("\n", coalescelist(flatten([for t in local.handoff_done : [for f in t.files : "- ${f}: task ${t.id} (${t.description})"]]), ["- none"]))}

        ## Partial Progress State
        - Current step: ${local.exhausted_step}
        - Last successful operation: ${local.handoff_last_ok}
        - Issues encountered: ${steps[local.exhausted_step].error}
      EOT
    }
  }

  step "postmortem" {
    continue_on_error = true
    call "file.write" {
      path = ".autopilot/diagnostics/phase-${inputs.phase_id}-postmortem.json"
      content = jsonencode({
        phase_id   = inputs.phase_id
        phase_name = inputs.phase_name
        timestamp  = timestamp()
        status     = "failed"
        root_cause = {
          category          = local.failure_category
          description       = run.reason
          first_observed_at = local.first_observed_at
          step              = local.failed_step
        }
        timeline = local.timeline
        evidence = {
          commands_run = concat(
            flatten([for k, it in try(steps.execute.output.items, {}) : flatten([for e in try(it.outputs.execute_task.evidence, []) : e.commands_run])]),
            flatten([for e in try(steps.execute_batch.output.evidence, []) : e.commands_run]),
            try(steps.verify.output.commands_run, []),
          )
          files_checked = concat(
            flatten([for k, it in try(steps.execute.output.items, {}) : flatten([for e in try(it.outputs.execute_task.evidence, []) : e.criteria_met])]),
            [for r in try(steps.verify.output.criteria_results, []) : "${r.criterion} -- ${try(coalesce(r.evidence, ""), "")}"],
            flatten([for e in local.history : e.changes]),
          )
        }
        attempted_fixes = [for e in local.history : {
          attempt     = e.attempt
          description = join("; ", e.changes)
          commit_sha  = try(e.commits[0], null)
          resolved    = [for g in e.given : g if !contains(e.remaining, g)]
          remaining   = e.remaining
        } if e.step == "debug"]
        prevention_rule = local.prevention_rule
      })
    }
  }

  step "learnings_file" {
    call "file.read" {
      path = ".autopilot/learnings.md"
    }
  }

  step "learnings" {
    continue_on_error = true
    call "file.append" {
      path = ".autopilot/learnings.md"
      content = join("", [steps.learnings_file.output.exists ? "" : "# Learnings (current run)\n\n", <<-EOT
        ### Phase ${inputs.phase_id} failure -- ${local.failure_category}
        **Prevention rule:** ${local.prevention_rule}
        **Context:** Phase ${inputs.phase_id} (${inputs.phase_name}) failed with category `${local.failure_category}`. Recorded: ${timestamp()}.

      EOT
      ])
    }
  }
}
