# A phase that fails, over the happy path (mocks.hcl): verification finds
# a compile error, each debug attempt leaves one, and a rollback goes to
# a diagnostic branch. outcomes.hcl starts every test from it; a test
# elsewhere includes it.

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

mock "debug" {
  outputs = [
    { fixed = false, changes = ["tried a cast"], commits = ["c1"], remaining_issues = ["loader.go:10 still does not compile"], failure_categories = [] },
    { fixed = false, changes = ["tried an import"], commits = ["c2"], remaining_issues = ["loader.go:12 still does not compile"], failure_categories = [] },
    { fixed = false, changes = ["tried a rewrite"], commits = ["c3"], remaining_issues = ["loader.go:14 still does not compile"], failure_categories = [] },
  ]
}

mock "rollback" {
  output = { branch = "autopilot-diagnostic-phase-6.3", reverted = ["a1b2c3d", "b2c3d4e"], commit = "beefcafe" }
}
