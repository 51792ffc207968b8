# The failed endings of the return contract: what the orchestrator acts
# on. Every failed ending recommends halt or rollback, never proceed; a
# step that errors (an agent that exits 1, a timeout, an answer without
# JSON) halts with its error in the issues. Over the happy path
# (mocks.hcl), verification fails and every debug attempt leaves issues
# (failing.hcl).

include = ["mocks.hcl", "failing.hcl"]

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
  include = ["mocks.hcl"] # verification passes
  inputs  = { phase_id = "6.3" }
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
