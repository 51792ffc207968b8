# The Report Contract: .factory/reports/<run_id>/report.json for every
# outcome (a finally step), then the latest pointer: a symlink to the run's
# directory, or latest.txt holding the run id where no symlink can be made.

locals {
  # StageResult of each stage that ran, in stage order.
  stage_results = [for s in local.stage_names : {
    stage       = s
    status      = steps[s].status == "completed" && try(steps[s].output.success, steps[s].output.approved, false) ? "pass" : "fail"
    started_at  = steps[s].started_at
    ended_at    = steps[s].ended_at
    session_id  = steps[s].session_id
    model       = steps[s].model
    output      = steps[s].status == "completed" ? jsonencode(steps[s].output) : steps[s].error
    iteration   = steps[s].attempts
    tokens_used = steps[s].tokens
  } if steps[s].attempts > 0]

  # success | failed | escalated: rejected twice is escalated to a human.
  status = (run.status == "completed" ? "success"
    : run.recommendation == "verification_rejected" ? "escalated"
  : "failed")

  gates = [for i, c in inputs.gate_commands : {
    command = c
    passed  = try(steps.pre_verify.output.items[tostring(i)].status == "completed", false)
    error   = replace(try(steps.pre_verify.output.items[tostring(i)].error, ""), "/^step [^(]*\\([^)]*\\): /", "")
  } if steps.pre_verify.attempts > 0]

  report = {
    run_id      = try(vars.report_id, run.id)
    task        = inputs.task
    status      = local.status
    exit_reason = run.recommendation
    risk_level  = local.risk
    risk_source = local.risk_source
    start_stage = local.start_stage
    apl_run_id  = run.id
    stages = [for r in local.stage_results : {
      name           = r.stage
      session_id     = r.session_id
      model          = r.model
      started_at     = r.started_at
      ended_at       = r.ended_at
      success        = r.status == "pass"
      tokens_used    = r.tokens_used
      output_summary = substr(r.output, 0, 500)
    }]
    pre_verify_gates = local.gates
    timestamps = {
      started_at       = steps.assess.started_at
      ended_at         = timestamp()
      duration_seconds = run.elapsed_s
    }
    metrics = {
      total_tokens            = run.tokens
      verification_iterations = steps.verification.attempts
      stages_executed         = length(local.stage_results)
    }
    errors = run.status == "completed" ? [] : [{
      stage       = try(vars.failed_stage, "pipeline")
      message     = run.reason
      recoverable = run.recommendation == "model_unavailable"
    }]
  }
}

finally {
  step "report" {
    call "file.write" {
      path    = ".factory/reports/${local.report.run_id}/report.json"
      content = "${jsonencode(local.report)}\n"
    }
  }

  step "latest" {
    continue_on_error = true
    call "file.symlink" {
      path   = ".factory/reports/latest"
      target = local.report.run_id
    }
  }

  # The protocol's fallback where symlinks cannot be made (Windows).
  step "latest_txt" {
    when        = "steps.latest.status == 'failed'"
    skip_reason = "latest is a symlink"
    call "file.write" {
      path    = ".factory/reports/latest.txt"
      content = "${local.report.run_id}\n"
    }
  }
}
