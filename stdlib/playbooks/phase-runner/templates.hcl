# What several steps of the pipeline share: the answers' types, and the
# mini-verifier's and the debugger's steps (each used twice: per task in
# STEP 3, and for the batch or the phase).

# A mini-verifier's answer for one task: the same shape after each task
# (STEP 3) and for each task of a batch (STEP 3-BATCH).
type "task_verdict" {
  type = object({
    task_id = string
    pass    = bool
    criteria_results = list(object({
      criterion      = string
      status         = string
      evidence       = optional(string)
      command        = optional(string)
      command_output = optional(string)
    }))
    concerns     = list(string)
    commands_run = list(string)
  })
  example = { task_id = "01-01", pass = true, criteria_results = [{ criterion = "tests pass", status = "pass" }], concerns = [], commands_run = ["go test ./... -> ok"] }
}

# The executor's report, for one task (STEP 3) or all of them (the batch).
type "execution_report" {
  type = object({
    tasks_completed = string
    tasks_failed    = string
    commit_shas     = list(string)
    evidence = list(object({
      task_id      = string
      criteria_met = list(string)
      commands_run = list(string)
    }))
    deviations = list(string)
  })
}

# The mini-verifier of one task of PLAN.md (the for_each item): after the
# task's executor (STEP 3), or for each task after the batch executor.
template "mini_verifier" {
  param "no_files" {
    type        = string
    description = "Where to look when the task names no files."
  }
  timeout = "10m"
  returns = type.task_verdict
  agent "mini_verifier" {
    prompt = prompt.mini_verify
    vars = {
      task_id          = item.id
      task_description = item.description
      files            = length(item.files) > 0 ? join(", ", item.files) : param.no_files
      criteria         = length(item.criteria) > 0 ? join("\n", item.criteria) : "(PLAN.md lists no \"-- verified by:\" criterion for this task: check its <verify> and <done> elements)"
    }
  }
  check "evidence" {
    condition = "len(self.output.commands_run) > 0"
    message   = "commands_run is empty: run every verification command yourself and list it with its result."
  }
}

# A debugger's attempt at a list of issues: STEP 5a's, and a task's in
# STEP 3. When autopilot-debugger is not available (its call could not
# run: the kinds unavailable, exit_status or other), gsd-debugger makes the
# same attempt; a debugger that ran and failed (timeout, budget, schema,
# ...) spends it.
template "debugger" {
  param "issues" {
    type        = list(string)
    description = "What is wrong: the failures and concerns to fix."
  }
  param "failing_checks" {
    type        = list(string)
    description = "The commands that failed, with their output."
  }
  param "task_id" {
    default     = ""
    description = "The task being debugged; empty for the whole phase."
  }
  param "task_description" {
    default = ""
  }
  timeout           = "30m"
  continue_on_error = true
  returns = object({
    fixed            = bool
    changes          = list(string)
    commits          = list(string)
    remaining_issues = list(string)
    failure_categories = list(object({
      failure  = string
      category = string
    }))
  })
  example = { fixed = true, changes = ["fixed the failing check"], commits = ["c3d4e5f"], remaining_issues = [], failure_categories = [] }
  agent "debugger" {
    prompt = prompt.debug
    vars = {
      task_id          = param.task_id
      task_description = param.task_description
      issues           = param.issues
      failing_checks   = param.failing_checks
    }
    fallback    = ["gsd_debugger"]
    fallback_on = ["unavailable", "exit_status", "other"]
  }
}
