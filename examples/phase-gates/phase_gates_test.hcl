# Tests of the phase-gates playbook: apl test examples/phase-gates.
#
# The mocks at the top level are the happy path: each test uses them for
# every step it does not mock itself. Agent steps always answer from a
# mock; preflight and rollback run for real in a scratch directory.

mock "research" {
  output = "I read the roadmap.\n\nSUMMARY\n- The phase adds a config loader and its tests."
}

mock "plan" {
  output = "Wrote PLAN.md with 2 tasks.\n\nSUMMARY\n- Task 1: config loader. Task 2: tests."
}

mock "plan_check" {
  output = { pass = true, confidence = 8, issues = [] }
}

mock "execute" {
  output = { tasks_completed = 2, commits = ["a1b2c3d", "e4f5a6b"], commands_run = ["go test ./..."] }
}

mock "verify" {
  output = {
    pass             = true
    automated_checks = [{ name = "build", pass = true }, { name = "test", pass = true }]
    issues           = []
  }
}

mock "judge" {
  output = { recommendation = "proceed", concerns = [], reasoning = "All criteria are met." }
}

mock "rate" {
  output = { alignment_score = 9.2 }
}

mock "debug" {
  output = { fixed = true, remaining_issues = [] }
}

# result asks git for HEAD; the scratch directory is no repository.
mock "result" {
  output = "a1b2c3d\n"
}

test "pass path" {
  inputs = { phase_id = "6.3" }
  expect {
    status = "completed"
    path   = ["preflight", "research", "plan", "plan_check", "execute", "verify", "judge", "rate", "gate", "result"]
    output = {
      phase_id        = "6.3"
      status          = "completed"
      recommendation  = ""
      alignment_score = 9.2
      debug_attempts  = 0
      replan_attempts = 0
      plan_checks     = 1
      checkpoint_sha  = "a1b2c3d"
    }
  }
}

test "below threshold completes" {
  inputs = { phase_id = "6.3" }
  mode   = "quality"
  expect {
    status = "completed"
    visits = { result = 1, debug = 0, rollback = 0 }
  }
}

test "existing plan skips research and planning" {
  inputs = { phase_id = "6.3", existing_plan = true }
  expect {
    status = "completed"
    path   = ["preflight", "plan_check", "execute", "verify", "judge", "rate", "gate", "result"]
  }
}

test "debug loop recovers" {
  inputs = { phase_id = "6.3" }
  mock "verify" {
    outputs = [
      {
        pass             = false
        automated_checks = [{ name = "build", pass = true }, { name = "test", pass = false }]
        issues           = ["TestLoad fails: nil map"]
      },
      {
        pass             = true
        automated_checks = [{ name = "build", pass = true }, { name = "test", pass = true }]
        issues           = []
      },
    ]
  }
  expect {
    status = "completed"
    path = [
      "preflight", "research", "plan", "plan_check", "execute", "verify", "judge", "rate", "gate",
      "debug", "verify", "judge", "rate", "gate", "result",
    ]
    visits = { debug = 1, verify = 2 }
    output = { debug_attempts = 1 }
  }
}

test "debug loop exhausted rolls back" {
  inputs = { phase_id = "6.3" }
  mock "verify" {
    output = {
      pass             = false
      automated_checks = [{ name = "test", pass = false }]
      issues           = ["TestLoad fails: nil map"]
    }
  }
  mock "debug" {
    output = { fixed = false, remaining_issues = ["TestLoad still fails"] }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { debug = 3, verify = 4, rollback = 1, result = 0 }
    output         = { debug_attempts = 3, recommendation = "halt" }
  }
}

test "low alignment replans" {
  inputs = { phase_id = "6.3" }
  mock "rate" {
    outputs = [{ alignment_score = 5.5 }, { alignment_score = 9.2 }]
  }
  expect {
    status = "completed"
    path = [
      "preflight", "research", "plan", "plan_check", "execute", "verify", "judge", "rate", "gate",
      "research", "plan", "plan_check", "execute", "verify", "judge", "rate", "gate", "result",
    ]
    output = { replan_attempts = 1, alignment_score = 9.2 }
  }
}

test "replan exhausted rolls back" {
  inputs = { phase_id = "6.3" }
  mock "rate" {
    output = { alignment_score = 5.4 }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { research = 2, rollback = 1 }
    output         = { replan_attempts = 1 }
  }
}

test "judge rollback" {
  inputs = { phase_id = "6.3" }
  mock "judge" {
    output = { recommendation = "rollback", concerns = ["deleted the public API"], reasoning = "The change breaks callers." }
  }
  expect {
    status         = "failed"
    recommendation = "rollback"
    path           = ["preflight", "research", "plan", "plan_check", "execute", "verify", "judge", "rate", "gate", "rollback", "postmortem", "learnings"]
  }
}

test "judge halt" {
  inputs = { phase_id = "6.3" }
  mock "judge" {
    output = { recommendation = "halt", concerns = ["spec contradiction"], reasoning = "The spec contradicts itself." }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { rollback = 1, result = 0 }
  }
}

test "plan check retry" {
  inputs = { phase_id = "6.3" }
  mock "plan_check" {
    outputs = [
      { pass = false, confidence = 4, issues = ["task 2 has no verification command"] },
      { pass = true, confidence = 8, issues = [] },
    ]
  }
  expect {
    status = "completed"
    visits = { plan = 2, plan_check = 2 }
    output = { plan_checks = 2 }
  }
}

test "plan check exhausted" {
  inputs = { phase_id = "6.3" }
  mock "plan_check" {
    output = { pass = false, confidence = 4, issues = ["task 2 has no verification command"] }
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    path = [
      "preflight", "research", "plan", "plan_check",
      "plan", "plan_check", "plan", "plan_check", "plan", "plan_check",
      "postmortem", "learnings",
    ]
    output = { plan_checks = 4 }
  }
}
