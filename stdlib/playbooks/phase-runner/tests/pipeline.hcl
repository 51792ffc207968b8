# Tests of stdlib:phase-runner: apl test stdlib:phase-runner.
#
# The mocks at the top level are the happy path; each test mocks what it
# changes. Agent steps answer from mocks; call and shell steps without a
# mock run for real in a scratch directory (no git repository, so result
# is mocked).

mock "preflight" {
  output = { all_clear = true, spec_hash_match = true, working_tree_clean = true, dependencies_met = true, unresolved_debug = [], issues = [] }
}

mock "research" {
  output = { key_findings = ["The loader exists."], recommended_approach = "Extend it.", risks = [], open_questions = [] }
}

mock "plan" {
  output = { plans_created = 1, waves = 1, total_tasks = 2, complexity = "medium", dependencies = [], concerns = [] }
}

mock "plan_check" {
  output = { pass = true, issues = [], confidence = 8, blocker_count = 0, warning_count = 0 }
}

mock "execute_batch" {
  output = { tasks_completed = "2/2", tasks_failed = "0/2", commit_shas = ["a1b2c3d", "b2c3d4e"], evidence = [], deviations = [] }
}

mock "execute_task" {
  output = { tasks_completed = "1/1", tasks_failed = "0/1", commit_shas = ["e5f6a7b"], evidence = [], deviations = [] }
}

mock "mini_verify" {
  output = { task_id = "01-01", pass = true, criteria_results = [{ criterion = "tests pass", status = "pass" }], concerns = [], commands_run = ["go test ./... -> ok"] }
}

mock "task_debug" {
  output = { fixed = false, changes = [], commits = [], remaining_issues = ["still failing"], failure_categories = [] }
}

mock "verify" {
  output = {
    pass               = true
    automated_checks   = { compile = { status = true, detail = "ok" }, lint = { status = true, detail = "ok" }, build = { status = "n/a", detail = "no build command" } }
    criteria_results   = [{ criterion = "tests pass", status = "verified", evidence = "go test ./... -> ok" }]
    commands_run       = ["go build ./... -> ok", "go test ./... -> ok"]
    failures           = []
    failure_categories = []
  }
}

mock "judge" {
  output = { recommendation = "proceed", concerns = ["one name is unclear"], notes = "The criteria are met." }
}

mock "rate" {
  output = { alignment_score = 9.2, scorecard = [], commands_run = ["go test ./... -> ok"] }
}

mock "debug" {
  output = { fixed = true, changes = ["fixed the test"], commits = ["c3d4e5f"], remaining_issues = [], failure_categories = [] }
}

mock "debug_fallback" {
  output = { fixed = true, changes = ["fixed the test"], commits = ["d4e5f6a"], remaining_issues = [], failure_categories = [] }
}

mock "result" {
  output = { sha = "f00dfeed", branch = "main" }
}

# Skipped steps (spec_hash without spec_path, triage_source without a
# roadmap, diff_stat and rollback without a checkpoint) are not in a path.
test "pass path" {
  inputs = { phase_id = "6.3", phase_name = "config loader" }
  expect {
    status = "completed"
    path = ["locate", "preflight", "triage", "triage_log", "research", "plan", "plan_check",
    "plan_tasks", "scope", "execute_batch", "verify", "judge", "rate", "gate", "result"]
    output = {
      phase              = "6.3"
      status             = "completed"
      alignment_score    = 9.2
      recommendation     = "proceed"
      tasks_completed    = "2/2"
      commit_shas        = ["a1b2c3d", "b2c3d4e"]
      automated_checks   = { compile = true, lint = true, build = "n/a" }
      issues             = []
      debug_attempts     = 0
      replan_attempts    = 0
      checkpoint_sha     = "f00dfeed"
      rollback_performed = false
    }
  }
}

test "below threshold completes for remediation" {
  inputs = { phase_id = "6.3" }
  mock "rate" {
    output = { alignment_score = 8.2, scorecard = [], commands_run = ["go test ./... -> ok"] }
  }
  expect {
    status = "completed"
    visits = { gate = 1, result = 1, debug = 0, research = 1 }
    output = { alignment_score = 8.2, recommendation = "proceed" }
  }
}

test "lenient mode passes at 7.5" {
  mode   = "lenient"
  inputs = { phase_id = "6.3" }
  mock "rate" {
    output = { alignment_score = 7.5, scorecard = [], commands_run = ["go test ./... -> ok"] }
  }
  expect {
    status = "completed"
    visits = { research = 1, debug = 0 }
  }
}

test "low alignment replans once" {
  inputs = { phase_id = "6.3" }
  mock "rate" {
    outputs = [
      { alignment_score = 5.5, scorecard = [], commands_run = ["go test ./... -> fail"] },
      { alignment_score = 9.3, scorecard = [], commands_run = ["go test ./... -> ok"] },
    ]
  }
  expect {
    status = "completed"
    visits = { research = 2, plan = 2, verify = 2, gate = 2 }
    output = { alignment_score = 9.3, replan_attempts = 1 }
  }
}

test "replan exhausted fails with halt" {
  inputs = { phase_id = "6.3" }
  mock "rate" {
    output = { alignment_score = 5.5, scorecard = [], commands_run = ["go test ./... -> fail"] }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { research = 2, gate = 2, rollback = 0, rolled_back = 1, result = 0, postmortem = 1, learnings = 1 }
    output         = { replan_attempts = 1, recommendation = "halt", rollback_performed = false }
  }
}

test "debug loop recovers" {
  inputs = { phase_id = "6.3" }
  mock "verify" {
    outputs = [
      {
        pass               = false
        automated_checks   = { compile = { status = true, detail = "ok" }, lint = { status = false, detail = "2 errors" } }
        criteria_results   = []
        commands_run       = ["golangci-lint run -> 2 errors"]
        failures           = ["lint: 2 errors"]
        failure_categories = [{ failure = "lint: 2 errors", category = "lint_failure" }]
      },
      {
        pass               = true
        automated_checks   = { compile = { status = true, detail = "ok" }, lint = { status = true, detail = "ok" } }
        criteria_results   = []
        commands_run       = ["golangci-lint run -> ok"]
        failures           = []
        failure_categories = []
      },
    ]
  }
  expect {
    status = "completed"
    visits = { debug = 1, verify = 2, judge = 2, rate = 2, gate = 2 }
    output = { debug_attempts = 1, commit_shas = ["a1b2c3d", "b2c3d4e", "c3d4e5f"] }
  }
}

test "debug exhausted after 3 attempts rolls back" {
  inputs = { phase_id = "6.3", last_checkpoint_sha = "0123abc" }
  mock "verify" {
    output = {
      pass               = false
      automated_checks   = { compile = { status = false, detail = "does not compile" }, lint = { status = true } }
      criteria_results   = []
      commands_run       = ["go build ./... -> error"]
      failures           = ["compile error in loader.go"]
      failure_categories = [{ failure = "compile error", category = "compilation_failure" }]
    }
  }
  mock "debug" {
    output = { fixed = false, changes = ["tried"], commits = [], remaining_issues = ["still does not compile"], failure_categories = [{ failure = "compile", category = "compilation_failure" }] }
  }
  mock "rollback" {
    output = { branch = "autopilot-diagnostic-phase-6.3", reverted = ["a1b2c3d"], commit = "beefcafe" }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { debug = 3, verify = 4, gate = 4, rollback = 1, rolled_back = 1, result = 0, postmortem = 1 }
    output = {
      debug_attempts     = 3
      rollback_performed = true
      rollback_from      = "0123abc"
      rollback_to        = "beefcafe"
      diagnostic_branch  = "autopilot-diagnostic-phase-6.3"
    }
  }
}

test "max_debug_attempts 1 stops after one debug" {
  inputs = { phase_id = "6.3", max_debug_attempts = 1 }
  mock "verify" {
    output = {
      pass               = false
      automated_checks   = { compile = { status = false }, lint = { status = true } }
      criteria_results   = []
      commands_run       = ["go build ./... -> error"]
      failures           = ["compile error"]
      failure_categories = []
    }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { debug = 1, gate = 2, rollback = 0, rolled_back = 1 }
  }
}

test "judge debug recommendation enters the debug loop" {
  inputs = { phase_id = "6.3" }
  mock "judge" {
    outputs = [
      { recommendation = "debug", concerns = ["an edge case is missed"] },
      { recommendation = "proceed", concerns = ["minor naming"] },
    ]
  }
  expect {
    status = "completed"
    visits = { debug = 1, judge = 2 }
  }
}

test "empty commands_run is rubber-stamping" {
  inputs = { phase_id = "6.3" }
  mock "verify" {
    outputs = [
      {
        pass               = true
        automated_checks   = { compile = { status = true }, lint = { status = true } }
        criteria_results   = []
        commands_run       = []
        failures           = []
        failure_categories = []
      },
      {
        pass               = true
        automated_checks   = { compile = { status = true }, lint = { status = true } }
        criteria_results   = []
        commands_run       = ["go test ./... -> ok"]
        failures           = []
        failure_categories = []
      },
    ]
  }
  expect {
    status = "completed"
    visits = { debug = 1, verify = 2 }
  }
}

test "autopilot-debugger falls back to gsd-debugger" {
  inputs = { phase_id = "6.3" }
  mock "verify" {
    outputs = [
      {
        pass               = false
        automated_checks   = { compile = { status = false }, lint = { status = true } }
        criteria_results   = []
        commands_run       = ["go build ./... -> error"]
        failures           = ["compile error"]
        failure_categories = []
      },
      {
        pass               = true
        automated_checks   = { compile = { status = true }, lint = { status = true } }
        criteria_results   = []
        commands_run       = ["go build ./... -> ok"]
        failures           = []
        failure_categories = []
      },
    ]
  }
  mock "debug" {
    error = "autopilot-debugger: no such agent type"
  }
  expect {
    status = "completed"
    visits = { debug = 1, debug_fallback = 1, verify = 2 }
    output = { debug_attempts = 2 }
  }
}

test "judge rollback reverts to the checkpoint" {
  inputs = { phase_id = "6.3", last_checkpoint_sha = "0123abc" }
  mock "judge" {
    output = { recommendation = "rollback", concerns = ["wrong approach"], notes = "The loader was rewritten." }
  }
  mock "rollback" {
    output = { branch = "autopilot-diagnostic-phase-6.3", reverted = ["a1b2c3d", "b2c3d4e"], commit = "beefcafe" }
  }
  expect {
    status         = "failed"
    recommendation = "rollback"
    path = ["locate", "preflight", "triage", "triage_log", "research", "plan", "plan_check",
      "plan_tasks", "scope", "execute_batch", "verify", "judge", "rate", "gate", "rollback", "rolled_back",
    "root_cause", "postmortem", "learnings_file", "learnings"]
    output = { rollback_performed = true, diagnostic_branch = "autopilot-diagnostic-phase-6.3", recommendation = "rollback" }
  }
}

test "judge halt without a checkpoint fails" {
  inputs = { phase_id = "6.3" }
  mock "judge" {
    output = { recommendation = "halt", concerns = ["the spec is contradicted"] }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { rollback = 0, rolled_back = 1, postmortem = 1, learnings = 1 }
    output         = { rollback_performed = false, diagnostic_branch = null }
  }
}

test "integer score is rejected and re-rated" {
  inputs = { phase_id = "6.3" }
  mock "rate" {
    outputs = [
      { alignment_score = 9, scorecard = [], commands_run = ["go test ./... -> ok"] },
      { alignment_score = 9.1, scorecard = [], commands_run = ["go test ./... -> ok"] },
    ]
  }
  expect {
    status = "completed"
    output = { alignment_score = 9.1 }
  }
}

test "preflight failure returns at once" {
  inputs = { phase_id = "6.3" }
  mock "preflight" {
    output = { all_clear = false, spec_hash_match = true, working_tree_clean = false, dependencies_met = true, unresolved_debug = [], issues = ["working tree not clean"] }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    path           = ["locate", "preflight", "root_cause", "postmortem", "learnings_file", "learnings"]
    output = {
      issues          = ["Preflight failed: working tree not clean"]
      alignment_score = null
      tasks_completed = "0/0"
    }
  }
}

test "spec hash mismatch names both hashes" {
  inputs = { phase_id = "6.3", spec_hash = "abc123" }
  mock "preflight" {
    output = { all_clear = false, spec_hash_match = false, working_tree_clean = true, dependencies_met = true, unresolved_debug = [], issues = ["spec_hash_mismatch"] }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    output         = { issues = ["spec_hash_mismatch", "expected: abc123", "actual: unknown"] }
  }
}

test "plan check retries with the checker's issues" {
  inputs = { phase_id = "6.3" }
  mock "plan_check" {
    outputs = [
      { pass = false, issues = [{ severity = "blocker", description = "criterion without a command" }], confidence = 4 },
      { pass = true, issues = [], confidence = 8 },
    ]
  }
  expect {
    status = "completed"
    visits = { plan = 2, plan_check = 2, research = 1 }
  }
}

test "plan check fails 3 times" {
  inputs = { phase_id = "6.3" }
  mock "plan_check" {
    output = { pass = false, issues = [{ severity = "blocker", description = "no tests" }], confidence = 3 }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { plan = 3, plan_check = 3, execute_batch = 0, postmortem = 1 }
    output         = { issues = ["plan check: no tests"] }
  }
}

test "existing plan skips research and plan" {
  inputs = { phase_id = "6.3", existing_plan = true }
  expect {
    status = "completed"
    visits = { research = 0, plan = 0, plan_check = 1, triage_source = 1 }
  }
}

test "skip_research goes to plan" {
  inputs = { phase_id = "6.3", skip_research = true }
  expect {
    status = "completed"
    visits = { research = 0, plan = 1 }
  }
}

test "remediation mode skips research and planning" {
  inputs = { phase_id = "6.3", remediation_cycle = 1, remediation_feedback = ["error messages name the file"] }
  expect {
    status = "completed"
    visits = { research = 0, plan = 0, plan_check = 1, execute_batch = 1 }
  }
}
