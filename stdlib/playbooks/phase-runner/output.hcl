# Section 4: the return contract (orchestrator Section 4, in the shape of
# the seed's split request), printed by apl run --json.

output {
  phase           = inputs.phase_id
  status          = run.status
  alignment_score = try(steps.rate.output.alignment_score, null)
  tasks_completed = (steps.execute.status == "completed" ? "${steps.execute.output.completed}/${length(vars.tasks)}"
  : try(steps.execute_batch.output.tasks_completed, "0/0"))
  tasks_failed = (steps.execute.status == "completed" ? "${steps.execute.output.failed}/${length(vars.tasks)}"
  : try(steps.execute_batch.output.tasks_failed, "0/0"))
  commit_shas = concat(
    flatten([for k, it in try(steps.execute.output.items, {}) : try(it.outputs.execute_task.commit_shas, [])]),
    try(steps.execute_batch.output.commit_shas, []),
    try(steps.debug.output.commits, []),
  )
  automated_checks = try({ for k, c in steps.verify.output.automated_checks : k => try(c.status, null) }, {})
  issues = concat(
    try(vars.issues, []),
    [for k, it in try(steps.execute.output.items, {}) : "Task ${k} FAILED: ${it.error}" if it.status == "failed"],
    try(steps.verify.output.failures, []),
    try(steps.debug.output.remaining_issues, []),
  )
  debug_attempts  = steps.debug.attempts + steps.debug_fallback.attempts
  replan_attempts = try(vars.replans, 0)
  recommendation  = run.recommendation != "" ? run.recommendation : "proceed"
  summary = (run.status == "split_request" ? "Phase scope too large. Recommending split."
    : run.status == "failed" ? "Phase ${inputs.phase_id} failed: ${run.reason}"
  : "Phase ${inputs.phase_id} ${run.status} at ${try(steps.rate.output.alignment_score, "n/a")}/10.")
  checkpoint_sha                = try(steps.result.output.sha, null)
  verification_duration_seconds = steps.verify.status == "completed" ? steps.verify.duration_s : null
  evidence = {
    files_checked = concat(
      flatten([for k, it in try(steps.execute.output.items, {}) : flatten([for e in try(it.outputs.execute_task.evidence, []) : e.criteria_met])]),
      [for r in try(steps.verify.output.criteria_results, []) : "${r.criterion} -- ${try(coalesce(r.evidence, ""), "")}"],
    )
    commands_run     = try(steps.verify.output.commands_run, [])
    git_diff_summary = try(trimspace(element(reverse(split("\n", trimspace(steps.diff_stat.output.summary))), 0)), "")
  }
  pipeline_steps = merge(
    { for s in ["preflight", "research", "plan", "plan_check", "verify", "judge", "rate"] : s => {
      status        = steps[s].status == "completed" ? (s == "preflight" ? "pass" : "completed") : steps[s].status == "failed" ? "fail" : "skipped"
      agent_spawned = steps[s].attempts > 0
    } },
    {
      triage  = { status = try(vars.routing, "full_pipeline"), agent_spawned = false, pass_ratio = try(vars.pass_ratio, 0) }
      execute = { status = steps.execute.status == "completed" || steps.execute_batch.status == "completed" ? "completed" : "skipped", agent_spawned = steps.execute.attempts + steps.execute_batch.attempts > 0 }
    },
  )
  rollback_performed = steps.rollback.status == "completed"
  rollback_from      = steps.rollback.status == "completed" ? inputs.last_checkpoint_sha : null
  rollback_to        = try(steps.rollback.output.commit, null)
  diagnostic_branch  = try(steps.rollback.output.branch, null)
  human_verify_justification = run.status == "needs_human_verification" ? {
    checkpoint_task_id = [for t in vars.tasks : t.id if t.type == "checkpoint:human-verify"][0]
    task_description   = [for t in vars.tasks : t.description if t.type == "checkpoint:human-verify"][0]
    auto_tasks_passed  = steps.execute.output.completed
    auto_tasks_total   = length([for t in vars.tasks : t if t.type == "auto"])
  } : null
  split_details = run.status == "split_request" ? {
    reason                 = try(vars.split_reason, "")
    recommended_sub_phases = []
    total_sub_phases       = 0
    original_issue_count   = length(inputs.remediation_feedback)
  } : null
}
