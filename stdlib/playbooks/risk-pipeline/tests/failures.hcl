# The protocol's failure matrix, one test per row, with the exit
# code each status maps to in exit_codes; and the re-verify loop.

include = ["mocks.hcl"]

# Row 1: a pre-flight gate fails -> abort before stage 4 -> exit 4.
test "matrix 1: failing pre-verify gate exits 4" {
  inputs = { task = "Fix typo in README.md" }
  mock "gate_command" {
    exit_code = 127
    output    = ""
  }
  expect {
    status         = "failed"
    recommendation = "gate_failed"
    path           = ["assess", "execution", "pre_verify", "gate_command", "gate_command", "report", "latest"]
    visits         = { verification = 0, ship = 0 }
    output         = { status = "failed", exit_reason = "gate_failed" }
  }
}

# Row 2: verification rejected twice -> escalate -> exit 2. The first
# rejection sends the work back to execution with the issues.
test "matrix 2: rejected twice exits 2" {
  inputs = { task = "Fix typo in README.md" }
  mock "verification" {
    output = { approved = false, issues = ["the test is missing"], summary = "No test." }
  }
  expect {
    status         = "failed"
    recommendation = "verification_rejected"
    path = ["assess", "execution", "pre_verify", "gate_command", "gate_command", "verification",
    "execution", "pre_verify", "gate_command", "gate_command", "verification", "report", "latest"]
    output = { status = "escalated", exit_reason = "verification_rejected" }
  }
}

# Row 3: the model is not available -> exit 3, routed on error_kind.
test "matrix 3: unavailable model exits 3" {
  inputs = { task = "Add JWT authentication endpoint" }
  mock "discovery" {
    error      = "model swe-1-5 not found (HTTP 404)"
    error_kind = "unavailable"
  }
  expect {
    status         = "failed"
    recommendation = "model_unavailable"
    path           = ["assess", "discovery", "report", "latest"]
    output         = { status = "failed", exit_reason = "model_unavailable" }
  }
}

test "matrix 3: rate limited verifier exits 3" {
  inputs = { task = "Fix typo" }
  mock "verification" {
    error      = "too many requests (HTTP 429)"
    error_kind = "rate_limited"
  }
  expect {
    status         = "failed"
    recommendation = "model_unavailable"
    visits         = { verification = 1, ship = 0 }
  }
}

# Row 4: risk assessment fails on an empty task -> exit 5; the report is
# still written.
test "matrix 4: empty task exits 5" {
  inputs = { task = "  " }
  expect {
    status         = "failed"
    recommendation = "risk_assessment_failed"
    path           = ["assess", "report", "latest"]
    output         = { status = "failed", exit_reason = "risk_assessment_failed", latest = ".factory/reports/latest" }
  }
}

# Row 5: stage 3 reports success == false -> abort -> exit 1.
test "matrix 5: execution failure exits 1" {
  inputs = { task = "Add JWT authentication endpoint" }
  mock "execution" {
    output = { success = false, summary = "Could not find the router.", files_changed = [] }
  }
  expect {
    status         = "failed"
    recommendation = "stage_failed"
    path           = ["assess", "discovery", "planning", "execution", "report", "latest"]
    output         = { status = "failed", reason = "execution failed: Could not find the router." }
  }
}

test "a stage whose agent errors exits 1" {
  inputs = { task = "Add a feature" }
  mock "planning" {
    error = "exit status 2: claude crashed"
  }
  expect {
    status         = "failed"
    recommendation = "stage_failed"
    path           = ["assess", "planning", "report", "latest"]
  }
}

test "one rejection, then approved" {
  inputs = { task = "Fix typo in README.md" }
  mock "verification" {
    outputs = [
      { approved = false, issues = ["the test is missing"], summary = "No test." },
      { approved = true, issues = [], summary = "Fine now." },
    ]
  }
  expect {
    status = "completed"
    visits = { execution = 2, pre_verify = 2, verification = 2, ship = 1 }
    output = { status = "success" }
  }
}

# The default gates are Python's: on a repository without ruff (exit 127)
# the reason says which input to set.
test "default gates that fail name the input to set" {
  inputs = { task = "Fix typo in README.md" }
  mock "gate_command" {
    exit_code = 127
    output    = ""
  }
  expect {
    status         = "failed"
    recommendation = "gate_failed"
    output = {
      exit_reason = "gate_failed"
      reason      = "pre-verify gate failed: ruff check .: exit status 127; mypy .: exit status 127. These are the default gates, ruff and mypy, for Python projects: set the input gate_commands to your project's checks, e.g. --gate-commands '[\"make lint\", \"make test\"]'"
    }
  }
}

# Every stage routes its own unavailable model and its own failure, each
# naming the stage.
test "discovery reports no success" {
  inputs = { task = "Add JWT authentication endpoint" }
  mock "discovery" {
    output = { success = false, summary = "The repository has no router." }
  }
  expect {
    status         = "failed"
    recommendation = "stage_failed"
    path           = ["assess", "discovery", "report", "latest"]
    output         = { status = "failed", reason = "discovery failed: The repository has no router." }
  }
}

test "planning's model is unavailable" {
  inputs = { task = "Add JWT authentication endpoint" }
  mock "planning" {
    error      = "model not found (HTTP 404)"
    error_kind = "unavailable"
  }
  expect {
    status         = "failed"
    recommendation = "model_unavailable"
    path           = ["assess", "discovery", "planning", "report", "latest"]
    output         = { exit_reason = "model_unavailable" }
  }
}

test "execution is rate limited" {
  inputs = { task = "Fix typo in README.md" }
  mock "execution" {
    error      = "too many requests (HTTP 429)"
    error_kind = "rate_limited"
  }
  expect {
    status         = "failed"
    recommendation = "model_unavailable"
    path           = ["assess", "execution", "report", "latest"]
  }
}

test "the verifier errors" {
  inputs = { task = "Fix typo in README.md" }
  mock "verification" {
    error = "exit status 1: the verifier crashed"
  }
  expect {
    status         = "failed"
    recommendation = "stage_failed"
    visits         = { verification = 1, ship = 0 }
    output         = { status = "failed", reason = "verification failed: exit status 1: the verifier crashed" }
  }
}

test "ship's model is unavailable" {
  inputs = { task = "Fix typo in README.md" }
  mock "ship" {
    error      = "service unavailable (HTTP 503)"
    error_kind = "unavailable"
  }
  expect {
    status         = "failed"
    recommendation = "model_unavailable"
    visits         = { ship = 1 }
  }
}

test "ship reports no success" {
  inputs = { task = "Fix typo in README.md" }
  mock "ship" {
    output = { success = false, skipped = false, summary = "The docs build broke." }
  }
  expect {
    status         = "failed"
    recommendation = "stage_failed"
    output         = { reason = "ship failed: The docs build broke." }
  }
}

# Where a symlink cannot be made, the report's id goes to latest.txt.
test "latest.txt where no symlink can be made" {
  inputs = { task = "Fix typo in README.md" }
  mock "latest" {
    error = "symlink: operation not permitted"
  }
  expect {
    status = "completed"
    path   = ["assess", "execution", "pre_verify", "gate_command", "gate_command", "verification", "ship", "report", "latest", "latest_txt"]
  }
}
