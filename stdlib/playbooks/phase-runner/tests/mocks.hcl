# The happy path of stdlib:phase-runner, shared by every test file here
# (include = ["mocks.hcl"]): each agent answers as a passing phase needs,
# and the git steps a scratch directory cannot run (bookkeeping, result)
# succeed. A test file mocks over it what its tests are about.

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

mock "execute_task" {
  output = { tasks_completed = "1/1", tasks_failed = "0/1", commit_shas = ["e5f6a7b"], evidence = [], deviations = [] }
}

mock "mini_verify" {
  output = { task_id = "01-01", pass = true, criteria_results = [{ criterion = "tests pass", status = "pass" }], concerns = [], commands_run = ["go test ./... -> ok"] }
}

mock "task_debug" {
  output = { fixed = false, changes = [], commits = [], remaining_issues = ["still failing"], failure_categories = [] }
}

mock "batch_mini_verify" {
  output = { task_id = "01-01", pass = true, criteria_results = [{ criterion = "tests pass", status = "pass" }], concerns = [], commands_run = ["go test ./... -> ok"] }
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

# The commit of the phase directory's bookkeeping before a rollback (a
# git command: the scratch directory is no repository).
mock "bookkeeping" {
  exit_code = 0
}

mock "result" {
  output = { sha = "f00dfeed", branch = "main" }
}
