# The failed endings of the return contract: what the orchestrator acts
# on. Every failed ending recommends halt or rollback, never proceed; a
# step that errors (an agent that exits 1, a timeout, an answer without
# JSON) halts with its error in the issues.

mock "preflight" {
  output = { clean = true, files = [] }
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

mock "judge" {
  output = { recommendation = "proceed", concerns = ["one name is unclear"], notes = "The criteria are met." }
}

mock "rate" {
  output = { alignment_score = 9.2, scorecard = [], commands_run = ["go test ./... -> ok"] }
}

mock "debug" {
  outputs = [
    { fixed = false, changes = ["tried a cast"], commits = ["c1"], remaining_issues = ["loader.go:10 still does not compile"], failure_categories = [] },
    { fixed = false, changes = ["tried an import"], commits = ["c2"], remaining_issues = ["loader.go:12 still does not compile"], failure_categories = [] },
    { fixed = false, changes = ["tried a rewrite"], commits = ["c3"], remaining_issues = ["loader.go:14 still does not compile"], failure_categories = [] },
  ]
}

mock "bookkeeping" {
  exit_code = 0
}

mock "rollback" {
  output = { branch = "autopilot-diagnostic-phase-6.3", reverted = ["a1b2c3d", "b2c3d4e"], commit = "beefcafe" }
}

test "debug exhausted halts with every issue in order" {
  inputs = { phase_id = "6.3", last_checkpoint_sha = "0123abc" }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { debug = 3, verify = 4, rollback = 1 }
    output = {
      status            = "failed"
      recommendation    = "halt"
      debug_attempts    = 3
      diagnostic_branch = "autopilot-diagnostic-phase-6.3"
      issues = [
        "compile: does not compile",
        "compile error in loader.go",
        "Debug attempt 1 left: loader.go:10 still does not compile",
        "compile: does not compile",
        "compile error in loader.go",
        "Debug attempt 2 left: loader.go:12 still does not compile",
        "compile: does not compile",
        "compile error in loader.go",
        "Debug attempt 3 left: loader.go:14 still does not compile",
        "compile: does not compile",
        "compile error in loader.go",
      ]
    }
  }
}

# The rollback itself fails (a conflict, a hook): the gate's halt stands,
# and the issues say why nothing was reverted.
test "a failed rollback still halts and says why" {
  inputs = { phase_id = "6.3", last_checkpoint_sha = "0123abc" }
  mock "rollback" {
    error = "reverting 0123abc..HEAD: conflicts in loader.go"
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { rollback = 1, rolled_back = 1, postmortem = 1 }
    output = {
      recommendation     = "halt"
      rollback_performed = false
      diagnostic_branch  = null
    }
  }
}

test "an executor that exits 1 halts" {
  inputs = { phase_id = "6.3" }
  mock "execute_batch" {
    error      = "exit status 1"
    error_kind = "exit_status"
  }
  expect {
    status = "failed"
    visits = { verify = 0, postmortem = 1 }
    output = { status = "failed", recommendation = "halt" }
  }
}

test "a verifier timeout halts" {
  inputs = { phase_id = "6.3" }
  mock "verify" {
    error      = "timed out after 20m"
    error_kind = "timeout"
  }
  expect {
    status = "failed"
    visits = { judge = 0, postmortem = 1 }
    output = { status = "failed", recommendation = "halt" }
  }
}

test "a judge answer without JSON halts" {
  inputs = { phase_id = "6.3" }
  mock "verify" {
    output = {
      pass               = true
      automated_checks   = { compile = { status = true }, lint = { status = true } }
      criteria_results   = []
      commands_run       = ["go test ./... -> ok"]
      failures           = []
      failure_categories = []
    }
  }
  mock "judge" {
    error      = "the answer holds no JSON"
    error_kind = "no_json"
  }
  expect {
    status = "failed"
    visits = { rate = 0, postmortem = 1 }
    output = { status = "failed", recommendation = "halt" }
  }
}
