# Tests of stdlib:phase-runner: apl test stdlib:phase-runner.
#
# The shared mocks (mocks.hcl) are the happy path; each test mocks what
# it changes. Agent steps answer from mocks; call and shell steps without
# a mock run for real in a scratch directory (no git repository, so
# result is mocked).

include = ["mocks.hcl"]

# Skipped steps (spec_hash without spec_path, triage_source without a
# roadmap, diff_stat and rollback without a checkpoint) are not in a path.
test "pass path" {
  inputs = { phase_id = "6.3", phase_name = "config loader" }
  expect {
    status = "completed"
    path = ["locate", "base", "debug_files", "preflight", "triage_source", "triage", "triage_log", "research", "plan", "plan_check",
      "plan_tasks", "scope", "execute_batch", "batch_verify", "verify", "judge", "rate", "gate", "bookkeeping", "result",
    "trace_files", "trace_existing", "trace_append", "trace_spans"]
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
  include = ["failing.hcl"]
  inputs  = { phase_id = "6.3", last_checkpoint_sha = "0123abc" }
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
    agent "debugger" {
      error      = "autopilot-debugger: no such agent type"
      error_kind = "unavailable"
    }
    agent "gsd_debugger" {
      output = { fixed = true, changes = ["fixed the test"], commits = ["d4e5f6a"], remaining_issues = [], failure_categories = [] }
    }
  }
  expect {
    status = "completed"
    visits = { debug = 1, verify = 2 }
    agents = { debug = "gsd_debugger" }
    output = { debug_attempts = 1, commit_shas = ["a1b2c3d", "b2c3d4e", "d4e5f6a"] }
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
    path = ["locate", "debug_files", "preflight", "triage_source", "triage", "triage_log", "research", "plan", "plan_check",
      "plan_tasks", "scope", "execute_batch", "batch_verify", "verify", "judge", "rate", "gate", "bookkeeping", "rollback", "rolled_back",
    "postmortem", "learnings_file", "learnings", "trace_files", "trace_existing", "trace_append", "trace_spans"]
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
    output = { clean = false, files = [{ path = "main.go", status = " M" }, { path = "notes.txt", status = "??" }] }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    path           = ["locate", "base", "debug_files", "preflight", "postmortem", "learnings_file", "learnings", "trace_files", "trace_existing", "trace_append", "trace_spans"]
    output = {
      issues          = ["Preflight failed: working tree not clean: main.go"]
      alignment_score = null
      tasks_completed = "0/0"
      pipeline_steps = {
        preflight  = { status = "fail", agent_spawned = false }
        triage     = { status = "full_pipeline", agent_spawned = false, pass_ratio = 0 }
        research   = { status = "skipped", agent_spawned = false }
        plan       = { status = "skipped", agent_spawned = false }
        plan_check = { status = "skipped", agent_spawned = false }
        execute    = { status = "skipped", agent_spawned = false }
        verify     = { status = "skipped", agent_spawned = false }
        judge      = { status = "skipped", agent_spawned = false }
        rate       = { status = "skipped", agent_spawned = false }
      }
    }
  }
}

test "untracked files leave the tree clean" {
  inputs = { phase_id = "6.3" }
  mock "preflight" {
    output = { clean = false, files = [{ path = "notes.txt", status = "??" }] }
  }
  expect {
    status = "completed"
    visits = { triage = 1, research = 1 }
  }
}

test "a completed phase without EXECUTION-LOG.md fails the preflight" {
  inputs = { phase_id = "6.3", completed_phase_dirs = [".planning/phases/06.1-parser/", ".planning/phases/06.2-lexer"] }
  mock "dependencies" {
    output = { matches = [".planning/phases/06.1-parser/EXECUTION-LOG.md"] }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { triage = 0, research = 0 }
    output         = { issues = ["Preflight failed: dependency not complete: .planning/phases/06.2-lexer has no EXECUTION-LOG.md"] }
  }
}

# No agent is called: the hash is the playbook's own (file.sha256).
test "spec hash mismatch names both hashes" {
  inputs = { phase_id = "6.3", spec_path = "SPEC.md", spec_hash = "abc123" }
  mock "spec_hash" {
    output = { sha256 = "def456", size = 10 }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    path           = ["locate", "base", "spec_hash", "debug_files", "preflight", "postmortem", "learnings_file", "learnings", "trace_files", "trace_existing", "trace_append", "trace_spans"]
    output         = { issues = ["spec_hash_mismatch", "expected: abc123", "actual: def456"] }
  }
}

test "matching spec hash passes" {
  inputs = { phase_id = "6.3", spec_path = "SPEC.md", spec_hash = "abc123" }
  mock "spec_hash" {
    output = { sha256 = "abc123", size = 10 }
  }
  expect {
    status = "completed"
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

# STEP 4.6's checks: an integer alignment_score is rejected by the
# answer's text (a mock is sent as JSON, so 9 is written "9" and 8.5
# "8.5"; "9.0" is in the end-to-end test), and so is an empty commands_run.
test "a decimal score passes the first time" {
  inputs = { phase_id = "6.3" }
  mock "rate" {
    outputs = [
      { alignment_score = 8.5, scorecard = [], commands_run = ["go test ./... -> ok"] },
      { alignment_score = 9.9, scorecard = [], commands_run = ["go test ./... -> ok"] },
    ]
  }
  expect {
    status = "completed"
    output = { alignment_score = 8.5 }
  }
}

test "an integer score three times fails the rating" {
  inputs = { phase_id = "6.3" }
  mock "rate" {
    output = { alignment_score = 9, scorecard = [], commands_run = ["go test ./... -> ok"] }
  }
  expect {
    status = "failed"
    visits = { gate = 0, postmortem = 1, learnings = 1, trace_spans = 1 }
  }
}

test "empty commands_run in the rating is rejected" {
  inputs = { phase_id = "6.3" }
  mock "rate" {
    outputs = [
      { alignment_score = 9.5, scorecard = [], commands_run = [] },
      { alignment_score = 9.4, scorecard = [], commands_run = ["go test ./... -> ok"] },
    ]
  }
  expect {
    status = "completed"
    output = { alignment_score = 9.4 }
  }
}

test "quality mode debugs nothing at 9.2 but does not pass it" {
  mode   = "quality"
  inputs = { phase_id = "6.3" }
  expect {
    status = "completed"
    visits = { debug = 0, research = 1 }
    output = { alignment_score = 9.2, recommendation = "proceed" }
  }
}

test "a failed run lists its issues in order" {
  include = ["failing.hcl"]
  inputs  = { phase_id = "6.3", max_debug_attempts = 2 }
  mock "debug" {
    outputs = [
      { fixed = false, changes = ["added the import"], commits = ["c1"], remaining_issues = ["loader.go:3 type mismatch"], failure_categories = [] },
      { fixed = false, changes = ["changed the type"], commits = ["c2"], remaining_issues = ["loader.go:9 unused variable"], failure_categories = [] },
    ]
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { debug = 2, verify = 3 }
    output = {
      debug_attempts = 2
      commit_shas    = ["a1b2c3d", "b2c3d4e", "c1", "c2"]
      issues = [
        "compile: does not compile", "compile error in loader.go",
        "Debug attempt 1 left: loader.go:3 type mismatch",
        "compile: does not compile", "compile error in loader.go",
        "Debug attempt 2 left: loader.go:9 unused variable",
        "compile: does not compile", "compile error in loader.go",
      ]
    }
  }
}

test "the gsd-debugger fallback makes the same attempt" {
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
  mock "debug" {
    agent "debugger" {
      error = "autopilot-debugger: no such agent type"
    }
    agent "gsd_debugger" {
      output = { fixed = false, changes = [], commits = [], remaining_issues = ["compile error"], failure_categories = [] }
    }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { debug = 1, verify = 2 }
    agents         = { debug = "gsd_debugger" }
    output         = { debug_attempts = 1 }
  }
}

# A debugger that ran and timed out is no reason to fall back: the attempt
# is spent, and with max_debug_attempts 1 the phase halts.
test "a debugger timeout spends the attempt" {
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
  mock "debug" {
    error      = "autopilot-debugger: timed out after 10m"
    error_kind = "timeout"
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { debug = 1, verify = 2 }
    agents         = { debug = "debugger" }
    output = {
      debug_attempts = 1
      issues         = ["compile: ", "compile error", "Debug attempt 1 failed: autopilot-debugger: timed out after 10m", "compile: ", "compile error"]
    }
  }
}

# Unresolved debug files do not stop the phase: the preflight says which.
test "unresolved debug files are logged and the phase goes on" {
  inputs = { phase_id = "6.3", phase_name = "config loader" }
  mock "debug_files" {
    output = { matches = [".planning/debug/flaky-login.md"] }
  }
  expect {
    status = "completed"
    visits = { preflight = 1, research = 1, result = 1 }
  }
}

# Each step's trace file goes into TRACE.jsonl once: a file TRACE.jsonl
# already holds is skipped, and a trace that cannot be appended fails
# only its item, never the phase.
test "step traces are gathered into TRACE.jsonl, each once" {
  inputs = { phase_id = "6.3", phase_name = "config loader" }
  mock "trace_files" {
    output = { matches = [".planning/phases/6.3-config-loader/research-trace.jsonl", ".planning/phases/6.3-config-loader/plan-trace.jsonl"] }
  }
  mock "trace_existing" {
    output = { exists = true, content = "{\"step\":\"research\"}\n" }
  }
  mock "trace_read" {
    outputs = [
      { exists = true, content = "{\"step\":\"research\"}\n" },
      { exists = true, content = "{\"step\":\"plan\"}" },
    ]
  }
  mock "trace_write" {
    error = "write TRACE.jsonl: no space left on device"
  }
  expect {
    status = "completed"
    visits = { trace_read = 2, trace_write = 1, trace_spans = 1 }
    output = { status = "completed", recommendation = "proceed" }
  }
}
