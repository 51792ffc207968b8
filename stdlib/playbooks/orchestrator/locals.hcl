# What is read out of the roadmap, and what the records add up to.

locals {
  spec_path = inputs.spec_path != "" ? inputs.spec_path : inputs.roadmap_path

  # The roadmap, cut before every phase heading ("## Phase 6.3: loader",
  # "### Phase 7 - cache"): one chunk per phase, its lines up to the next.
  roadmap_chunks = [for c in split("\u0001", replace(try(steps.roadmap.output.content, ""), "/(?m)^(#{1,4} +Phase +)/", "\u0001$1")) : c if can(regex("^#{1,4} +Phase +[0-9]", c))]
  roadmap_phases = [for c in local.roadmap_chunks : {
    id          = regex("^#{1,4} +Phase +([0-9]+(?:\\.[0-9]+)*)", c)[0]
    name        = trimspace(replace(regex("^#{1,4} +Phase +[0-9.]+([^\\n]*)", c)[0], "/^[:. -]+/", ""))
    goal        = try(trimspace(regex("(?mi)^[*_ ]*goal[*_ ]*:[*_ ]*(.*)$", c)[0]), "")
    description = trimspace(c)
    depends_on  = [for d in regexall("[0-9]+(?:\\.[0-9]+)*", try(regex("(?mi)^[*_ ]*depends on[*_ ]*:[*_ ]*(.*)$", c)[0], "")) : d]
  }]
  selected = length(inputs.phases) > 0 ? inputs.phases : [for p in local.roadmap_phases : p.id]
  # The phases of this run, in roadmap order; a dependency on a phase not
  # in the run counts as met (it was done earlier).
  phases = [for p in local.roadmap_phases : merge(p, {
    depends_on = [for d in p.depends_on : d if contains(local.selected, d) && d != p.id]
  }) if contains(local.selected, p.id)]
  unknown_phases = [for id in local.selected : id if !contains([for p in local.roadmap_phases : p.id], id)]

  # Each phase's item (status, outputs.run = the phase runner's return)
  # and record (vars.records: what the gates kept).
  items   = try(steps.phases.output.items, {})
  results = { for k, it in local.items : k => it.outputs.run if try(it.outputs.run, null) != null }
  records = vars.records
  scores  = [for k, r in local.records : r.alignment_score if try(r.alignment_score, null) != null]

  # The run's metrics.
  phases_attempted = length([for k, r in local.records : k if try(r.started_at, null) != null])
  phases_succeeded = length([for k, r in local.records : k if try(r.status, "") == "completed" && try(r.alignment_score, 0) >= 7])
  phases_failed    = length([for k, r in local.records : k if try(r.status, "") == "failed"])
  phases_deferred  = length([for k, r in local.records : k if try(r.status, "") == "needs_human_verification"])
  phases_skipped = [for p in local.phases : merge(
    { phase_id = p.id, phase_name = p.name },
    try(local.items[p.id].status, "") == "blocked" ? {
      reason         = "blocked_by_phase_${try(regex("item \"([^\"]+)\"", local.items[p.id].error)[0], "?")}"
      blocking_phase = try(regex("item \"([^\"]+)\"", local.items[p.id].error)[0], null)
    } : { reason = try(local.records[p.id].skip_reason, "not_started") },
  ) if contains(["blocked", "skipped", "pending"], try(local.items[p.id].status, "pending")) && try(local.records[p.id].status, "") != "failed"]
  avg_alignment_score = length(local.scores) > 0 ? floor(sum(local.scores) / length(local.scores) * 100) / 100 : null
  success_rate        = local.phases_attempted > 0 ? floor(local.phases_succeeded / local.phases_attempted * 100) / 100 : 0
  total_debug_loops   = sum(concat([0], [for k, r in local.results : try(r.debug_attempts, 0)]))
  total_replans       = sum(concat([0], [for k, r in local.results : try(r.replan_attempts, 0)]))
  failure_taxonomy_histogram = {
    for c in distinct(flatten([for k, r in local.results : try(r.failure_categories, [])])) :
    c => length([for x in flatten([for k, r in local.results : try(r.failure_categories, [])]) : x if x == c])
  }
  per_phase_summary = [for p in local.phases : {
    phase_id         = p.id
    status           = try(local.records[p.id].status, "not_started")
    alignment_score  = try(local.records[p.id].alignment_score, null)
    estimated_tokens = null
    duration_minutes = try(local.records[p.id].duration_minutes, null)
  } if try(local.records[p.id].started_at, null) != null]
  # The metrics' aggregates, compared by the tests (output.aggregates).
  aggregates = {
    phases_attempted           = local.phases_attempted
    phases_succeeded           = local.phases_succeeded
    phases_failed              = local.phases_failed
    phases_human_deferred      = local.phases_deferred
    failure_taxonomy_histogram = local.failure_taxonomy_histogram
    avg_alignment_score        = local.avg_alignment_score
    total_debug_loops          = local.total_debug_loops
    total_replan_attempts      = local.total_replans
    success_rate               = local.success_rate
  }
  metrics_entry = merge(local.aggregates, {
    run_id                 = run.id
    timestamp              = timestamp()
    total_duration_minutes = floor(run.elapsed_s / 60)
    total_estimated_tokens = null
    total_tokens_used      = run.tokens
    per_phase_summary      = local.per_phase_summary
  })

  # The earlier runs' entries (metrics.json is a JSON array), and the
  # trend over them and this run.
  metrics_history = try(tolist(jsondecode(steps.metrics_file.output.content)), [])
  metrics_all     = concat(local.metrics_history, [local.metrics_entry])
  previous_run    = try(element(local.metrics_history, length(local.metrics_history) - 1), null)
  trend_rates     = [for m in local.metrics_all : m.success_rate if try(m.success_rate, null) != null]
  trend_scores    = [for m in local.metrics_all : m.avg_alignment_score if try(m.avg_alignment_score, null) != null]
  trend_summary = length(local.metrics_history) == 0 ? null : {
    success_rate_delta  = try(local.success_rate - local.previous_run.success_rate, null)
    avg_alignment_delta = try(local.avg_alignment_score - local.previous_run.avg_alignment_score, null)
    recurring_failures  = try([for c in keys(local.failure_taxonomy_histogram) : c if contains(keys(local.previous_run.failure_taxonomy_histogram), c)], [])
    historical = {
      total_runs    = length(local.metrics_all)
      success_rate  = length(local.trend_rates) == 0 ? null : { min = min(local.trend_rates...), max = max(local.trend_rates...), avg = sum(local.trend_rates) / length(local.trend_rates) }
      avg_alignment = length(local.trend_scores) == 0 ? null : { min = min(local.trend_scores...), max = max(local.trend_scores...), avg = sum(local.trend_scores) / length(local.trend_scores) }
    }
  }
}
