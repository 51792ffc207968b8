# The run's return (apl run --json): the completion report's data, the
# metrics entry, and each phase's record.

output {
  status         = run.status
  reason         = run.reason
  recommendation = run.recommendation
  report         = local.report
  metrics        = local.metrics_entry
  aggregates     = local.aggregates
  phases = { for p in local.phases : p.id => {
    status             = try(local.records[p.id].status, try(local.items[p.id].status, "") == "blocked" ? "skipped" : "not_started")
    alignment_score    = try(local.records[p.id].alignment_score, null)
    remediation_cycles = try(local.records[p.id].remediation_cycles, 0)
    force_incomplete   = try(local.records[p.id].force_incomplete, false)
    diagnostic_path    = try(local.records[p.id].diagnostic_path, null)
    scores             = [for h in try(local.records[p.id].score_history, []) : h.score]
  } }
}
