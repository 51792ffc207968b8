# The orchestrator's .autopilot/state.json, projected from apl's own state at
# every checkpoint; the previous version goes to state.json.backup, and a
# run that completes moves it to .autopilot/archive/. A failed run leaves
# it for inspection; apl resume continues the run from apl's state and
# writes the document again.

locals {
  # _meta.status: running, completed, failed or paused.
  meta_status = (run.status == "running" || run.status == "completed" || run.status == "failed" ? run.status
  : run.status == "interrupted" || run.status == "waiting" ? "paused" : "completed")

  # The run's start (once the spec is locked), then the playbook's own
  # events, as the gates recorded them (apl's details key "rule" left out).
  event_log = concat(
    length(vars.spec) == 0 ? [] : [{ timestamp = vars.spec.locked_at, phase = null, event = "run_started", details = { total_phases = length(local.phases), pass_threshold = inputs.pass_threshold, mode = run.mode } }],
    [for e in run.events : { timestamp = e.timestamp, phase = e.item, event = e.event, details = { for k, v in e.details : k => v if k != "rule" } }],
    # How the run ended (apl's own run_completed is not in run.events).
    run.status == "completed" || run.status == "failed" ? [{
      timestamp = timestamp()
      phase     = null
      event     = run.status == "completed" ? "run_completed" : "run_halted"
      details = {
        recommendation   = run.recommendation
        failed_phases    = [for p in local.phases : p.id if try(local.records[p.id].status, "") == "failed"]
        phases_completed = local.phases_succeeded
        phases_failed    = local.phases_failed
        phases_deferred  = local.phases_deferred
        total_phases     = length(local.phases)
      }
    }] : [],
  )
}

document "state" {
  path    = ".autopilot/state.json"
  backup  = ".autopilot/state.json.backup"
  archive = ".autopilot/archive/run-${formatdate("YYYY-MM-DD-hhmmss", timestamp())}.json"
  content = {
    _meta = {
      version                    = "1.0"
      run_id                     = run.id
      started_at                 = try(steps.learnings_reset.started_at, null)
      last_checkpoint            = timestamp()
      status                     = local.meta_status
      total_phases               = length(local.phases)
      current_phase              = try([for k, it in steps.phases.output.items : k if it.status == "running"][0], null)
      current_step               = steps.phases.status == "running" ? "phase_runner" : null
      orchestrator_context_pct   = null
      human_deferred_count       = local.phases_deferred
      total_phases_processed     = local.phases_attempted
      pass_threshold             = inputs.pass_threshold
      autonomous_resolution_rate = local.phases_attempted > 0 ? floor(local.phases_succeeded / local.phases_attempted * 100) / 100 : 0
      deferral_threshold         = 0.05
      deferral_history           = []
      mode                       = run.mode
    }
    spec         = length(vars.spec) > 0 ? vars.spec : null
    roadmap_path = inputs.roadmap_path
    phases = { for p in local.phases : "phase_${p.id}" => {
      phase_type   = null
      name         = p.name
      depends_on   = p.depends_on
      status       = try(local.records[p.id].status, try(local.items[p.id].status, "") == "blocked" ? "skipped" : "not_started")
      started_at   = try(local.records[p.id].started_at, null)
      completed_at = try(local.records[p.id].completed_at, null)
      # The phase runner's pipeline_steps once it returned.
      steps                      = try(local.records[p.id].steps, try(local.results[p.id].pipeline_steps, {}))
      alignment_score            = try(local.records[p.id].alignment_score, null)
      debug_attempts             = try(local.results[p.id].debug_attempts, 0)
      replan_attempts            = try(local.results[p.id].replan_attempts, 0)
      tokens_used                = try(local.records[p.id].tokens_used, 0)
      estimated_tokens           = null
      human_verify_justification = try(local.records[p.id].human_verify_justification, null)
      human_verdict              = null
      force_incomplete           = try(local.records[p.id].force_incomplete, false)
      diagnostic_path            = try(local.records[p.id].diagnostic_path, null)
      remediation_cycles         = try(local.records[p.id].remediation_cycles, 0)
      # --quality ran out of cycles below 9.5.
      quality_exhausted = run.mode == "quality" && try(local.records[p.id].force_incomplete, false)
      score_history     = try(local.records[p.id].score_history, [])
      skip_reason       = try(local.records[p.id].skip_reason, try(local.items[p.id].status, "") == "blocked" ? local.items[p.id].error : null)
    } }
    # apl's circuit breaker, as its state says (half_open between a
    # resume after the cooldown and the step that decides).
    circuit_breaker = {
      state                   = run.circuit_breaker.state
      consecutive_no_progress = run.circuit_breaker.consecutive_no_progress
      consecutive_same_error  = run.circuit_breaker.consecutive_same_error
      last_error              = run.circuit_breaker.last_error != null ? run.circuit_breaker.last_error : run.circuit_breaker.reason
      cooldown_until          = run.circuit_breaker.cooldown_until
    }
    event_log = local.event_log
    metrics = {
      total_tokens_used      = run.tokens
      total_duration_minutes = floor(run.elapsed_s / 60)
      phases_completed       = local.phases_succeeded
      phases_failed          = local.phases_failed
      debug_loops_total      = local.total_debug_loops
      replan_count           = local.total_replans
    }
  }
}
