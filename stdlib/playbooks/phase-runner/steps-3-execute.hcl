# STEP 3: EXECUTE, one task at a time: executor, mini-verifier,
# at most 2 debug attempts (autopilot-debugger, gsd-debugger when it is
# unavailable), then FAILED and on to the next task. APL_ITEM_KEY is the
# task id.
step "execute" {
  progress       = "EXECUTE"
  progress_start = "-- ${length(local.auto_tasks)} tasks"
  progress_done  = "${steps.execute.output.completed}/${length(local.auto_tasks)} tasks."
  for_each       = "local.auto_tasks"
  key            = "item.id"
  next           = "verify"
  # A task FAILED after its debug attempts is logged and left to verify:
  # the next task still runs and the run goes on.
  on_item_failure = "continue"

  step "execution_log" {
    call "file.read" {
      path = "${local.phase_dir}/EXECUTION-LOG.md"
    }
    log = "Task ${item.id} (${item.position}/${length(local.auto_tasks)}): ${item.description}"
  }

  step "execute_task" {
    timeout = "30m"
    returns = type.execution_report
    example = { tasks_completed = "1/1", tasks_failed = "0/1", commit_shas = ["a1b2c3d"], evidence = [{ task_id = "01-01", criteria_met = ["criterion -- file:1 -- found"], commands_run = ["go test ./... -> ok"] }], deviations = [] }
    agent "executor" {
      prompt = prompt.execute
      vars = {
        task_id          = item.id
        task_description = item.description
        prior_tasks      = steps.execution_log.output.exists && trimspace(steps.execution_log.output.content) != "" ? steps.execution_log.output.content : "This is the first task."
      }
    }
  }

  step "mini_verify" {
    use  = template.mini_verifier
    with = { no_files = "see the task's commit: git show --stat HEAD" }
    gate {
      rule "verified" {
        when = "steps.mini_verify.output.pass"
        log  = "Task ${item.id}: VERIFIED"
        goto = "task_log"
      }
      otherwise {
        log  = "Task ${item.id}: FAILED -- ${join("; ", [for r in steps.mini_verify.output.criteria_results : r.criterion if r.status != "pass"])}"
        goto = "task_debug"
        max  = 2
        on_exhausted {
          goto = "task_log"
        }
      }
    }
  }

  step "task_debug" {
    use     = template.debugger
    example = { fixed = true, changes = ["fixed the criterion"], commits = ["b2c3d4e"], remaining_issues = [], failure_categories = [] }
    # What the mini-verifier found: the criteria that failed, with their
    # evidence, and its concerns; the commands that failed.
    with = {
      task_id          = item.id
      task_description = item.description
      issues = concat(
        [for r in steps.mini_verify.output.criteria_results : "${r.criterion}: ${try(coalesce(r.evidence, ""), "") != "" ? r.evidence : "failed"}" if r.status != "pass"],
        [for c in steps.mini_verify.output.concerns : "concern: ${c}"],
      )
      failing_checks = [for r in steps.mini_verify.output.criteria_results : "`${r.command}` -> ${try(coalesce(r.command_output, ""), "") != "" ? r.command_output : "failed"}" if r.status != "pass" && try(r.command != null && r.command != "", false)]
    }
    next = "mini_verify"
  }

  # The task's mini-verification, in its EXECUTION-LOG.md entry after the
  # executor's own (a task FAILED after its debug attempts gets its heading
  # here), and the orchestrator's task_completed {task, commit} or
  # task_failed event.
  step "task_log" {
    locals {
      passed          = steps.mini_verify.output.pass
      failed_criteria = [for r in steps.mini_verify.output.criteria_results : r.criterion if r.status != "pass"]
    }
    call "file.append" {
      path    = "${local.phase_dir}/EXECUTION-LOG.md"
      content = <<-EOT
        %{if !local.passed}### Task ${item.id}: ${item.description}
        - **Status:** FAILED
        %{endif}- **Mini-Verification:**
          - **Result:** ${local.passed ? "PASS" : "FAIL"}
          - **Criteria checked:** ${length(steps.mini_verify.output.criteria_results)}
          - **Criteria passed:** ${length(steps.mini_verify.output.criteria_results) - length(local.failed_criteria)}
          - **Failures:** ${local.passed ? "None" : join("; ", local.failed_criteria)}
          - **Debug attempts:** ${steps.task_debug.attempts}
      EOT
    }
    gate {
      # The executor's commit, and the debuggers' after it.
      rule "verified" {
        when  = "local.passed"
        event = "task_completed"
        details = {
          task           = item.id
          commit         = try(steps.execute_task.output.commit_shas[0], null)
          commits        = concat(steps.execute_task.output.commit_shas, try(steps.task_debug.output.commits, []))
          debug_attempts = steps.task_debug.attempts
        }
        finish = "verified"
      }
      otherwise {
        event   = "task_failed"
        details = { task = item.id, failures = local.failed_criteria, debug_attempts = steps.task_debug.attempts }
        fail    = "task_failed"
        reason  = "Task ${item.id} still fails after 2 debug attempts: ${join("; ", local.failed_criteria)}"
      }
    }
  }
}

# STEP 3's batch fallback (and remediation): one executor for all tasks,
# then a mini-verifier per task of PLAN.md.
step "execute_batch" {
  timeout = "60m"
  returns = type.execution_report
  example = { tasks_completed = "1/1", tasks_failed = "0/1", commit_shas = ["a1b2c3d"], evidence = [], deviations = [] }
  agent "executor" {
    prompt = prompt.execute
    vars = {
      task_id          = ""
      task_description = ""
      prior_tasks      = ""
    }
  }
}

step "batch_verify" {
  when     = "!local.remediation"
  for_each = "local.auto_tasks"
  key      = "item.id"
  # A task failing its mini-verification is a finding for verify, not a
  # failure of the run.
  on_item_failure = "continue"

  step "batch_mini_verify" {
    use  = template.mini_verifier
    with = { no_files = "see the task's entry in EXECUTION-LOG.md" }
  }

  step "batch_task_log" {
    call "file.append" {
      path    = "${local.phase_dir}/EXECUTION-LOG.md"
      content = <<-EOT
        - **Mini-Verification (task ${item.id}):**
          - **Result:** ${steps.batch_mini_verify.output.pass ? "PASS" : "FAIL"}
          - **Criteria checked:** ${length(steps.batch_mini_verify.output.criteria_results)}
          - **Criteria passed:** ${length([for r in steps.batch_mini_verify.output.criteria_results : r if r.status == "pass"])}
          - **Failures:** ${steps.batch_mini_verify.output.pass ? "None" : join("; ", [for r in steps.batch_mini_verify.output.criteria_results : r.criterion if r.status != "pass"])}
          - **Debug attempts:** 0
      EOT
    }
    gate {
      rule "verified" {
        when    = "steps.batch_mini_verify.output.pass"
        log     = "Task ${item.id}: VERIFIED"
        event   = "task_completed"
        details = { task = item.id, commit = null, batch = true }
      }
      otherwise {
        log     = "Task ${item.id}: FAILED -- ${join("; ", [for r in steps.batch_mini_verify.output.criteria_results : r.criterion if r.status != "pass"])}"
        event   = "task_failed"
        details = { task = item.id, failures = [for r in steps.batch_mini_verify.output.criteria_results : r.criterion if r.status != "pass"], batch = true }
        fail    = "task_failed"
        reason  = "Task ${item.id} fails its mini-verification: ${join("; ", [for r in steps.batch_mini_verify.output.criteria_results : r.criterion if r.status != "pass"])}"
      }
    }
  }
}
