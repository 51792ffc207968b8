# The run's return (apl run --json): the completion report's data, the
# metrics entry, and each phase's record.

output {
  status         = run.status
  reason         = run.reason
  recommendation = run.recommendation
  report         = local.report
  metrics        = local.metrics_entry
  aggregates     = local.aggregates
  # The event log of .autopilot/state.json without its timestamps, and
  # the circuit breaker.
  events          = [for e in local.event_log : { event = e.event, phase = e.phase, details = e.details }]
  circuit_breaker = { state = run.circuit_breaker.state, consecutive_no_progress = run.circuit_breaker.consecutive_no_progress, consecutive_same_error = run.circuit_breaker.consecutive_same_error }
  phases = { for p in local.phases : p.id => {
    status             = try(local.records[p.id].status, try(local.items[p.id].status, "") == "blocked" ? "skipped" : "not_started")
    alignment_score    = try(local.records[p.id].alignment_score, null)
    remediation_cycles = try(local.records[p.id].remediation_cycles, 0)
    force_incomplete   = try(local.records[p.id].force_incomplete, false)
    diagnostic_path    = try(local.records[p.id].diagnostic_path, null)
    scores             = [for h in try(local.records[p.id].score_history, []) : h.score]
  } }
}
