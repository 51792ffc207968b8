# apl run --json: every task with its final status, as the protocol's
# state.json lists them (a parent with its subtasks), and the phase the
# workflow goes to next.

output {
  phase = run.status == "completed" ? "completion" : run.status == "return_to_planning" ? "planning" : "implementation"
  tasks = [for t in local.file_tasks : {
    id              = t.id
    title           = try(t.title, "")
    status          = local.task_status[t.id]
    attempts        = try(vars.attempts[t.id], 0)
    model           = coalesce(try(t.model, null), "sonnet")
    escalated_model = try(vars.models[t.id], null)
    feedback        = try(vars.feedback[t.id], [])
    completed_at    = try(vars.completed_at[t.id], null)
    subtasks = [for s in local.subtasks[t.id] : {
      id              = s.id
      title           = try(s.title, "")
      status          = local.task_status[s.id]
      attempts        = try(vars.attempts[s.id], 0)
      escalated_model = try(vars.models[s.id], null)
      feedback        = try(vars.feedback[s.id], [])
      completed_at    = try(vars.completed_at[s.id], null)
    }]
  }]
  # Every task and subtask by id: its final status, and the model each
  # escalated task ended on.
  task_status      = local.task_status
  escalated_models = try(vars.models, {})
  summary = {
    for s in distinct(values(local.task_status)) : s => length([for k, v in local.task_status : k if v == s])
  }
}
