# Tests of stdlib:orchestrator: apl test stdlib:orchestrator.
#
# The roadmap has three phases: 2 depends on 1, 3 on none. The phase
# runner's return is mocked per call, in the order the phases run (1, 2,
# 3); file.read, file.write and the learnings reset run for real in a
# scratch directory.

include = ["mocks.hcl"]

mock "roadmap" {
  output = {
    exists  = true
    content = "# Roadmap\n\n## Phase 1: setup\n**Goal:** set up the project\n- README exists -- verified by: `test -f README.md`\n\n## Phase 2: build\n**Depends on:** Phase 1\n\n### Phase 3 - docs\n**Depends on**: Nothing (first phase)\n"
  }
}

mock "run" {
  output = {
    phase                      = "1"
    status                     = "completed"
    alignment_score            = 9.5
    recommendation             = "proceed"
    summary                    = "Phase completed at 9.5/10."
    commit_shas                = ["a1b2c3d"]
    automated_checks           = { compile = true, lint = "n/a" }
    pipeline_steps             = { verify = { status = "completed", agent_spawned = true } }
    debug_attempts             = 0
    replan_attempts            = 0
    human_verify_justification = null
    scorecard                  = [{ criterion = "README exists", score = 9.5, max_score = 10, evidence = "README.md:1", justification = "present" }]
    judge_concerns             = []
    criteria_results           = [{ criterion = "README exists", status = "verified", evidence = "README.md:1" }]
    failure_categories         = []
  }
}

test "three phases pass" {
  expect {
    status = "completed"
    path = ["learnings_reset", "roadmap", "spec_lock", "phases",
      "phase_start", "checkpoint", "run", "score", "assess", "phase_done",
      "phase_start", "checkpoint", "run", "score", "assess", "phase_done",
      "phase_start", "checkpoint", "run", "score", "assess", "phase_done",
    "metrics_file", "completion_report", "metrics"]
    output = {
      status = "completed"
      phases = {
        "1" = { status = "completed", alignment_score = 9.5, remediation_cycles = 0, force_incomplete = false, diagnostic_path = null, scores = [9.5] }
        "2" = { status = "completed", alignment_score = 9.5, remediation_cycles = 0, force_incomplete = false, diagnostic_path = null, scores = [9.5] }
        "3" = { status = "completed", alignment_score = 9.5, remediation_cycles = 0, force_incomplete = false, diagnostic_path = null, scores = [9.5] }
      }
    }
  }
}

test "selected phases only" {
  inputs = { phases = ["2", "3"] }
  expect {
    status = "completed"
    visits = { run = 2 }
    output = {
      aggregates = {
        phases_attempted           = 2, phases_succeeded = 2, phases_failed = 0, phases_human_deferred = 0, avg_alignment_score = 9.5, success_rate = 1
        failure_taxonomy_histogram = {}, total_debug_loops = 0, total_replan_attempts = 0
      }
    }
  }
}

test "one remediation cycle reaches the threshold" {
  inputs = { phases = ["1"] }
  mock "run" {
    outputs = [
      {
        status         = "completed", alignment_score = 8.5, recommendation = "proceed", summary = "at 8.5", commit_shas = ["a1"], automated_checks = {}, pipeline_steps = {}
        debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = ["the loader skips comments"], criteria_results = [], failure_categories = []
        scorecard      = [{ criterion = "comments are skipped", score = 7.5, max_score = 10, evidence = "loader.go:12", justification = "comments reach the parser" }]
      },
      {
        status         = "completed", alignment_score = 9.2, recommendation = "proceed", summary = "at 9.2", commit_shas = ["b2"], automated_checks = {}, pipeline_steps = {}
        debug_attempts = 1, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = ["executor_incomplete"], scorecard = []
      },
    ]
  }
  expect {
    status = "completed"
    path = ["learnings_reset", "roadmap", "spec_lock", "phases",
      "phase_start", "checkpoint", "run", "score", "assess", "run", "remediated", "score", "assess", "phase_done",
    "metrics_file", "completion_report", "metrics"]
    output = {
      phases = {
        "1" = { status = "completed", alignment_score = 9.2, remediation_cycles = 1, force_incomplete = false, diagnostic_path = null, scores = [8.5, 9.2] }
      }
      aggregates = {
        phases_attempted           = 1, phases_succeeded = 1, phases_failed = 0, phases_human_deferred = 0, avg_alignment_score = 9.2, success_rate = 1
        failure_taxonomy_histogram = { executor_incomplete = 1 }, total_debug_loops = 1, total_replan_attempts = 0
      }
    }
  }
}

test "remediation runs out: force_incomplete and a diagnostic" {
  inputs = { phases = ["3"] }
  mock "run" {
    output = {
      status           = "completed", alignment_score = 8, recommendation = "proceed", summary = "at 8.0", commit_shas = [], automated_checks = { compile = true }, pipeline_steps = {}
      debug_attempts   = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = ["docs are thin"], failure_categories = []
      criteria_results = [{ criterion = "docs exist", status = "partial", evidence = "docs/README.md:1" }]
      scorecard        = [{ criterion = "docs exist", score = 8, max_score = 10, evidence = "docs/README.md:1", justification = "two sections missing" }]
    }
  }
  expect {
    status = "completed"
    path = ["learnings_reset", "roadmap", "spec_lock", "phases",
      "phase_start", "checkpoint", "run", "score", "assess", "run", "remediated", "score", "assess", "run", "remediated", "score", "assess",
    "force_incomplete", "diagnostic", "phase_done", "metrics_file", "completion_report", "metrics"]
    output = {
      phases = {
        "3" = { status = "completed", alignment_score = 8, remediation_cycles = 2, force_incomplete = true, diagnostic_path = ".autopilot/diagnostics/phase-3-confidence.md", scores = [8, 8, 8] }
      }
    }
  }
}

test "lenient mode accepts 8 with a diagnostic" {
  mode   = "lenient"
  inputs = { phases = ["1"] }
  mock "run" {
    output = {
      status         = "completed", alignment_score = 8, recommendation = "proceed", summary = "at 8.0", commit_shas = [], automated_checks = {}, pipeline_steps = {}
      debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
    }
  }
  expect {
    status = "completed"
    visits = { run = 1, diagnostic = 1, force_incomplete = 0 }
    output = {
      phases = {
        "1" = { status = "completed", alignment_score = 8, remediation_cycles = 0, force_incomplete = false, diagnostic_path = ".autopilot/diagnostics/phase-1-confidence.md", scores = [8] }
      }
    }
  }
}

test "quality mode remediates 9.2" {
  mode   = "quality"
  inputs = { phases = ["1"] }
  mock "run" {
    outputs = [
      {
        status         = "completed", alignment_score = 9.2, recommendation = "proceed", summary = "at 9.2", commit_shas = [], automated_checks = {}, pipeline_steps = {}
        debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = ["one edge case"], criteria_results = [], failure_categories = [], scorecard = []
      },
      {
        status         = "completed", alignment_score = 9.6, recommendation = "proceed", summary = "at 9.6", commit_shas = [], automated_checks = {}, pipeline_steps = {}
        debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
      },
    ]
  }
  expect {
    status = "completed"
    visits = { run = 2, diagnostic = 0 }
    output = {
      phases = {
        "1" = { status = "completed", alignment_score = 9.6, remediation_cycles = 1, force_incomplete = false, diagnostic_path = null, scores = [9.2, 9.6] }
      }
    }
  }
}

test "quality mode remediates up to 3 cycles" {
  mode   = "quality"
  inputs = { phases = ["1"] }
  mock "run" {
    output = {
      status         = "completed", alignment_score = 9.2, recommendation = "proceed", summary = "at 9.2", commit_shas = [], automated_checks = {}, pipeline_steps = {}
      debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = ["one edge case"], criteria_results = [], failure_categories = [], scorecard = []
    }
  }
  expect {
    status = "completed"
    visits = { run = 4, force_incomplete = 1 }
    output = {
      phases = {
        "1" = { status = "completed", alignment_score = 9.2, remediation_cycles = 3, force_incomplete = true, diagnostic_path = null, scores = [9.2, 9.2, 9.2, 9.2] }
      }
    }
  }
}

test "remediation cycles are an input" {
  inputs = { phases = ["3"], max_remediation_cycles = 1 }
  mock "run" {
    output = {
      status         = "completed", alignment_score = 8, recommendation = "proceed", summary = "at 8.0", commit_shas = [], automated_checks = {}, pipeline_steps = {}
      debug_attempts = 0, replan_attempts = 0, human_verify_justification = null, judge_concerns = [], criteria_results = [], failure_categories = [], scorecard = []
    }
  }
  expect {
    status = "completed"
    visits = { run = 2, force_incomplete = 1 }
  }
}
