# The pipeline, in the protocol's order (spec/protocols.md#the-pipeline),
# in the files steps-1 to steps-5. Each agent step declares the JSON its
# prompt asks for (returns) and the answer a dry run gives it (example):
# the happy path. What the steps read out of files is in locals.hcl.
#
# STEP 0 and 0.5: pre-flight and triage, by the phase runner itself.

# Phase Directory Resolution: Glob('.planning/phases/*{phase_id}*'), never
# a fixed directory name (local.phase_dir).
step "locate" {
  description = "Find the phase directory."
  call "glob" {
    pattern = ".planning/phases/*${inputs.phase_id}*"
  }
}

# The commit the phase starts from, when no checkpoint is given: what the
# agents compare the phase's changes with (local.diff_base).
step "base" {
  when              = "inputs.last_checkpoint_sha == ''"
  skip_reason       = "last_checkpoint_sha given"
  continue_on_error = true
  call "git.head" {}
}

# STEP 0: PRE-FLIGHT, by the phase runner itself: the spec's hash, the
# dependencies' EXECUTION-LOG.md, unresolved debug files and git status.
step "spec_hash" {
  when              = "inputs.spec_path != ''"
  skip_reason       = "no spec_path given"
  continue_on_error = true
  call "file.sha256" {
    path = inputs.spec_path
  }
}

step "dependencies" {
  when        = "len(inputs.completed_phase_dirs) > 0"
  skip_reason = "no completed phases"
  call "glob" {
    pattern = ".planning/phases/*/EXECUTION-LOG.md"
  }
}

step "debug_files" {
  call "glob" {
    pattern = ".planning/debug/*.md"
  }
}

step "preflight" {
  progress          = "PREFLIGHT"
  continue_on_error = true
  call "git.status" {}
  gate {
    # Special case: a spec hash mismatch fails at once, with both hashes.
    rule "spec_hash_mismatch" {
      when = "inputs.spec_hash != '' && steps.spec_hash.status == 'completed' && steps.spec_hash.output?.sha256 != inputs.spec_hash"
      set = {
        issues = ["spec_hash_mismatch", "expected: ${inputs.spec_hash}", "actual: ${steps.spec_hash.output.sha256}"]
      }
      fail   = "halt"
      reason = "Preflight failed: spec_hash_mismatch (expected ${inputs.spec_hash}, actual ${steps.spec_hash.output.sha256})"
    }
    rule "all_clear" {
      when = "len(local.preflight_issues) == 0 && len(local.unresolved_debug) == 0"
    }
    rule "unresolved_debug" {
      when = "len(local.preflight_issues) == 0"
      log  = "Unresolved debug files: ${join(", ", local.unresolved_debug)}."
    }
    otherwise {
      set    = { issues = [for i in local.preflight_issues : "Preflight failed: ${i}"] }
      fail   = "halt"
      reason = "Preflight failed: ${join("; ", local.preflight_issues)}"
    }
  }
}

# The roadmap, for the phase's name, goal and description when the
# inputs do not give them (with an existing plan or in remediation, for
# those alone: triage_source reads PLAN.md then).
step "roadmap" {
  when        = "local.use_plan && inputs.roadmap_path != ''"
  skip_reason = "triage_source reads the roadmap, or there is none"
  call "file.read" {
    path = inputs.roadmap_path
  }
}

# STEP 0.5: TRIAGE, by the phase runner itself. The criteria come from
# PLAN.md (existing_plan, remediation) or the roadmap's entry for this
# phase (local.criteria).
step "triage_source" {
  when        = "local.use_plan || inputs.roadmap_path != ''"
  skip_reason = "no PLAN.md and no roadmap_path: no verifiable criteria"
  call "file.read" {
    path = local.use_plan ? "${local.phase_dir}/PLAN.md" : inputs.roadmap_path
  }
}

# Each criterion's command runs against the codebase (60 s, the sandbox's
# default); an item that passes completes, one that fails fails.
step "triage" {
  progress = "TRIAGE"
  # The routing is local.routing, which triage_log's gate reads too: the
  # template is evaluated before any gate.
  progress_done = "Routing: ${local.routing}"
  for_each      = "local.criteria"
  # A failing criterion is a finding, not a failure of the run: the gate
  # routes on the counts.
  on_item_failure = "continue"

  step "criterion" {
    continue_on_error = true
    shell {
      command = ["bash", "-c", item.command]
    }
    gate {
      rule "pass" {
        when = "steps.criterion.status == 'completed'"
      }
      otherwise {
        fail   = "fail"
        reason = substr(steps.criterion.error, 0, 200)
      }
    }
  }

  gate {
    rule "no_criteria" {
      when = "local.triage_total == 0"
      log  = "No verifiable criteria for triage -- routing to full pipeline."
    }
    otherwise {
      log = "Triage: ${steps.triage.output.completed}/${local.triage_total} criteria pass (pass ratio ${local.pass_ratio})."
    }
  }
}

# TRIAGE.json, written on both routes.
step "triage_log" {
  call "file.write" {
    path = "${local.phase_dir}/TRIAGE.json"
    content = jsonencode({
      phase_id         = inputs.phase_id
      timestamp        = timestamp()
      criteria_source  = local.triage_source
      criteria_checked = local.criteria_checked
      total_criteria   = local.triage_total
      passed_criteria  = steps.triage.output.completed
      pass_ratio       = local.pass_ratio
      routing_decision = local.routing
      skipped_steps    = local.routing == "verify_only" ? ["research", "plan", "plan_check", "execute"] : []
      note             = local.triage_total == 0 ? "no verifiable criteria for triage" : local.routing == "verify_only" ? "likely_implemented" : ""
    })
  }
  gate {
    rule "verify_only" {
      when = "local.routing == 'verify_only'"
      goto = "verify"
    }
    otherwise {}
  }
}
