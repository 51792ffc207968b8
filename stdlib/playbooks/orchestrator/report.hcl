# The completion protocol, on every ending (finally): the completion
# report and this run's entry appended to
# .autopilot/archive/metrics.json (with the trend over earlier runs).
# A write that fails does not change how the run ended.

locals {
  blocked_phases = [for s in local.phases_skipped : s if try(s.blocking_phase, null) != null]
  report = {
    run_id                  = run.id
    timestamp               = timestamp()
    mode                    = inputs.complete ? "--complete" : run.mode == "" ? "default" : "--${run.mode}"
    status                  = run.status
    reason                  = run.reason
    total_phases_in_roadmap = length(local.roadmap_phases)
    completed_phases_total  = local.phases_succeeded
    completion_percentage   = length(local.roadmap_phases) > 0 ? floor(local.phases_succeeded / length(local.roadmap_phases) * 1000) / 10 : 0
    phases_attempted        = local.phases_attempted
    phases_succeeded        = local.phases_succeeded
    phases_failed           = local.phases_failed
    phases_skipped          = local.phases_skipped
    phases_deferred         = local.phases_deferred
    dependency_gaps = [for p in local.phases : {
      failed_phase_id   = p.id
      failed_phase_name = p.name
      failure_reason    = try(local.records[p.id].reason, "")
      blocked_phases    = [for s in local.phases_skipped : { phase_id = s.phase_id, phase_name = s.phase_name } if try(s.blocking_phase, null) == p.id]
    } if try(local.records[p.id].status, "") == "failed"]
    avg_alignment_score = local.avg_alignment_score
    trend_summary       = local.trend_summary
  }
}

finally {
  # Phases blocked by a failed one never start, so the skip is recorded
  # here, once the others have ended: phase_skipped with the blocking
  # phase (--complete).
  step "blocked" {
    when     = "len(local.blocked_phases) > 0"
    for_each = "local.blocked_phases"
    key      = "item.phase_id"

    step "blocked_event" {
      gate {
        otherwise {
          event   = "phase_skipped"
          log     = "Phase ${item.phase_id} skipped: ${item.reason}."
          details = { phase_id = item.phase_id, reason = item.reason, blocking_phase = item.blocking_phase }
        }
      }
    }
  }

  step "metrics_file" {
    continue_on_error = true
    call "file.read" {
      path = ".autopilot/archive/metrics.json"
    }
  }

  step "completion_report" {
    continue_on_error = true
    call "file.write" {
      path    = ".autopilot/completion-report.md"
      content = <<-EOT
        # Autopilot completion report

        Run `${run.id}`: **${run.status}**${run.reason != "" ? " -- ${run.reason}" : ""}
        Mode: ${local.report.mode}, pass threshold ${inputs.pass_threshold}/10.

        ${local.report.completed_phases_total} of ${local.report.total_phases_in_roadmap} roadmap phases completed (${local.report.completion_percentage}%). This run: ${local.phases_attempted} attempted, ${local.phases_succeeded} succeeded, ${local.phases_failed} failed, ${length(local.phases_skipped)} skipped, ${local.phases_deferred} deferred to a human.

        | Phase | Name | Status | Score | Remediation cycles | Force incomplete |
        |-------|------|--------|-------|--------------------|------------------|
        ${join("\n", [for p in local.phases : "| ${p.id} | ${p.name} | ${try(local.records[p.id].status, "not_started")} | ${try(local.records[p.id].alignment_score, "-")} | ${try(local.records[p.id].remediation_cycles, 0)} | ${try(local.records[p.id].force_incomplete, false)} |"])}

        ## Skipped

        ${length(local.phases_skipped) == 0 ? "None." : join("\n", [for s in local.phases_skipped : "- Phase ${s.phase_id} (${s.phase_name}): ${s.reason}"])}

        ## Dependency gaps

        ${length(local.report.dependency_gaps) == 0 ? "None." : join("\n", [for g in local.report.dependency_gaps : "- Phase ${g.failed_phase_id} (${g.failed_phase_name}) failed: ${g.failure_reason}${length(g.blocked_phases) > 0 ? "; blocks ${join(", ", [for b in g.blocked_phases : b.phase_id])}" : ""}"])}

        ## Trend

        ${local.trend_summary == null ? "First run: no trend yet." : "Success rate ${local.success_rate} (${try(local.trend_summary.success_rate_delta, "n/a")} against the previous run), over ${local.trend_summary.historical.total_runs} runs."}

        ```json
        ${jsonencode(local.report)}
        ```
      EOT
    }
  }

  step "metrics" {
    continue_on_error = true
    call "file.write" {
      path    = ".autopilot/archive/metrics.json"
      content = "${jsonencode(local.metrics_all)}\n"
    }
  }
}
