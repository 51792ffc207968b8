# apl run --json: every task with its final status, as the protocol's
# state.json lists them (a parent with its subtasks), and the phase the
# workflow goes to next.

output {
  phase = local.next_phase
  tasks = [for t in local.file_tasks : merge(local.task_rows[t.id], {
    model    = coalesce(try(t.model, null), "sonnet")
    subtasks = [for s in local.subtasks[t.id] : local.task_rows[s.id]]
  })]
  # Every task and subtask by id: its final status, and the model each
  # escalated task ended on.
  task_status      = local.task_status
  escalated_models = try(vars.models, {})
  summary = {
    for s in distinct(values(local.task_status)) : s => length([for k, v in local.task_status : k if v == s])
  }
}
