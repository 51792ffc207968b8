# Risk routing (spec/protocols.md#risk-pipeline): assess_risk's keyword
# lists, case-insensitive substrings, first list that matches wins, no
# match is HIGH (fail-safe, and said so in the report).

locals {
  task_lower = lower(inputs.task)
  high_match = length(regexall("auth|security|database|api|migration", local.task_lower)) > 0
  med_match  = length(regexall("feature|endpoint|component", local.task_lower)) > 0
  low_match  = length(regexall("typo|fix|docs|comment|readme", local.task_lower)) > 0

  assessed_risk = local.high_match ? "HIGH" : local.med_match ? "MEDIUM" : local.low_match ? "LOW" : "HIGH"
  risk          = lower(inputs.risk) == "auto" ? local.assessed_risk : upper(inputs.risk)
  risk_source = (lower(inputs.risk) != "auto" ? "override (--risk)"
    : local.high_match || local.med_match || local.low_match ? "keywords"
  : "no keyword matched: HIGH by default (fail-safe)")

  # route_by_risk, and --stage over it.
  stage_names = ["discovery", "planning", "execution", "verification", "ship"]
  start_stage = lower(inputs.stage) != "auto" ? lower(inputs.stage) : lookup({ HIGH = "discovery", MEDIUM = "planning", LOW = "execution" }, local.risk, "discovery")
  start       = lookup({ discovery = 1, planning = 2, execution = 3, verification = 4, ship = 5 }, local.start_stage, 1)

  # The default gates are Python's (ruff, mypy): on any other project they
  # fail, so their failure says which input to set.
  default_gates      = join("\n", inputs.gate_commands) == "ruff check .\nmypy ."
  default_gates_hint = ". These are the default gates, ruff and mypy, for Python projects: set the input gate_commands to your project's checks, e.g. --gate-commands '[\"make lint\", \"make test\"]'"
}
