# The conductor's state.json (spec/protocols.md#conductor), written at every checkpoint:
# the tasks with their status, attempts, times and feedback,
# parallel_state, skill_log and config. apl keeps its own state in its run
# directory; this is the projection the protocol's readers expect (jq
# '.tasks[] | select(.status != "completed")' state.json). It is never
# read back: resume writes it again from apl's state.

document "state" {
  path = inputs.state_file
  content = {
    workflow_id  = run.id
    phase        = local.next_phase
    current_task = null
    spec_paths   = { technical_design = inputs.technical_design, adr = inputs.adr }
    tasks_file   = inputs.tasks_file
    # While tasks runs (or the run waits in it), the document and the
    # locals it reads see steps.tasks.output as the live table, so
    # local.task_status has in_progress for a running task.
    tasks = try([for t in local.file_tasks : merge(local.task_rows[t.id], {
      model               = coalesce(try(t.model, null), "sonnet")
      blocked_by          = try(t.blocked_by, [])
      test_file           = try(t.test_file, null)
      started_at          = try(vars.started_at[t.id], null)
      timeout_at          = try(timeadd(vars.started_at[t.id], "${inputs.timeout_minutes}m"), null)
      files_changed       = try(steps.tasks.output.items[t.id].outputs.implement.files_changed, null)
      implementer_commits = compact([try(steps.tasks.output.items[t.id].outputs.implement.commit_hash, "")])
      subtasks = [for s in local.subtasks[t.id] : merge(local.task_rows[s.id], {
        blocked_by = try(s.blocked_by, [])
        started_at = try(vars.started_at[s.id], null)
      })]
    })], [])
    parallel_state = {
      running_tasks  = [for k, s in try(vars.stage, {}) : k if try(steps.tasks.output.items[k].status, "") == "running" && s == "implementing"]
      pending_review = [for k, s in try(vars.stage, {}) : k if try(steps.tasks.output.items[k].status, "") == "running" && s == "pending_review"]
      retry_queue = [for k, n in try(vars.attempts, {}) : {
        task_id  = k
        attempts = n
        feedback = try(element(vars.feedback[k], length(vars.feedback[k]) - 1), null)
      } if try(steps.tasks.output.items[k].status, "") == "pending"]
      blocked_by_failure = try(vars.blocked_by_failure, false)
      failure_severity   = try(vars.failure_severity, null)
      # apl holds no conductor context to refresh.
      tasks_since_refresh = 0
    }
    skill_log  = try(vars.skill_log, [])
    created_at = try(vars.created_at, null)
    updated_at = timestamp()
    # The protocol's config: the limits are inputs, which steps.hcl's
    # concurrency, limit "model" and timeout read when the run starts.
    config = {
      timeout_minutes                 = inputs.timeout_minutes
      max_identical_rejections        = 3
      max_iterations_without_progress = 3
      max_total_attempts              = inputs.max_total_attempts
      max_parallel_tasks              = inputs.max_parallel_tasks
      max_parallel_by_model           = inputs.max_parallel_by_model
      conductor_refresh_interval      = 5
      conductor_model                 = "haiku"
    }
  }
}
