# Tests of triage routing, the per-task execute loop, the scope
# split and the human-verify checkpoint. The shared mocks (mocks.hcl) are
# the happy path; PLAN.md and the roadmap are mocked reads.

include = ["mocks.hcl"]

test "triage routes to verify_only above 80 percent" {
  inputs = { phase_id = "6.3", roadmap_path = "ROADMAP.md" }
  mock "triage_source" {
    output = { exists = true, content = "## Phase 6.2\n- other -- verified by: `false`\n## Phase 6.3: loader\n- a -- verified by: `true`\n- b -- verified by: `test -d .`\n- c -- verified by: `echo ok`\n- d -- verified by: `true`\n- e -- verified by: `true`\n## Phase 6.4\n- f -- verified by: `false`\n" }
  }
  expect {
    status = "completed"
    visits = { criterion = 5, research = 0, plan = 0, plan_check = 0, execute = 0, execute_batch = 0, verify = 1, judge = 1, rate = 1 }
    output = { pipeline_steps = {
      preflight  = { status = "pass", agent_spawned = false }
      triage     = { status = "verify_only", agent_spawned = false, pass_ratio = 1 }
      research   = { status = "skipped", agent_spawned = false }
      plan       = { status = "skipped", agent_spawned = false }
      plan_check = { status = "skipped", agent_spawned = false }
      execute    = { status = "skipped", agent_spawned = false }
      verify     = { status = "completed", agent_spawned = true }
      judge      = { status = "completed", agent_spawned = true }
      rate       = { status = "completed", agent_spawned = true }
    } }
  }
}

test "triage routes to full_pipeline at or below 80 percent" {
  inputs = { phase_id = "6.3", roadmap_path = "ROADMAP.md" }
  mock "triage_source" {
    output = { exists = true, content = "### Phase 6.3\n- a -- verified by: `true`\n- b -- verified by: `false`\n" }
  }
  expect {
    status = "completed"
    visits = { criterion = 2, research = 1, plan = 1, execute_batch = 1 }
  }
}

test "per-task execute verifies each task" {
  inputs = { phase_id = "6.3" }
  mock "plan_tasks" {
    output = { exists = true, content = "<task id=\"01-01\" type=\"auto\" complexity=\"simple\">\n  <name>Add the loader</name>\n  <files>loader.go</files>\n  - Loader compiles -- verified by: `go build ./...`\n</task>\n<task id=\"01-02\" type=\"auto\" complexity=\"medium\">\n  <name>Test the loader</name>\n  - Tests pass -- verified by: `go test ./...`\n</task>\n" }
  }
  expect {
    status = "completed"
    visits = { execute = 1, execution_log = 2, execute_task = 2, mini_verify = 2, task_debug = 0, task_log = 2, execute_batch = 0 }
    output = { tasks_completed = "2/2", tasks_failed = "0/2", commit_shas = ["e5f6a7b", "e5f6a7b"] }
  }
}

# A task debugger that ran and timed out spends the attempt: no
# gsd-debugger, the task is verified again.
test "a task debugger timeout spends the attempt" {
  inputs = { phase_id = "6.3" }
  mock "plan_tasks" {
    output = { exists = true, content = "<task id=\"01-01\" type=\"auto\" complexity=\"simple\">\n  <name>Add the loader</name>\n</task>\n" }
  }
  mock "mini_verify" {
    outputs = [
      { task_id = "01-01", pass = false, criteria_results = [{ criterion = "Loader compiles", status = "fail" }], concerns = [], commands_run = ["go build ./... -> error"] },
      { task_id = "01-01", pass = true, criteria_results = [{ criterion = "Loader compiles", status = "pass" }], concerns = [], commands_run = ["go build ./... -> ok"] },
    ]
  }
  mock "task_debug" {
    error      = "autopilot-debugger: timed out after 10m"
    error_kind = "timeout"
  }
  expect {
    status = "completed"
    visits = { task_debug = 1, mini_verify = 2, task_log = 1 }
    agents = { task_debug = "debugger" }
    output = { tasks_completed = "1/1", tasks_failed = "0/1" }
  }
}

# Mocked answers are numbered per item, so this plan has one task.
test "a task still failing after 2 debug attempts is FAILED and the phase goes on" {
  inputs = { phase_id = "6.3" }
  mock "plan_tasks" {
    output = { exists = true, content = "<task id=\"01-01\" type=\"auto\" complexity=\"simple\">\n  <name>Add the loader</name>\n  - Loader compiles -- verified by: `go build ./...`\n</task>\n" }
  }
  mock "mini_verify" {
    outputs = [
      { task_id = "01-01", pass = false, criteria_results = [{ criterion = "Loader compiles", status = "fail", evidence = "loader.go:3 -- syntax error" }], concerns = [], commands_run = ["go build ./... -> error"] },
      { task_id = "01-01", pass = false, criteria_results = [{ criterion = "Loader compiles", status = "fail" }], concerns = [], commands_run = ["go build ./... -> error"] },
      { task_id = "01-01", pass = false, criteria_results = [{ criterion = "Loader compiles", status = "fail" }], concerns = [], commands_run = ["go build ./... -> error"] },
    ]
  }
  expect {
    status = "completed"
    visits = { execute_task = 1, mini_verify = 3, task_debug = 2, task_log = 1, verify = 1 }
    output = {
      tasks_completed = "0/1"
      tasks_failed    = "1/1"
      issues          = ["Task 01-01 FAILED: Task 01-01 still fails after 2 debug attempts: Loader compiles"]
    }
  }
}

test "more than 5 complex tasks is a split request" {
  inputs = { phase_id = "6.3" }
  mock "plan_tasks" {
    output = { exists = true, content = "<task id=\"01-01\" type=\"auto\" complexity=\"complex\">\n  <name>Task 1</name>\n</task>\n<task id=\"01-02\" type=\"auto\" complexity=\"complex\">\n  <name>Task 2</name>\n</task>\n<task id=\"01-03\" type=\"auto\" complexity=\"complex\">\n  <name>Task 3</name>\n</task>\n<task id=\"01-04\" type=\"auto\" complexity=\"complex\">\n  <name>Task 4</name>\n</task>\n<task id=\"01-05\" type=\"auto\" complexity=\"complex\">\n  <name>Task 5</name>\n</task>\n<task id=\"01-06\" type=\"auto\" complexity=\"complex\">\n  <name>Task 6</name>\n</task>\n" }
  }
  expect {
    status = "split_request"
    visits = { execute = 0, execute_batch = 0, verify = 0, postmortem = 0 }
    output = { status = "split_request", recommendation = "proceed", summary = "Phase scope too large. Recommending split into 2 sub-phases." }
  }
}

test "more than 8 tasks falls back to batch execution" {
  inputs = { phase_id = "6.3" }
  mock "plan_tasks" {
    output = { exists = true, content = "<task id=\"01-01\" type=\"auto\" complexity=\"simple\">\n</task>\n<task id=\"01-02\" type=\"auto\" complexity=\"simple\">\n</task>\n<task id=\"01-03\" type=\"auto\" complexity=\"simple\">\n</task>\n<task id=\"01-04\" type=\"auto\" complexity=\"simple\">\n</task>\n<task id=\"01-05\" type=\"auto\" complexity=\"simple\">\n</task>\n<task id=\"01-06\" type=\"auto\" complexity=\"simple\">\n</task>\n<task id=\"01-07\" type=\"auto\" complexity=\"simple\">\n</task>\n<task id=\"01-08\" type=\"auto\" complexity=\"simple\">\n</task>\n<task id=\"01-09\" type=\"auto\" complexity=\"simple\">\n</task>\n" }
  }
  expect {
    status = "completed"
    visits = { execute = 0, execute_batch = 1, mini_verify = 0 }
  }
}

test "unresolved human-verify checkpoint needs a person" {
  inputs = { phase_id = "6.3" }
  mock "plan_tasks" {
    output = { exists = true, content = "<task id=\"02-01\" type=\"auto\" complexity=\"simple\">\n  <name>Add the panel</name>\n</task>\n<task id=\"02-02\" type=\"checkpoint:human-verify\" complexity=\"simple\">\n  <name>Check the drag</name>\n</task>\n" }
  }
  mock "verify" {
    output = {
      pass                  = true
      automated_checks      = { compile = { status = true }, lint = { status = true } }
      criteria_results      = []
      commands_run          = ["npm run build -> ok"]
      failures              = []
      failure_categories    = []
      autonomous_confidence = 4
      deferral_evidence     = [{ criterion = "drag feels smooth", methods_attempted = ["read DragPanel.tsx"], why_insufficient = "animation timing" }]
    }
  }
  expect {
    status = "needs_human_verification"
    output = { human_verify_justification = { checkpoint_task_id = "02-02", task_description = "Check the drag", auto_tasks_passed = 1, auto_tasks_total = 1 } }
  }
}

test "triage reads the criteria of an existing PLAN.md" {
  inputs = { phase_id = "6.3", existing_plan = true }
  mock "triage_source" {
    output = { exists = true, content = "<task id=\"01-01\" type=\"auto\" complexity=\"simple\">\n  - [x] Shell exists -- verified by: `true`\n  1. Dir exists -- verified by: `test -d .`\n</task>\n" }
  }
  expect {
    status = "completed"
    visits = { criterion = 2, research = 0, plan = 0, plan_check = 0, verify = 1 }
    output = { pipeline_steps = {
      preflight  = { status = "pass", agent_spawned = false }
      triage     = { status = "verify_only", agent_spawned = false, pass_ratio = 1 }
      research   = { status = "skipped", agent_spawned = false }
      plan       = { status = "skipped", agent_spawned = false }
      plan_check = { status = "skipped", agent_spawned = false }
      execute    = { status = "skipped", agent_spawned = false }
      verify     = { status = "completed", agent_spawned = true }
      judge      = { status = "completed", agent_spawned = true }
      rate       = { status = "completed", agent_spawned = true }
    } }
  }
}

test "a roadmap without verifiable criteria runs the full pipeline" {
  inputs = { phase_id = "6.3", roadmap_path = "ROADMAP.md" }
  mock "triage_source" {
    output = { exists = true, content = "## Phase 6.31: other\n- a -- verified by: `true`\n## Phase 6.3: loader\n- The loader works.\n" }
  }
  expect {
    status = "completed"
    visits = { criterion = 0, research = 1 }
  }
}

test "a plan touching more than 10 files is a split request" {
  inputs = { phase_id = "6.3", phase_name = "loader" }
  mock "plan_tasks" {
    output = { exists = true, content = "<task id=\"01-01\" type=\"auto\" complexity=\"simple\">\n  <name>One</name>\n  <files>a.go, b.go, c.go, d.go, e.go, f.go</files>\n</task>\n<task id=\"01-02\" type=\"auto\" complexity=\"medium\">\n  <name>Two</name>\n  <files>g.go h.go i.go j.go k.go</files>\n</task>\n" }
  }
  expect {
    status = "split_request"
    visits = { execute = 0, verify = 0 }
    output = {
      alignment_score = null
      split_details = {
        reason = "the plan touches 11 files (more than 10)"
        recommended_sub_phases = [{
          sub_phase_id         = "6.3a"
          name                 = "loader (part 1 of 1)"
          scope                = "01-01: One; 01-02: Two"
          issues               = ["01-01", "01-02"]
          estimated_complexity = "medium"
        }]
        total_sub_phases     = 1
        original_issue_count = 2
      }
    }
  }
}

test "remediation feedback over 4 files is a split request" {
  inputs = {
    phase_id          = "6.3"
    remediation_cycle = 1
    remediation_feedback = [
      "src/loader.go:12 ignores errors", "cache.go:40 leaks", "src/api/handler.ts misses a check",
      "README.md:3 is stale", "docs/usage.md has no example",
    ]
  }
  expect {
    status = "split_request"
    visits = { research = 0, plan = 0, execute_batch = 0 }
    output = {
      summary = "Phase scope too large. Recommending split into 2 sub-phases."
      split_details = { reason = "remediation feedback has 5 issues spanning 5 files", total_sub_phases = 2, original_issue_count = 5, recommended_sub_phases = [
        { sub_phase_id = "6.3a", name = "Phase 6.3 (part 1 of 2)", scope = "src/loader.go:12 ignores errors; cache.go:40 leaks; src/api/handler.ts misses a check", issues = ["src/loader.go:12 ignores errors", "cache.go:40 leaks", "src/api/handler.ts misses a check"], estimated_complexity = "medium" },
        { sub_phase_id = "6.3b", name = "Phase 6.3 (part 2 of 2)", scope = "README.md:3 is stale; docs/usage.md has no example", issues = ["README.md:3 is stale", "docs/usage.md has no example"], estimated_complexity = "medium" },
      ] }
    }
  }
}

test "a task's debug falls back to gsd-debugger" {
  inputs = { phase_id = "6.3" }
  mock "plan_tasks" {
    output = { exists = true, content = "<task id=\"01-01\" type=\"auto\" complexity=\"simple\">\n  <name>Add the loader</name>\n</task>\n" }
  }
  mock "mini_verify" {
    outputs = [
      { task_id = "01-01", pass = false, criteria_results = [{ criterion = "Loader compiles", status = "fail" }], concerns = [], commands_run = ["go build ./... -> error"] },
      { task_id = "01-01", pass = true, criteria_results = [{ criterion = "Loader compiles", status = "pass" }], concerns = [], commands_run = ["go build ./... -> ok"] },
    ]
  }
  mock "task_debug" {
    agent "debugger" {
      error      = "autopilot-debugger: not installed"
      error_kind = "unavailable"
    }
    agent "gsd_debugger" {
      output = { fixed = true, changes = ["fixed it"], commits = ["f1"], remaining_issues = [], failure_categories = [] }
    }
  }
  expect {
    status = "completed"
    visits = { task_debug = 1, mini_verify = 2, task_log = 1 }
    agents = { task_debug = "gsd_debugger" }
    output = { tasks_completed = "1/1", tasks_failed = "0/1" }
  }
}

# Mocked answers are numbered per item: every task gets the failing one.
test "batch execution mini-verifies each task after" {
  inputs = { phase_id = "6.3" }
  mock "plan_tasks" {
    output = { exists = true, content = join("", [for i in range(1, 10) : "<task id=\"01-0${i}\" type=\"auto\" complexity=\"simple\">\n  <name>Task ${i}</name>\n</task>\n"]) }
  }
  mock "batch_mini_verify" {
    output = { task_id = "t", pass = false, criteria_results = [{ criterion = "file exists", status = "fail" }], concerns = [], commands_run = ["test -f a -> 1"] }
  }
  expect {
    status = "completed"
    visits = { execute = 0, execute_batch = 1, batch_verify = 1, batch_mini_verify = 9, batch_task_log = 9 }
    output = { issues = [for i in range(1, 10) : "Task 01-0${i} FAILED: Task 01-0${i} fails its mini-verification: file exists"] }
  }
}

test "a checkpoint the verifier resolves completes" {
  inputs = { phase_id = "6.3" }
  mock "plan_tasks" {
    output = { exists = true, content = "<task id=\"02-01\" type=\"auto\" complexity=\"simple\">\n  <name>Add the panel</name>\n</task>\n<task id=\"02-02\" type=\"checkpoint:human-verify\" complexity=\"simple\">\n  <name>Check the drag</name>\n</task>\n" }
  }
  mock "verify" {
    output = {
      pass                  = true
      automated_checks      = { compile = { status = true }, lint = { status = true } }
      criteria_results      = []
      commands_run          = ["npm run build -> ok"]
      failures              = []
      failure_categories    = []
      autonomous_confidence = 7
      deferral_evidence     = []
    }
  }
  expect {
    status = "completed"
    visits = { execute_task = 1 }
    output = { human_verify_justification = null }
  }
}

test "a plan of checkpoints only needs a person, with no score" {
  inputs = { phase_id = "6.3" }
  mock "plan_tasks" {
    output = { exists = true, content = "<task id=\"03-01\" type=\"checkpoint:human-verify\" complexity=\"simple\">\n  <name>Check the colours</name>\n</task>\n" }
  }
  mock "verify" {
    output = {
      pass                  = true
      automated_checks      = { compile = { status = "n/a" }, lint = { status = "n/a" } }
      criteria_results      = []
      commands_run          = ["ls -> ok"]
      failures              = []
      failure_categories    = []
      autonomous_confidence = 3
      deferral_evidence     = [{ criterion = "colours match", why_insufficient = "needs eyes" }]
    }
  }
  expect {
    status = "needs_human_verification"
    visits = { execute = 0, execute_batch = 0, verify = 1 }
    output = {
      alignment_score            = null
      automated_checks           = {}
      commit_shas                = []
      human_verify_justification = { checkpoint_task_id = "03-01", task_description = "Check the colours", auto_tasks_passed = 0, auto_tasks_total = 0 }
    }
  }
}

# Context exhaustion: the verifier's answer could not be cut
# down to its budget (kind "budget"): HANDOFF.md is written before the
# post-mortem, and the phase halts with the protocol's issue.
test "context exhaustion writes HANDOFF.md and halts" {
  inputs = { phase_id = "6.3" }
  mock "plan_tasks" {
    output = { exists = true, content = "<task id=\"01-01\" type=\"auto\" complexity=\"simple\">\n  <name>Add the loader</name>\n  <files>loader.go</files>\n</task>\n<task id=\"01-02\" type=\"auto\" complexity=\"medium\">\n  <name>Test the loader</name>\n</task>\n" }
  }
  mock "verify" {
    error      = "budget \"verify\": the answer's JSON is truncated"
    error_kind = "budget"
  }
  expect {
    status         = "failed"
    recommendation = ""
    visits         = { verify = 1, judge = 0, handoff = 1, postmortem = 1 }
    output = {
      recommendation = "halt"
      issues         = ["context_exhaustion: partial progress saved to HANDOFF.md"]
    }
  }
}

test "a debugger out of budget halts with HANDOFF.md" {
  inputs = { phase_id = "6.3" }
  mock "verify" {
    output = {
      pass               = false
      automated_checks   = { compile = { status = false }, lint = { status = true } }
      criteria_results   = []
      commands_run       = ["go test ./... -> FAIL"]
      failures           = ["a test fails"]
      failure_categories = []
    }
  }
  mock "debug" {
    error      = "limits.max_tokens: the run used 210000 tokens (max 200000)"
    error_kind = "budget"
  }
  expect {
    status         = "failed"
    recommendation = "halt"
    visits         = { debug = 1, verify = 1, handoff = 1 }
    agents         = { debug = "debugger" }
    output         = { recommendation = "halt" }
  }
}

test "a failure that is not exhaustion writes no HANDOFF.md" {
  inputs = { phase_id = "6.3" }
  mock "verify" {
    error      = "gsd-verifier: exit status 1"
    error_kind = "exit_status"
  }
  expect {
    status = "failed"
    visits = { handoff = 0, postmortem = 1 }
  }
}
