# PipelineResult, printed by apl run --json.

output {
  version     = "1.0.0"
  run_id      = try(vars.report_id, null)
  task        = inputs.task
  risk        = lower(local.risk)
  risk_source = local.risk_source
  start_stage = local.start_stage
  status      = local.status
  exit_reason = run.recommendation
  reason      = run.reason
  stages      = local.stage_results
  gates       = local.gates
  metrics = {
    total_time_seconds      = run.elapsed_s
    total_tokens_used       = run.tokens
    verification_iterations = steps.verification.attempts
    stages_executed         = length(local.stage_results)
    stages_skipped          = length(local.stage_names) - length(local.stage_results)
  }
  report = try(steps.report.output.path, null)
  latest = steps.latest.status == "completed" ? steps.latest.output.path : try(steps.latest_txt.output.path, null)
}
