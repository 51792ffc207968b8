# The return contract (spec/protocols.md#result, in the shape of the
# protocol's split request), printed by apl run --json.

output {
  phase = inputs.phase_id
  # The phase directory (.planning/phases/*{phase_id}*), for the
  # orchestrator's completed_phase_dirs.
  phase_dir       = local.phase_dir
  status          = run.status
  alignment_score = run.status == "needs_human_verification" && local.pure_human_verify ? null : try(steps.rate.output.alignment_score, null)
  tasks_completed = (steps.execute.status == "completed" ? "${steps.execute.output.completed}/${length(local.auto_tasks)}"
  : try(steps.execute_batch.output.tasks_completed, "0/0"))
  tasks_failed = (steps.execute.status == "completed" ? "${steps.execute.output.failed}/${length(local.auto_tasks)}"
  : try(steps.execute_batch.output.tasks_failed, "0/0"))
  commit_shas = concat(
    flatten([for k, it in try(steps.execute.output.items, {}) : try(it.outputs.execute_task.commit_shas, [])]),
    try(steps.execute_batch.output.commit_shas, []),
    flatten([for e in local.history : e.commits]),
  )
  # A tuple indexed, not a conditional: a conditional would unify the
  # three object types and turn true into "true".
  automated_checks = [
    { compile = "n/a", build = "n/a", lint = "n/a" },
    {},
    try({ for k, c in steps.verify.output.automated_checks : k => try(c.status, null) }, {}),
  ][run.status == "split_request" ? 0 : run.status == "needs_human_verification" && local.pure_human_verify ? 1 : 2]
  # Chronological: the pre-flight's or the plan check's, the failed tasks,
  # then each verify round's and debug attempt's; then a post-mortem or
  # learnings write that failed.
  issues = concat(
    try(vars.issues, []),
    [for k, it in try(steps.execute.output.items, {}) : "Task ${k} FAILED: ${it.error}" if it.status == "failed"],
    [for k, it in try(steps.batch_verify.output.items, {}) : "Task ${k} FAILED: ${it.error}" if it.status == "failed"],
    run.status == "completed" ? [] : flatten([for e in local.history : e.issues]),
    steps.rollback.status == "failed" ? ["rollback failed: ${steps.rollback.error}"] : [],
    run.status == "failed" && run.recommendation == "" && local.exhausted_step == "" ? [run.reason] : [],
    steps.handoff.status == "completed" ? ["context_exhaustion: partial progress saved to HANDOFF.md"] : [],
    steps.handoff.status == "failed" ? ["HANDOFF.md write failed: ${steps.handoff.error}"] : [],
    steps.postmortem.status == "failed" ? ["post-mortem write failed: ${steps.postmortem.error}"] : [],
    steps.learnings.status == "failed" ? ["learnings write failed: ${steps.learnings.error}"] : [],
  )
  debug_attempts  = steps.debug.attempts
  replan_attempts = try(vars.replans, 0)
  # A gate's fail is the recommendation; a failed run that no gate ended
  # (a step's error: an agent that exited non-zero, timed out or answered
  # without JSON, or ran out of context) halts.
  recommendation = run.recommendation != "" ? run.recommendation : run.status == "failed" ? "halt" : "proceed"
  summary = (run.status == "split_request" ? "Phase scope too large. Recommending split into ${length(local.sub_phases)} sub-phases."
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
    { for s in ["research", "plan", "plan_check", "verify", "judge", "rate"] : s => {
      status        = steps[s].status == "completed" ? "completed" : steps[s].status == "failed" ? "fail" : "skipped"
      agent_spawned = steps[s].attempts > 0
    } },
    {
      preflight = { status = steps.preflight.attempts == 0 ? "skipped" : length(try(vars.issues, [])) > 0 && steps.triage.attempts == 0 ? "fail" : "pass", agent_spawned = false }
      triage    = { status = local.routing, agent_spawned = false, pass_ratio = local.pass_ratio }
      execute = {
        status        = (steps.execute.attempts > 0 && length(local.auto_tasks) > 0) || steps.execute_batch.status == "completed" ? "completed" : "skipped"
        agent_spawned = (steps.execute.attempts > 0 && length(local.auto_tasks) > 0) || steps.execute_batch.attempts > 0
      }
    },
  )
  # For the orchestrator (stdlib:orchestrator): the remediation feedback
  # (the scorecard's deductions, the judge's concerns), the confidence
  # diagnostic's criteria table, and the metrics' failure histogram.
  scorecard          = try(steps.rate.output.scorecard, [])
  judge_concerns     = try(steps.judge.output.concerns, [])
  criteria_results   = try(steps.verify.output.criteria_results, [])
  failure_categories = concat(try([for f in steps.verify.output.failure_categories : f.category], []), try([for f in steps.debug.output.failure_categories : f.category], []))
  rollback_performed = steps.rollback.status == "completed"
  rollback_from      = steps.rollback.status == "completed" ? inputs.last_checkpoint_sha : null
  rollback_to        = try(steps.rollback.output.commit, null)
  diagnostic_branch  = try(steps.rollback.output.branch, null)
  human_verify_justification = run.status == "needs_human_verification" ? {
    checkpoint_task_id = local.checkpoint_tasks[0].id
    task_description   = local.checkpoint_tasks[0].description
    auto_tasks_passed  = try(steps.execute.output.completed, 0)
    auto_tasks_total   = length(local.auto_tasks)
  } : null
  deferral_evidence = run.status == "needs_human_verification" ? try(steps.verify.output.deferral_evidence, []) : null
  split_details = run.status == "split_request" ? {
    reason                 = local.split_reason
    recommended_sub_phases = local.sub_phases
    total_sub_phases       = length(local.sub_phases)
    original_issue_count   = local.remediation ? length(inputs.remediation_feedback) : length(local.tasks)
  } : null
}
