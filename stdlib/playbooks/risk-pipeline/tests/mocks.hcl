# Shared by every test file of stdlib:risk-pipeline (include =
# ["mocks.hcl"]): every stage succeeds and every gate command passes.
# Each file mocks over it what its tests are about.

mock "discovery" {
  output = { success = true, summary = "Found it." }
}

mock "planning" {
  output = { success = true, plan = "Do it.", summary = "Do it." }
}

mock "execution" {
  output = { success = true, summary = "Done.", files_changed = ["src/api/auth.py"] }
}

mock "gate_command" {
  exit_code = 0
}

mock "verification" {
  output = { approved = true, issues = [], summary = "Fine." }
}

mock "ship" {
  output = { success = true, skipped = false, summary = "Updated." }
}
