# The tasks of tasks_file as the scheduler runs them ("Finding Ready
# Tasks"): a task with subtasks never runs itself, its subtasks do, each
# with the parent's model unless it names its own; a subtask's blocked_by
# names a sibling first, else a task; a task or subtask also waits for
# what its parent waits for; and a dependency on a parent is a dependency
# on all of its subtasks, so the parent is done when they are. Tasks the
# file already marks completed or skipped do not run and satisfy their
# dependents.

locals {
  # {"tasks": [...]} as planning writes it; a bare list is taken too.
  file_tasks = try(steps.load_tasks.output.value.tasks, steps.load_tasks.output.value)

  subtasks = { for t in local.file_tasks : t.id => try([for s in t.subtasks : s], []) }

  done = flatten([for t in local.file_tasks : concat(
    try(t.status == "completed" || t.status == "skipped", false) ? [t.id] : [],
    [for s in local.subtasks[t.id] : s.id if try(s.status == "completed" || s.status == "skipped", false) || try(t.status == "completed" || t.status == "skipped", false)]
  )])

  # What a dependency on each task means: the task, or all its subtasks.
  expand = { for t in local.file_tasks : t.id => length(local.subtasks[t.id]) > 0 ? [for s in local.subtasks[t.id] : s.id] : [t.id] }

  items = concat(
    [for t in local.file_tasks : {
      id                  = t.id
      title               = try(t.title, "")
      objective           = try(t.objective, null)
      task_type           = try(t.task_type, null)
      methodology         = coalesce(try(t.methodology, null), "tdd")
      model               = coalesce(try(t.model, null), "sonnet")
      parent              = ""
      blocked_by          = distinct([for d in flatten([for d in try([for x in t.blocked_by : x], []) : try(local.expand[d], [d])]) : d if !contains(local.done, d)])
      acceptance_criteria = try([for a in t.acceptance_criteria : a], [])
      test_file           = try(t.test_file, null)
    } if length(local.subtasks[t.id]) == 0 && !contains(local.done, t.id)],
    flatten([for t in local.file_tasks : [for s in local.subtasks[t.id] : {
      id                  = s.id
      title               = try(s.title, "")
      objective           = try(s.objective, null)
      task_type           = try(s.task_type, t.task_type, null)
      methodology         = coalesce(try(s.methodology, null), try(t.methodology, null), "tdd")
      model               = coalesce(try(s.model, null), try(t.model, null), "sonnet")
      parent              = t.id
      blocked_by          = distinct([for d in flatten([for d in concat(try([for x in s.blocked_by : x], []), try([for x in t.blocked_by : x], [])) : contains(local.expand[t.id], d) ? [d] : try(local.expand[d], [d])]) : d if !contains(local.done, d)])
      acceptance_criteria = try([for a in s.acceptance_criteria : a], [])
      test_file           = try(s.test_file, null)
    } if !contains(local.done, s.id)]])
  )

  # Each task's status as the protocol's state names it: completed, skipped,
  # escalated, validation_error, return_to_planning, failed (a step failed
  # for good), blocked (a task it waits for did not complete), in_progress
  # or pending. A parent is completed once all its subtasks are.
  item_status = { for k, it in try(steps.tasks.output.items, {}) : k => (
    it.status == "completed" ? "completed" :
    it.status == "failed" ? (it.recommendation != "" ? it.recommendation : "failed") :
    it.status == "running" ? "in_progress" : it.status
  ) }

  task_status = merge(
    { for id in local.done : id => "completed" },
    { for it in local.items : it.id => try(local.item_status[it.id], "pending") },
    { for t in local.file_tasks : t.id => (
      alltrue([for s in local.subtasks[t.id] : contains(["completed", "skipped"], try(local.item_status[s.id], contains(local.done, s.id) ? "completed" : "pending"))]) ? "completed" : "pending"
    ) if length(local.subtasks[t.id]) > 0 && !contains(local.done, t.id) },
  )

  # What state.json and the run's output both say of each task and
  # subtask, by id; each adds what only it says.
  task_rows = { for t in concat(local.file_tasks, flatten(values(local.subtasks))) : t.id => {
    id              = t.id
    title           = try(t.title, "")
    status          = local.task_status[t.id]
    attempts        = try(vars.attempts[t.id], 0)
    escalated_model = try(vars.models[t.id], null)
    feedback        = try(vars.feedback[t.id], [])
    completed_at    = try(vars.completed_at[t.id], null)
  } }

  # The phase the workflow goes to next.
  next_phase = run.status == "completed" ? "completion" : run.status == "return_to_planning" ? "planning" : "implementation"
}
