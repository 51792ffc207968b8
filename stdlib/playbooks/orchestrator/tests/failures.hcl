# Failures of stdlib:orchestrator: a failed phase, a tripped per-phase cap,
# a roadmap that is missing or lacks the phases asked for.

include = ["mocks.hcl"]

mock "roadmap" {
  output = {
    exists  = true
    content = "# Roadmap\n\n## Phase 1: setup\n\n## Phase 2: build\nDepends on: Phase 1\n\n## Phase 3: docs\n"
  }
}

mock "run" {
  outputs = [
    {
      status         = "failed", alignment_score = null, recommendation = "rollback", summary = "Phase 1 failed: judge recommends rollback", commit_shas = [], automated_checks = {}, pipeline_steps = {}
      debug_attempts = 3, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = ["executor_wrong_approach"], scorecard = []
    },
    {
      status         = "completed", alignment_score = 9.5, recommendation = "proceed", summary = "at 9.5", commit_shas = [], automated_checks = {}, pipeline_steps = {}
      debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
    },
  ]
}

test "a failed phase halts the run" {
  expect {
    status         = "failed"
    recommendation = ""
    visits         = { run = 1, phase_start = 2, metrics = 1, completion_report = 1 }
    output = {
      phases = {
        "1" = { status = "failed", alignment_score = null, remediation_cycles = 0, force_incomplete = false, diagnostic_path = null, scores = [] }
        "2" = { status = "skipped", alignment_score = null, remediation_cycles = 0, force_incomplete = false, diagnostic_path = null, scores = [] }
        "3" = { status = "skipped", alignment_score = null, remediation_cycles = 0, force_incomplete = false, diagnostic_path = null, scores = [] }
      }
      aggregates = {
        phases_attempted           = 1, phases_succeeded = 0, phases_failed = 1, phases_human_deferred = 0, avg_alignment_score = null, success_rate = 0
        failure_taxonomy_histogram = { executor_wrong_approach = 1 }, total_debug_loops = 3, total_replan_attempts = 0
      }
    }
  }
}

test "complete mode runs the independent phases" {
  inputs = { complete = true }
  expect {
    status = "failed"
    visits = { run = 2, phase_start = 2 }
    output = {
      phases = {
        "1" = { status = "failed", alignment_score = null, remediation_cycles = 0, force_incomplete = false, diagnostic_path = null, scores = [] }
        "2" = { status = "skipped", alignment_score = null, remediation_cycles = 0, force_incomplete = false, diagnostic_path = null, scores = [] }
        "3" = { status = "completed", alignment_score = 9.5, remediation_cycles = 0, force_incomplete = false, diagnostic_path = null, scores = [9.5] }
      }
    }
  }
}

test "a per-phase cap fails the phase" {
  inputs = { phases = ["3"] }
  mock "run" {
    error      = "max_tokens: step used 612000 tokens (max 500000)"
    error_kind = "budget"
  }
  expect {
    status = "failed"
    visits = { run = 1, score = 0, phase_done = 0 }
    output = {
      phases = {
        "3" = { status = "failed", alignment_score = null, remediation_cycles = 0, force_incomplete = false, diagnostic_path = null, scores = [] }
      }
    }
  }
}

test "needs human verification ends the phase with that status" {
  inputs = { phases = ["3"] }
  mock "run" {
    output = {
      status         = "needs_human_verification", alignment_score = null, recommendation = "proceed", summary = "a checkpoint task", commit_shas = [], automated_checks = {}, pipeline_steps = {}
      debug_attempts = 0, replan_attempts = 0, human_verify_justification = { checkpoint_task_id = "03-02" }, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
    }
  }
  expect {
    status = "completed"
    visits = { run = 1, score = 0, diagnostic = 0, phase_done = 1 }
    output = {
      aggregates = {
        phases_attempted           = 1, phases_succeeded = 0, phases_failed = 0, phases_human_deferred = 1, avg_alignment_score = null, success_rate = 0
        failure_taxonomy_histogram = {}, total_debug_loops = 0, total_replan_attempts = 0
      }
    }
  }
}

test "no roadmap" {
  mock "roadmap" {
    output = { exists = false, content = "" }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    path           = ["learnings_reset", "roadmap", "metrics_file", "completion_report", "metrics"]
  }
}

test "a phase the roadmap does not have" {
  inputs = { phases = ["1", "9"] }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { spec_lock = 0, run = 0 }
  }
}

test "a roadmap without phase headings" {
  mock "roadmap" {
    output = { exists = true, content = "# Roadmap\n\nNothing planned yet.\n" }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { spec_lock = 0, run = 0 }
  }
}

test "a split request ends the phase with that status" {
  inputs = { phases = ["3"] }
  mock "run" {
    output = {
      status         = "split_request", alignment_score = null, recommendation = "proceed", summary = "the phase is too big: split it in two", commit_shas = [], automated_checks = {}, pipeline_steps = {}
      debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
    }
  }
  expect {
    status = "completed"
    visits = { run = 1, score = 0, diagnostic = 0, phase_done = 1 }
  }
}

test "a diagnostic that cannot be written is logged, and the phase passes" {
  mode   = "lenient"
  inputs = { phases = ["1"] }
  mock "run" {
    output = {
      status           = "completed", alignment_score = 8, recommendation = "proceed", summary = "at 8.0", commit_shas = [], automated_checks = {}, pipeline_steps = {}
      debug_attempts   = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], failure_categories = []
      criteria_results = [], scorecard = []
    }
  }
  mock "diagnostic" {
    error = "open .autopilot/diagnostics/phase-1-confidence.md: permission denied"
  }
  expect {
    status = "completed"
    visits = { diagnostic = 1, phase_done = 1 }
  }
}
