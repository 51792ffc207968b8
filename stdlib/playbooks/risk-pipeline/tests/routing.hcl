# Risk routing (spec/protocols.md#risk-pipeline): the
# keyword lists, case-insensitive, first list wins, unknown is HIGH; and
# the --risk and --stage overrides.

include = ["mocks.hcl"]

mock "execution" {
  output = { success = true, summary = "Done.", files_changed = ["a.py"] }
}

mock "ship" {
  output = { success = true, skipped = true, summary = "No docs to update." }
}

test "medium risk starts at planning" {
  inputs = { task = "Add a settings COMPONENT" }
  expect {
    status = "completed"
    path   = ["assess", "planning", "execution", "pre_verify", "gate_command", "gate_command", "verification", "ship", "report", "latest"]
    output = { risk = "medium", start_stage = "planning" }
  }
}

test "high keywords win over low ones" {
  inputs = { task = "Fix the DATABASE migration typo" }
  expect {
    status = "completed"
    visits = { discovery = 1, planning = 1 }
    output = { risk = "high", risk_source = "keywords" }
  }
}

test "no keyword is high, and the report says so" {
  inputs = { task = "Make it faster" }
  expect {
    status = "completed"
    visits = { discovery = 1 }
    output = { risk = "high", risk_source = "no keyword matched: HIGH by default (fail-safe)" }
  }
}

test "risk override" {
  inputs = { task = "Add JWT authentication endpoint", risk = "LOW" }
  expect {
    status = "completed"
    visits = { discovery = 0, planning = 0, execution = 1 }
    output = { risk = "low", risk_source = "override (--risk)", start_stage = "execution" }
  }
}

# --stage verification still runs the mandatory pre-verify gates.
test "stage override: verification" {
  inputs = { task = "Fix typo in README.md", stage = "verification" }
  expect {
    status = "completed"
    path   = ["assess", "pre_verify", "gate_command", "gate_command", "verification", "ship", "report", "latest"]
    output = { risk = "low", start_stage = "verification" }
  }
}

test "stage override: ship" {
  inputs = { task = "Fix typo in README.md", stage = "ship" }
  expect {
    status = "completed"
    path   = ["assess", "ship", "report", "latest"]
  }
}

test "one gate command" {
  inputs = { task = "Fix typo", gate_commands = ["make lint"] }
  expect {
    status = "completed"
    visits = { gate_command = 1 }
    output = { gates = [{ command = "make lint", passed = true, error = "" }] }
  }
}
