# Section 3, Post-Mortem Generation (OBSV-03, OBSV-04) and the learnings
# file (LRNG-01): every failed phase leaves both. A write that fails is
# logged and the run still fails with its own reason.

on_failure {
  # Root cause: the first failure taxonomy category that applies
  # (Section 2.5), from the debugger's or the verifier's classification.
  step "root_cause" {
    gate {
      otherwise {
        set = {
          failure_category = (
            steps.preflight.status != "completed" || !try(steps.preflight.output.all_clear, false) ? "tool_failure"
            : length(try(steps.debug.output.failure_categories, [])) > 0 ? steps.debug.output.failure_categories[0].category
            : length(try(steps.verify.output.failure_categories, [])) > 0 ? steps.verify.output.failure_categories[0].category
            : try(vars.recommendation == "rollback" || vars.recommendation == "halt", false) ? "executor_wrong_approach"
            : "coordination_failure"
          )
          issues = try(vars.issues, [])
        }
      }
    }
  }

  step "postmortem" {
    continue_on_error = true
    call "file.write" {
      path = ".autopilot/diagnostics/phase-${inputs.phase_id}-postmortem.json"
      content = jsonencode({
        phase_id   = inputs.phase_id
        phase_name = inputs.phase_name
        timestamp  = null
        status     = "failed"
        root_cause = {
          category          = vars.failure_category
          description       = run.reason
          first_observed_at = null
          step              = run.recommendation == "rollback" || run.recommendation == "halt" ? "gate" : "run"
        }
        timeline = concat(
          [for s in ["preflight", "triage", "research", "plan", "plan_check", "execute", "verify", "judge", "rate", "debug"] : {
            timestamp = null
            step      = s
            event     = "${s}: ${steps[s].status}${steps[s].attempts > 1 ? " (${steps[s].attempts} runs)" : ""}"
            status    = steps[s].status == "completed" ? "success" : steps[s].status == "failed" ? "failure" : "skipped"
          } if steps[s].status != "pending"],
          [{ timestamp = null, step = "gate", event = run.reason, status = "failure" }],
        )
        evidence = {
          commands_run  = concat(try(steps.verify.output.commands_run, []), try(steps.rate.output.commands_run, []))
          files_checked = [for r in try(steps.verify.output.criteria_results, []) : "${r.criterion} -- ${try(coalesce(r.evidence, ""), "")}"]
        }
        attempted_fixes = steps.debug.attempts == 0 ? [] : [{
          attempt     = steps.debug.attempts
          description = join("; ", try(steps.debug.output.changes, []))
          commit_sha  = try(steps.debug.output.commits[0], null)
          resolved    = []
          remaining   = try(steps.debug.output.remaining_issues, [])
        }]
        prevention_rule = "Before re-running phase ${inputs.phase_id}, resolve: ${join("; ", concat(try(steps.debug.output.remaining_issues, []), try(steps.verify.output.failures, []), try(steps.judge.output.concerns, []), try(vars.issues, [])))}"
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
        ### Phase ${inputs.phase_id} failure -- ${vars.failure_category}
        **Prevention rule:** Before re-running phase ${inputs.phase_id}, resolve: ${join("; ", concat(try(steps.debug.output.remaining_issues, []), try(steps.verify.output.failures, []), try(steps.judge.output.concerns, []), vars.issues))}
        **Context:** Phase ${inputs.phase_id} (${inputs.phase_name}) failed with category `${vars.failure_category}`: ${run.reason}. Recorded: run ${run.id}.

      EOT
      ])
    }
  }
}
