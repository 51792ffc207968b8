# The protocol's domain events as the orchestrator records them (output
# events: the event log of .autopilot/state.json without timestamps), and
# the circuit breaker counting the phases' work.

include = ["mocks.hcl"]

mock "roadmap" {
  output = {
    exists  = true
    content = "# Roadmap\n\n## Phase 1: setup\n\n## Phase 2: build\n**Depends on:** Phase 1\n\n## Phase 3: docs\n\n## Phase 4: api\n\n## Phase 5: cli\n"
  }
}

mock "run" {
  output = {
    status         = "completed", alignment_score = 9.5, recommendation = "proceed", summary = "at 9.5", commit_shas = [], automated_checks = {}, pipeline_steps = {}
    debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
  }
}

test "a remediation cycle's events: cycle 1, old and new score, then run_completed" {
  inputs = { phases = ["1"] }
  mock "run" {
    outputs = [
      {
        status         = "completed", alignment_score = 8.2, recommendation = "proceed", summary = "at 8.2", commit_shas = [], automated_checks = {}, pipeline_steps = {}
        debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = ["naming"], criteria_results = [], failure_categories = []
        scorecard      = [{ criterion = "comments are skipped", score = 7.5, max_score = 10, evidence = "loader.go:12", justification = "comments reach the parser" }]
      },
      {
        status         = "completed", alignment_score = 9.3, recommendation = "proceed", summary = "at 9.3", commit_shas = [], automated_checks = {}, pipeline_steps = {}
        debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
      },
    ]
  }
  expect {
    status = "completed"
    output = {
      events = [
        { event = "run_started", phase = null, details = { total_phases = 1, pass_threshold = 9, mode = "" } },
        { event = "phase_started", phase = "1", details = { phase_id = "1", phase_name = "setup" } },
        { event = "remediation_started", phase = "1", details = { phase_id = "1", cycle = 1, current_score = 8.2, pass_threshold = 9, feedback_items = 2 } },
        { event = "remediation_completed", phase = "1", details = { phase_id = "1", cycle = 1, old_score = 8.2, new_score = 9.3, improved = true, reached_threshold = true } },
        { event = "phase_completed", phase = "1", details = { phase_id = "1", alignment_score = 9.3, remediation_cycles = 1, force_incomplete = false } },
        { event = "run_completed", phase = null, details = { recommendation = "", failed_phases = [], phases_completed = 1, phases_failed = 0, phases_deferred = 0, total_phases = 1 } },
      ]
    }
  }
}

# A rater's scorecard may hold a criterion without a score: it is a
# deficiency to remediate, not a crash.
test "a scorecard entry with a null score is remediation feedback" {
  inputs = { phases = ["1"] }
  mock "run" {
    outputs = [
      {
        status         = "completed", alignment_score = 8.2, recommendation = "proceed", summary = "at 8.2", commit_shas = [], automated_checks = {}, pipeline_steps = {}
        debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = []
        scorecard      = [{ criterion = "comments are skipped", score = null, justification = "not scored" }, { criterion = "tests pass", score = 9.5, max_score = null }]
      },
      {
        status         = "completed", alignment_score = 9.3, recommendation = "proceed", summary = "at 9.3", commit_shas = [], automated_checks = {}, pipeline_steps = {}
        debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
      },
    ]
  }
  expect {
    status = "completed"
    visits = { run = 2 }
    output = {
      phases = {
        "1" = { status = "completed", alignment_score = 9.3, remediation_cycles = 1, force_incomplete = false, diagnostic_path = null, scores = [8.2, 9.3] }
      }
    }
  }
}

test "complete mode records phase_skipped for a phase blocked by a failed one" {
  inputs = { complete = true, phases = ["1", "2", "3"] }
  mock "run" {
    outputs = [
      {
        status         = "failed", alignment_score = null, recommendation = "halt", summary = "Phase 1 failed", commit_shas = [], automated_checks = {}, pipeline_steps = {}
        debug_attempts = 3, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
      },
      {
        status         = "completed", alignment_score = 9.5, recommendation = "proceed", summary = "at 9.5", commit_shas = [], automated_checks = {}, pipeline_steps = {}
        debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
      },
    ]
  }
  expect {
    status = "failed"
    visits = { run = 2 }
    output = {
      events = [
        { event = "run_started", phase = null, details = { total_phases = 3, pass_threshold = 9, mode = "" } },
        { event = "phase_started", phase = "1", details = { phase_id = "1", phase_name = "setup" } },
        { event = "phase_failed", phase = "1", details = { phase_id = "1", reason = "Phase 1 failed", recommendation = "halt" } },
        { event = "phase_started", phase = "3", details = { phase_id = "3", phase_name = "docs" } },
        { event = "phase_completed", phase = "3", details = { phase_id = "3", alignment_score = 9.5, remediation_cycles = 0, force_incomplete = false } },
        { event = "phase_skipped", phase = "2", details = { phase_id = "2", reason = "blocked_by_phase_1", blocking_phase = "1" } },
        { event = "run_halted", phase = null, details = { recommendation = "", failed_phases = ["1"], phases_completed = 1, phases_failed = 1, phases_deferred = 0, total_phases = 3 } },
      ]
    }
  }
}

# Three consecutive phases without progress open the
# breaker; the orchestrator's own steps between them do not count.
test "three failed phases in a row open the circuit breaker" {
  inputs = { complete = true, phases = ["1", "3", "4", "5"] }
  mock "run" {
    output = {
      status         = "failed", alignment_score = null, recommendation = "halt", summary = "failed", commit_shas = [], automated_checks = {}, pipeline_steps = {}
      debug_attempts = 3, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
    }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { run = 3 }
    output = {
      circuit_breaker = { state = "open", consecutive_no_progress = 3, consecutive_same_error = 0 }
    }
  }
}
