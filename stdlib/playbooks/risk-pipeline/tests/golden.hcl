# The protocol's two golden paths: apl test stdlib:risk-pipeline.
#
# The shared mocks (mocks.hcl) are the happy path, with this file's own
# summaries over them; each test mocks what it changes. The gate commands
# are mocked to pass; the report and latest steps (call builtins) run for
# real in the test's scratch directory.

include = ["mocks.hcl"]

mock "discovery" {
  output = { success = true, summary = "Auth lives in src/api; no JWT yet." }
}

mock "planning" {
  output = { success = true, plan = "1. Add src/api/auth.py. 2. Test it.", summary = "Add a JWT endpoint with tests." }
}

mock "verification" {
  output = { approved = true, issues = [], summary = "Looks right." }
}

mock "ship" {
  output = { success = true, skipped = false, summary = "CHANGELOG.md updated." }
}

# Golden path 1: INIT -> risk=LOW -> EXECUTION -> PRE_VERIFY -> VERIFICATION -> SHIP -> DONE.
test "golden path 1: low risk starts at execution" {
  inputs = { task = "Fix typo in README.md" }
  expect {
    status = "completed"
    path   = ["assess", "execution", "pre_verify", "gate_command", "gate_command", "verification", "ship", "report", "latest"]
    output = {
      risk        = "low"
      risk_source = "keywords"
      start_stage = "execution"
      status      = "success"
      exit_reason = ""
      latest      = ".factory/reports/latest"
      gates = [
        { command = "ruff check .", passed = true, error = "" },
        { command = "mypy .", passed = true, error = "" },
      ]
    }
  }
}

# Golden path 2: INIT -> risk=HIGH -> DISCOVERY -> PLANNING -> EXECUTION ->
# PRE_VERIFY -> VERIFICATION -> SHIP -> DONE.
test "golden path 2: high risk runs every stage" {
  inputs = { task = "Add JWT authentication endpoint" }
  expect {
    status = "completed"
    path   = ["assess", "discovery", "planning", "execution", "pre_verify", "gate_command", "gate_command", "verification", "ship", "report", "latest"]
    output = {
      risk        = "high"
      start_stage = "discovery"
      status      = "success"
      latest      = ".factory/reports/latest"
    }
  }
}
