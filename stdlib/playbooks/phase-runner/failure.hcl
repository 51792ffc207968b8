# Section 3, Post-Mortem Generation (OBSV-03, OBSV-04) and the learnings
# file (LRNG-01): every failed phase leaves both (autopilot-schemas.md
# Sections 6 and 7). A write that fails is in the return issues, and the
# run still fails with its own reason.

locals {
  # The steps in the seed's order, and the failures recorded in them.
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

on_failure {
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
